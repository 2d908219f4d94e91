// fabric-sweep's word of where a rank is: its answer line read as untrusted,
// and a rank's answerer asked over loopback TCP by a waiting peer's hook.
#include "fabric-sweep/rank/presence.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <optional>

#include <memory>
#include <string>
#include <vector>

namespace {

/// A run whose answerers listen on loopback ports of their own for this
/// test process (other tests of the suite run beside it, each a process):
/// a block of ten for each, the run's port and its ranks' answerers up to
/// rank 8, so that two processes never share one.
sweep::run_options loopback_run() {
  sweep::run_options r;
  r.port = 30000 + 10 * static_cast<int>(::getpid() % 3000);
  r.timeout_ms = 2000;
  return r;
}

}  // namespace

TEST(sweep_presence, the_answer_names_the_rank_and_its_step_and_nothing_else_is_one) {
  auto line = sweep::presence_line(3, 17);
  EXPECT_EQ(line, "fabric-sweep 3 17\n");
  EXPECT_EQ(sweep::read_presence(line.substr(0, line.size() - 1), 3), 17);
  EXPECT_FALSE(sweep::read_presence("fabric-sweep 3 17", 4)) << "another rank's answer";
  for (std::string lie : {"", "fabric-sweep", "fabric-sweep 3", "fabric-sweep 3 ", "fabric-sweep 3 -1",
                          "fabric-sweep 3 17x", "fabric-sweep  3 17", "fabric-sweep 3 17 18", "fabric-sweepy 3 17",
                          "fabric-sweep 3 99999999999999999999999", "fabric-sweep \xff\xfe 17", "rping 3 17"})
    EXPECT_FALSE(sweep::read_presence(lie, 3)) << lie;
}

TEST(sweep_presence, each_rank_answers_on_a_port_of_its_own_above_the_run_port) {
  EXPECT_EQ(sweep::presence_port(18515, 0), 18516);
  EXPECT_EQ(sweep::presence_port(18515, 31), 18547);
  EXPECT_FALSE(sweep::presence_port(65535, 0)) << "past the last port: the rank stays silent";
  EXPECT_FALSE(sweep::presence_port(18515, -1));
}

TEST(sweep_presence, a_peer_behind_and_moving_is_on_its_way_one_past_the_pair_is_not) {
  auto r = loopback_run();
  sweep::presence peer(r, 2);
  peer.at(5);
  auto waiting_at_7 = sweep::peer_on_its_way(r, "127.0.0.1", 2, 7);
  EXPECT_TRUE(waiting_at_7()) << "at an earlier round";
  peer.at(6);
  EXPECT_TRUE(waiting_at_7()) << "moved on, still before ours";
  peer.at(7);
  EXPECT_TRUE(waiting_at_7()) << "at our round: coming to the pair";
  peer.at(8);
  EXPECT_FALSE(waiting_at_7()) << "past our pair: it gave up on it";
}

TEST(sweep_presence, a_peer_stuck_at_one_round_is_waited_for_a_bounded_number_of_times) {
  auto r = loopback_run();
  sweep::presence peer(r, 1);
  peer.at(3);
  auto waiting = sweep::peer_on_its_way(r, "127.0.0.1", 1, 9);
  int on_its_way = 0;
  while (waiting() && on_its_way < 100) ++on_its_way;
  EXPECT_EQ(on_its_way, sweep::max_late_rounds + 2);
}

TEST(sweep_presence, nobody_answering_there_is_no_word_of_the_peer) {
  auto r = loopback_run();
  EXPECT_FALSE(sweep::peer_on_its_way(r, "127.0.0.1", 7, 1)()) << "no answerer listens";
  {
    sweep::presence gone(r, 7);
  }
  EXPECT_FALSE(sweep::peer_on_its_way(r, "127.0.0.1", 7, 1)()) << "its answerer went with it";
  sweep::presence other(r, 6);
  // Port base + 1 + 6 asked as rank 5's: the answer is another rank's.
  r.port += 1;
  EXPECT_FALSE(sweep::peer_on_its_way(r, "127.0.0.1", 5, 1)());
}

