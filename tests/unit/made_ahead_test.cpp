#include "ucmatose/made_ahead.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <csignal>
#include <stdexcept>
#include <string>
#include <thread>

namespace {

using ucmatose::made_ahead;

TEST(MadeAhead, EveryItemIsMadeOnceAndTakenInAnyOrder) {
  std::atomic<int> calls{0};
  made_ahead<std::string> items(50, [&](std::size_t k) {
    ++calls;
    return std::to_string(k);
  });
  for (std::size_t k = 50; k-- > 0;) EXPECT_EQ(items.take(k), std::to_string(k));
  EXPECT_EQ(calls.load(), 50);
}

TEST(MadeAhead, ItemsAreMadeOnTheHelperThread) {
  auto caller = std::this_thread::get_id();
  std::atomic<int> made{0};
  made_ahead<std::thread::id> items(3, [&](std::size_t) {
    ++made;
    return std::this_thread::get_id();
  });
  while (made < 3) std::this_thread::yield();
  for (std::size_t k = 0; k < 3; ++k) EXPECT_NE(items.take(k), caller);
}

TEST(MadeAhead, AnItemTheHelperHasNotReachedIsMadeByTheCaller) {
  std::atomic<bool> started{false}, release{false};
  auto caller = std::this_thread::get_id();
  made_ahead<std::thread::id> items(2, [&](std::size_t k) {
    // The helper stays on item 0 until the caller has taken item 1.
    if (k == 0) {
      started = true;
      while (!release) std::this_thread::yield();
    }
    return std::this_thread::get_id();
  });
  while (!started) std::this_thread::yield();
  EXPECT_EQ(items.take(1), caller);
  release = true;
  EXPECT_NE(items.take(0), caller);
}

TEST(MadeAhead, MakeAllMakesBesideTheHelperAndReturnsWithEveryItemMade) {
  std::atomic<bool> started{false}, release{false};
  std::atomic<int> calls{0};
  auto caller = std::this_thread::get_id();
  made_ahead<std::thread::id> items(4, [&](std::size_t k) {
    ++calls;
    // The helper stays on item 0 until the caller has made the others.
    if (k == 0) {
      started = true;
      while (!release) std::this_thread::yield();
    }
    return std::this_thread::get_id();
  });
  while (!started) std::this_thread::yield();
  std::thread releaser([&] {
    while (calls < 4) std::this_thread::yield();
    release = true;
  });
  items.make_all([] { return false; });
  releaser.join();
  EXPECT_EQ(calls.load(), 4);
  EXPECT_NE(items.take(0), caller);
  for (std::size_t k = 1; k < 4; ++k) EXPECT_EQ(items.take(k), caller);
  EXPECT_EQ(calls.load(), 4);
}

TEST(MadeAhead, AStoppedMakeAllReturnsAndTakeStillGivesEveryItem) {
  std::atomic<bool> started{false}, release{false};
  std::atomic<int> calls{0};
  made_ahead<int> items(3, [&](std::size_t k) {
    ++calls;
    if (k == 0) {
      started = true;
      while (!release) std::this_thread::yield();
    }
    return static_cast<int>(k);
  });
  while (!started) std::this_thread::yield();
  release = true;
  items.make_all([] { return true; });
  for (std::size_t k = 0; k < 3; ++k) EXPECT_EQ(items.take(k), static_cast<int>(k));
  EXPECT_EQ(calls.load(), 3);
}

TEST(MadeAhead, WhatTheHelperFailedToMakeIsMadeAgainSoThatTheCallerGetsTheError) {
  auto caller = std::this_thread::get_id();
  std::atomic<bool> helper_tried{false};
  made_ahead<int> items(1, [&](std::size_t) -> int {
    if (std::this_thread::get_id() == caller) throw std::runtime_error("caller");
    helper_tried = true;
    throw std::runtime_error("helper");
  });
  while (!helper_tried) std::this_thread::yield();
  try {
    items.take(0);
    FAIL() << "take did not throw";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "caller");
  }
}

TEST(MadeAhead, SignalsStayWithTheCaller) {
  sigset_t before, after;
  pthread_sigmask(SIG_SETMASK, nullptr, &before);
  std::atomic<bool> blocked_in_helper{false}, made{false};
  made_ahead<int> items(1, [&](std::size_t) {
    sigset_t now;
    pthread_sigmask(SIG_SETMASK, nullptr, &now);
    blocked_in_helper = sigismember(&now, SIGINT) == 1 && sigismember(&now, SIGTERM) == 1;
    made = true;
    return 0;
  });
  while (!made) std::this_thread::yield();
  pthread_sigmask(SIG_SETMASK, nullptr, &after);
  EXPECT_TRUE(blocked_in_helper);
  EXPECT_EQ(sigismember(&after, SIGINT), sigismember(&before, SIGINT));
  EXPECT_EQ(sigismember(&after, SIGTERM), sigismember(&before, SIGTERM));
}

TEST(MadeAhead, ItemsNobodyTookAreDestroyedWithIt) {
  auto alive = std::make_shared<int>(0);
  {
    made_ahead<std::shared_ptr<int>> items(20, [&](std::size_t) { return alive; });
    items.take(0);
  }
  EXPECT_EQ(alive.use_count(), 1);
}

}  // namespace
