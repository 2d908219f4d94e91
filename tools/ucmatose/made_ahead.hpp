#pragma once
/// Making the items of many connections (their QPs) ahead of need on a
/// helper thread, so that the thread handling CM events only picks them
/// up: with hundreds of connections in flight, making each QP on that
/// thread would queue every connection's events behind it. A caller that
/// has nothing else to do yet can make the rest beside the helper
/// (make_all).

#include "fabric/base/wait.hpp"

#include <atomic>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <stop_token>
#include <thread>
#include <utility>
#include <vector>

namespace ucmatose {

/// Items 0..count-1, made in order on a helper thread by a maker that must
/// be safe to call from any thread.
template <class T>
class made_ahead {
public:
  using maker = std::function<T(std::size_t k)>;

  made_ahead(std::size_t count, maker make)
      : make_(std::move(make)), items_(count), state_(std::make_unique<std::atomic<int>[]>(count)), count_(count) {
    for (std::size_t k = 0; k < count_; ++k) state_[k].store(idle, std::memory_order_relaxed);
    helper_ = fabric::start_without_signals<std::jthread>([this](const std::stop_token& stop) { run(stop); });
  }

  /// Stops the helper; items nobody took are destroyed.
  ~made_ahead() = default;
  made_ahead(const made_ahead&) = delete;
  made_ahead& operator=(const made_ahead&) = delete;

  /// Item k: the one made ahead (waiting if it is being made right now),
  /// or one made here and now when the helper has not got to it or failed
  /// at it, so that the caller gets the maker's error. Each k is taken once.
  T take(std::size_t k) {
    int expected = idle;
    if (state_[k].compare_exchange_strong(expected, taken, std::memory_order_acq_rel)) return make_(k);
    state_[k].wait(making, std::memory_order_acquire);
    state_[k].store(taken, std::memory_order_relaxed);
    if (!items_[k]) return make_(k);
    return std::move(*items_[k]);
  }

  /// Makes on the calling thread too every item the helper has not begun,
  /// then waits for the ones it is making: on return each item is made, or
  /// left for take() to make again (its maker failed). `stop` is asked
  /// between items (an interrupted run stops here; take() makes the rest).
  template <class Stop>
  void make_all(Stop stop) {
    make_idle(stop);
    for (std::size_t k = 0; k < count_; ++k) state_[k].wait(making, std::memory_order_acquire);
  }

private:
  enum slot : int { idle, making, made, taken };

  /// Makes every item no thread has begun, until `stop` says so.
  template <class Stop>
  void make_idle(Stop stop) {
    for (std::size_t k = 0; k < count_ && !stop(); ++k) {
      int expected = idle;
      if (!state_[k].compare_exchange_strong(expected, making, std::memory_order_acq_rel)) continue;
      try {
        items_[k].emplace(make_(k));
      } catch (...) {
        // Left empty: take() makes it again, on the thread that reports errors.
      }
      state_[k].store(made, std::memory_order_release);
      state_[k].notify_all();
    }
  }

  void run(const std::stop_token& stop) {
    make_idle([&] { return stop.stop_requested(); });
  }

  maker make_;
  std::vector<std::optional<T>> items_;
  std::unique_ptr<std::atomic<int>[]> state_;
  std::size_t count_;
  std::jthread helper_;  // last: stopped and joined before the items go
};

}  // namespace ucmatose