namespace {

/// Until `seen` says so, or a few seconds passed: the first dials are on a thread of their own.
template <class Seen>
bool eventually(Seen seen) {
  for (int i = 0; i < 500 && !seen(); ++i) ::usleep(10'000);
  return seen();
}

}  // namespace

TEST(sweep_presence, a_peer_that_answered_at_the_start_and_refuses_now_has_left) {
  auto r = loopback_run();
  std::vector<std::string> addrs(4, "127.0.0.1");
  auto peer = std::make_unique<sweep::presence>(r, 2);
  sweep::departures watch(r, addrs, 0, {1, 2, 3});
  ASSERT_TRUE(eventually([&] { return watch.seen_answering(2); }));
  EXPECT_FALSE(watch.why_gone(2)) << "still there";
  peer.reset();
  auto why = watch.why_gone(2);
  ASSERT_TRUE(why) << "its process ended";
  EXPECT_TRUE(why->starts_with("left the sweep")) << *why;
  // Ranks 1 and 3 never answered: their refusals say nothing (a firewall
  // that rejects looks the same).
  EXPECT_FALSE(watch.seen_answering(1));
  EXPECT_FALSE(watch.why_gone(1));
  EXPECT_FALSE(watch.why_gone(3));
}

TEST(sweep_presence, a_peer_past_the_pair_being_met_will_not_come_to_it) {
  // A peer whose side of a pair failed on its own (no device, a size above
  // its MTU) is done with it and moves on: the side still meeting it is
  // told so instead of waiting out its meeting.
  auto r = loopback_run();
  std::vector<std::string> addrs(3, "127.0.0.1");
  sweep::presence peer(r, 2);
  peer.at(4);
  sweep::departures watch(r, addrs, 0, {2});
  ASSERT_TRUE(eventually([&] { return watch.seen_answering(2); }));
  EXPECT_FALSE(watch.why_gone(2, 4)) << "at the pair's round: coming";
  EXPECT_FALSE(watch.why_gone(2, 5)) << "before it";
  peer.at(5);  // done with the pair of round 4
  auto why = watch.why_gone(2, 4);
  ASSERT_TRUE(why);
  EXPECT_TRUE(why->starts_with("moved on past this pair")) << *why;
  EXPECT_FALSE(watch.why_gone(2)) << "asked for no pair: there";
}

namespace {

/// Rank 0 watching rank 1, which answered at the start, and rank 2, which
/// never answered, over loopback. stop() makes rank 1 a stopped process
/// (its kernel still takes connections on its port, nobody answers);
/// wake() has it answer again.
class stopped_peer : public ::testing::Test {
protected:
  void SetUp() override {
    peer_ = std::make_unique<sweep::presence>(run_, 1);
    watch_ = std::make_unique<sweep::departures>(run_, std::vector<std::string>(3, "127.0.0.1"), 0, std::vector<int>{1, 2});
    ASSERT_TRUE(eventually([&] { return watch_->seen_answering(1); }));
  }
  void stop() {
    peer_.reset();
    port_ = fabric::listen_tcp(*sweep::presence_port(run_.port, 1));
  }
  void wake() {
    port_.reset();
    peer_ = std::make_unique<sweep::presence>(run_, 1);
  }

