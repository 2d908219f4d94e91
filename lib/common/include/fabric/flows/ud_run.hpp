#pragma once
/// The run of a UD test, as udaddy and mckey share it: its members (an
/// rdma_cm id, a UD endpoint and its traffic each: udaddy's connections,
/// mckey's QPs) settled through their CM events until each is ready or
/// failed, the run's first failure kept and thrown, sends checked for a
/// stalled queue, and the wait for every member's datagrams, in which the
/// first member to stall ends the wait for all. Every wait is one of
/// --timeout (wait_limit). Owns the members.

#include "fabric/base/at_exit.hpp"
#include "fabric/base/error.hpp"
#include "fabric/base/idle_deadline.hpp"
#include "fabric/base/wait_limit.hpp"
#include "fabric/cm/cm.hpp"
#include "fabric/cm/ud.hpp"
#include "fabric/flows/ud_traffic.hpp"

#include <fmt/format.h>

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

namespace fabric {

/// One member of a UD test. A tool's member derives from it and keeps its
/// own outcome (ready, failed, the counts); what it adds (a destination's
/// AH, a multicast membership) is destroyed before these members: an AH
/// before the endpoint's PD, a membership before the QP and the id.
class ud_member {
public:
  ud_member() = default;
  ud_member(const ud_member&) = delete;
  ud_member& operator=(const ud_member&) = delete;
  virtual ~ud_member() = default;

  std::size_t index = 0;                ///< its place in the run, from 0
  cm_id id;                             ///< destroyed last
  std::unique_ptr<ud_endpoint> ep;
  std::unique_ptr<ud_traffic> traffic;  ///< destroyed before its endpoint

  /// Ready for traffic (connected, joined).
  [[nodiscard]] virtual bool ready() const = 0;
  /// Failed. A member neither ready nor failed is pending.
  [[nodiscard]] virtual bool failed() const = 0;
  /// Marks it failed for `e`; false when it had failed already.
  virtual bool fail(const error& e) = 0;
  /// Takes its traffic's counts into its outcome.
  virtual void count() = 0;
};

/// A member whose outcome is its row of the tool's results (udaddy's
/// connections, mckey's QPs): any row with a state ("failed" when it
/// failed), fail(error) and the UD counts, and strangers where it counts
/// them. The tool's member says which state is ready.
template <class Result>
class ud_result_member : public ud_member {
public:
  std::vector<Result>* results = nullptr;  ///< the report's rows, `index` this member's

  [[nodiscard]] Result& result() const { return (*results)[index]; }
  [[nodiscard]] bool failed() const override { return result().state == "failed"; }
  bool fail(const error& e) override { return result().fail(e); }
  void count() override {
    auto& r = result();
    r.sent = traffic->sent();
    r.received = traffic->received();
    r.verify_errors = traffic->verify_errors();
    r.oversize = traffic->oversize();
    if constexpr (requires { r.strangers; }) r.strangers = traffic->strangers();
  }
};

/// The members of one UD test and what is done with all of them alike.
template <std::derived_from<ud_member> Member>
class ud_run {
public:
  explicit ud_run(const wait_limit& limit) : limit_(limit) {}

  /// A new member, indexed by its place in the run.
  Member& add() {
    auto& m = *members_.emplace_back(std::make_unique<Member>());
    m.index = members_.size() - 1;
    return m;
  }
  [[nodiscard]] const std::vector<std::unique_ptr<Member>>& members() const noexcept { return members_; }
  [[nodiscard]] std::size_t size() const noexcept { return members_.size(); }

  /// Marks `m` failed for `e`; the run's first failure is kept, for
  /// settle() to throw.
  void fail(Member& m, const error& e) {
    if (m.fail(e) && !first_failure_) first_failure_ = e;
  }

  /// Hands each event of `ch` to `on_event(member, event)`, the member
  /// being the one its id carries as context, until every member reached
  /// its end: on_event returns true when its member did (ready or
  /// failed); an error it throws fails that member alone. When no event
  /// comes for a wait of --timeout, each member still pending fails with
  /// error(timeout, why_pending(member)). Then the run's first failure,
  /// if any, is thrown.
  template <class OnEvent, class WhyPending>
  void settle(cm_channel& ch, OnEvent on_event, WhyPending why_pending) {
    bool settled = settle_each<Member>(ch, members_.size(), limit_.each(), on_event,
                                       [this](Member& m, const error& e) { fail(m, e); });
    if (!settled)
      for (auto& m : members_)
        if (!m->ready() && !m->failed()) fail(*m, error(exit_code::timeout, why_pending(*m)));
    if (first_failure_) throw *first_failure_;
  }

  /// Sends `count` messages from `m` to `to`; its counts are taken however
  /// the sends end: when its send queue stalls for --timeout, which throws
  /// error(timeout), and on Ctrl-C.
  void send(Member& m, const ud_destination& to, std::uint64_t count, idle_deadline& until) {
    at_exit taken{[&m] { m.count(); }};
    if (!m.traffic->send(to, count, until))
      throw error(exit_code::timeout, fmt::format("{}: send queue stalled", m.traffic->what()));
  }

  /// Waits until every member's sends completed; throws error(timeout)
  /// naming the first that did not.
  void finish_sends(idle_deadline& until) {
    for (auto& m : members_)
      if (m->traffic && !m->traffic->finish_sends(until))
        throw error(exit_code::timeout, fmt::format("{}: sends did not complete", m->traffic->what()));
  }

  /// Waits for every ready member's messages, then takes its counts. A
  /// member that stalls for --timeout ends the wait for all: the others'
  /// datagrams are already in their CQs, and are only drained. `also` is
  /// watched while waiting (ud_traffic::receive_all). The counts are taken
  /// however the wait ends.
  void receive(idle_deadline& until, const watched_fd& also = {}) {
    // On Ctrl-C too: the report says what came.
    at_exit taken{[this] {
      for (auto& m : members_)
        if (m->traffic && m->ready()) m->count();
    }};
    bool waiting = true;
    for (auto& m : members_) {
      if (!m->traffic || !m->ready()) continue;
      if (waiting)
        waiting = m->traffic->receive_all(until, also);
      else
        m->traffic->drain();
    }
  }

private:
  wait_limit limit_;
  std::optional<error> first_failure_;
  std::vector<std::unique_ptr<Member>> members_;
};

}  // namespace fabric