  sweep::run_options run_ = loopback_run();
  std::unique_ptr<sweep::presence> peer_;
  fabric::unique_fd port_;
  std::unique_ptr<sweep::departures> watch_;
};

}  // namespace

TEST_F(stopped_peer, is_gone_once_silent_for_the_silence_limit) {
  stop();
  auto t0 = fabric::clock::now();
  std::optional<std::string> why;
  int questions = 0;
  while (!why && questions < 20) {
    why = watch_->why_gone(1);
    ++questions;
  }
  ASSERT_TRUE(why) << "silent for " << questions << " questions";
  EXPECT_TRUE(why->starts_with("stopped answering")) << *why;
  EXPECT_EQ(watch_->silence_limit(), sweep::departures::min_silence) << "half of a 2 s --timeout is less";
  EXPECT_GE(fabric::clock::now() - t0, watch_->silence_limit()) << "not before the limit";
  EXPECT_GE(questions, 2);
  // Another program on the port of a rank that never answered: its
  // silence says nothing.
  auto other = fabric::listen_tcp(*sweep::presence_port(run_.port, 2));
  EXPECT_FALSE(watch_->seen_answering(2));
  EXPECT_FALSE(watch_->why_gone(2));
}

TEST_F(stopped_peer, an_answer_ends_its_silence) {
  stop();
  EXPECT_FALSE(watch_->why_gone(1)) << "one silence is not enough";
  ::usleep(2'500'000);
  // It answers again (a slow host), then falls silent: the silence starts over.
  wake();
  EXPECT_FALSE(watch_->why_gone(1));
  stop();
  EXPECT_FALSE(watch_->why_gone(1)) << "silent for a second, not since the first silence";
  EXPECT_FALSE(watch_->why_gone(1)) << "silent for two seconds";
}

TEST_F(stopped_peer, silences_far_apart_are_not_one) {
  stop();
  EXPECT_FALSE(watch_->why_gone(1)) << "a pair's first question: one silence";
  ::usleep(3'500'000);  // the pair met all the same; the next one comes later
  EXPECT_FALSE(watch_->why_gone(1)) << "another pair's first question: a silence of its own";
}

TEST(sweep_presence, a_silence_is_half_a_timeout_long_three_seconds_at_least) {
  auto r = loopback_run();
  r.timeout_ms = 40000;
  EXPECT_EQ(sweep::departures(r, {"127.0.0.1"}, 0, {}).silence_limit(), std::chrono::milliseconds(20000));
}

TEST(sweep_presence, a_wait_on_many_finds_every_stopped_peer_however_long_a_pass_takes) {
  // Rank 0 waiting for ranks 1-6 after the rounds: 1 to 5 stopped (a pass
  // over them takes five silent questions of a second each: one peer's
  // questions are further apart than two of one meeting may be), 6 answers.
  auto r = loopback_run();
  constexpr int stopped_ranks = 5;
  std::vector<std::unique_ptr<sweep::presence>> ranks;
  for (int k = 1; k <= stopped_ranks + 1; ++k) ranks.push_back(std::make_unique<sweep::presence>(r, k));
  std::vector<int> peers{1, 2, 3, 4, 5, 6};
  sweep::departures watch(r, std::vector<std::string>(7, "127.0.0.1"), 0, peers);
  ASSERT_TRUE(eventually([&] { return watch.seen_answering(1) && watch.seen_answering(6); }));
  std::vector<fabric::unique_fd> stopped;
  for (int k = 1; k <= stopped_ranks; ++k) {
    ranks[static_cast<std::size_t>(k - 1)].reset();
    stopped.push_back(fabric::listen_tcp(*sweep::presence_port(r.port, k)));
  }
  std::vector<std::pair<int, std::string>> gone;
  auto until = fabric::deadline::after(std::chrono::seconds(30));
  int passes = 0;
  while (gone.empty() && !until.expired()) {
    gone = watch.gone_of(peers, until);
    ++passes;
  }
  ASSERT_EQ(gone.size(), static_cast<std::size_t>(stopped_ranks)) << "after " << passes << " passes";
  for (int k = 0; k < stopped_ranks; ++k) {
    const auto& [rank, why] = gone[static_cast<std::size_t>(k)];
    EXPECT_EQ(rank, k + 1);
    EXPECT_TRUE(why.starts_with("stopped answering")) << why;
  }
  EXPECT_EQ(passes, 2) << "the second pass's questions make one silence with the first's";
}
