#include "fabric/base/meet.hpp"
#include "fabric/base/wait_limit.hpp"
#include "fabric/cm/cm.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <limits>
#include <string_view>

namespace {
using namespace std::chrono_literals;
using fabric::wait_limit;
}  // namespace

TEST(wait_limit, each_wait_gets_the_whole_limit_from_when_it_starts) {
  wait_limit limit(40ms);
  EXPECT_EQ(limit.each(), 40ms);
  EXPECT_EQ(limit.ms(), 40);
  auto first = limit.next();
  EXPECT_FALSE(first.expired());
  EXPECT_GT(first.poll_timeout(), 30);
  auto started = fabric::clock::now() - 50ms;
  EXPECT_TRUE(limit.next_from(started).expired());
  EXPECT_EQ(limit.idle().idle(), 40ms);
}

TEST(wait_limit, a_check_bounded_as_a_whole_ends_every_wait_by_its_deadline) {
  auto until = fabric::deadline::after(1h);
  auto limit = wait_limit::by(until);
  EXPECT_GT(limit.each(), 59min);
  EXPECT_LE(limit.each(), 60min);
  EXPECT_TRUE(wait_limit::by(fabric::deadline::after(0ms)).next().expired());
}

TEST(wait_limit, c_calls_get_at_least_a_millisecond_and_at_most_an_int) {
  EXPECT_EQ(wait_limit::by(fabric::deadline::after(0ms)).ms(), 1);
  EXPECT_EQ(wait_limit::by(fabric::deadline::never()).ms(), std::numeric_limits<int>::max());
  EXPECT_EQ(wait_limit::by(fabric::deadline::never()).next().poll_timeout(), -1);
}

TEST(wait_limit, bounded_one_by_one_and_as_a_whole_each_wait_ends_at_the_first_bound) {
  auto limit = wait_limit(1h).until(fabric::deadline::after(40ms));
  EXPECT_LE(limit.each(), 40ms);
  EXPECT_FALSE(limit.expired());
  EXPECT_TRUE(wait_limit(1h).until(fabric::deadline::after(0ms)).expired());
  auto short_waits = wait_limit(40ms).until(fabric::deadline::after(1h));
  EXPECT_EQ(short_waits.each(), 40ms);
  EXPECT_LE(short_waits.next().poll_timeout(), 40);
}

TEST(pair_bounds, the_meeting_and_the_work_each_wait_at_most_one_timeout) {
  // --pair-timeout 1 h, --timeout 40 ms: no single wait of a pair outlasts 40 ms.
  auto bounds = fabric::pair_bounds::from_now(1h, 1h, 40ms);
  EXPECT_EQ(bounds.meeting_until(bounds.meet).each(), 40ms);
  EXPECT_EQ(bounds.work_from_now().each(), 40ms);
  // --pair-timeout 40 ms, --timeout 1 h: the pair's end bounds its every wait.
  auto whole = fabric::pair_bounds::from_now(40ms, 40ms, 1h);
  EXPECT_LE(whole.meeting_until(whole.meet).each(), 40ms);
  EXPECT_LE(whole.work_from_now().each(), 40ms);
}

TEST(pair_bounds, the_meeting_moves_on_while_the_peer_is_on_its_way_and_ends_when_it_is_not) {
  auto bounds = fabric::pair_bounds::from_now(20ms, 20ms, 20ms);
  int asked = 0;
  bounds.peer_on_its_way = [&] { return ++asked <= 2; };
  int dials = 0;
  auto nobody_listens = [&](const wait_limit&) -> int {
    ++dials;
    throw fabric::error(fabric::exit_code::connect_failed, "rejected");
  };
  EXPECT_THROW(fabric::dial_to_meet(bounds, nobody_listens), fabric::error);
  EXPECT_EQ(asked, 3);  // two more meetings, then the deadline stood
  EXPECT_GT(dials, 3);
}

TEST(pair_bounds, a_peer_that_comes_in_the_later_meeting_is_met) {
  auto bounds = fabric::pair_bounds::from_now(20ms, 500ms, 20ms);
  bool coming = false;
  bounds.peer_on_its_way = [&] { return coming = true; };
  auto listens_once_on_its_way = [&](const wait_limit& meeting) {
    if (!coming) throw fabric::error(fabric::exit_code::connect_failed, "rejected");
    EXPECT_FALSE(meeting.expired()) << "the later meeting's waits";
    return 7;
  };
  EXPECT_EQ(fabric::dial_to_meet(bounds, listens_once_on_its_way), 7);
}

TEST(pair_bounds, a_dial_the_meetings_deadline_cut_short_is_made_again_while_the_peer_is_on_its_way) {
  auto bounds = fabric::pair_bounds::from_now(20ms, 100ms, 1h);
  int asked = 0;
  bounds.peer_on_its_way = [&] { return ++asked == 1; };
  int dials = 0;
  auto waits_out_its_meeting = [&](const wait_limit& meeting) -> int {
    ++dials;
    fabric::wait_readable(-1, meeting.next());
    throw fabric::error(fabric::exit_code::timeout, "no answer in time");
  };
  EXPECT_THROW(fabric::dial_to_meet(bounds, waits_out_its_meeting), fabric::error);
  EXPECT_EQ(asked, 2);
  EXPECT_EQ(dials, 2) << "dialled again in the later meeting, until it too was over";
}

TEST(pair_bounds, a_request_sent_as_the_meeting_ends_waits_for_its_answer_one_timeout) {
  // The peer may hold the request already: giving it up would fail its accept.
  auto bounds = fabric::pair_bounds::from_now(20ms, 1h, 200ms);
  fabric::wait_readable(-1, bounds.meet);
  EXPECT_EQ(bounds.meeting_until(bounds.meet).next().poll_timeout(), 0) << "the meeting's own waits are over";
  auto answer_by = bounds.answer().next();
  EXPECT_GT(answer_by.poll_timeout(), 150);
  EXPECT_LE(answer_by.poll_timeout(), 200);
}

TEST(pair_bounds, a_request_is_the_peers_when_its_private_data_starts_with_the_key) {
  auto bytes = [](std::string_view s) {
    std::vector<std::byte> out;
    for (char c : s) out.push_back(static_cast<std::byte>(c));
    return out;
  };
  auto key = bytes("FSWP0001");
  EXPECT_TRUE(fabric::carries_key(bytes("FSWP0001"), key));
  EXPECT_TRUE(fabric::carries_key(bytes("FSWP0001 and the plan"), key));
  EXPECT_FALSE(fabric::carries_key(bytes("FSWP0002 and the plan"), key)) << "another pair's";
  EXPECT_FALSE(fabric::carries_key(bytes("FSWP"), key)) << "too short";
  EXPECT_FALSE(fabric::carries_key(std::vector<std::byte>(56), key)) << "a stranger's: no private data, zeros";
  EXPECT_TRUE(fabric::carries_key(std::vector<std::byte>(56), {})) << "no key: any request";
  EXPECT_TRUE(fabric::carries_key({}, {}));
}

TEST(pair_bounds, without_word_of_the_peer_the_meetings_deadline_stands_and_other_errors_at_once) {
  auto bounds = fabric::pair_bounds::from_now(20ms, 1h, 20ms);
  auto nobody_listens = [](const wait_limit&) -> int { throw fabric::error(fabric::exit_code::connect_failed, "rejected"); };
  EXPECT_THROW(fabric::dial_to_meet(bounds, nobody_listens), fabric::error);
  bounds = fabric::pair_bounds::from_now(1h, 1h, 20ms);
  int asked = 0;
  bounds.peer_on_its_way = [&] { return ++asked > 0; };
  auto unreachable = [](const wait_limit&) -> int { throw fabric::error(fabric::exit_code::timeout, "no route"); };
  EXPECT_THROW(fabric::dial_to_meet(bounds, unreachable), fabric::error);
  EXPECT_EQ(asked, 0);
}

TEST(resolve_try, a_resolution_is_asked_in_tries_of_at_most_resolve_try_within_its_wait) {
  EXPECT_EQ(fabric::resolve_try_ms(fabric::deadline::never()), fabric::resolve_try.count());
  EXPECT_EQ(fabric::resolve_try_ms(fabric::deadline::after(1h)), fabric::resolve_try.count());
  EXPECT_LE(fabric::resolve_try_ms(fabric::deadline::after(500ms)), 500);
  EXPECT_GT(fabric::resolve_try_ms(fabric::deadline::after(500ms)), 400);
  EXPECT_EQ(fabric::resolve_try_ms(fabric::deadline::at({})), 1);
}

TEST(resolve_try, the_first_try_of_a_wait_that_starts_now_is_its_limit_up_to_resolve_try) {
  EXPECT_EQ(fabric::resolve_try_ms(wait_limit(1h)), fabric::resolve_try.count());
  EXPECT_EQ(fabric::resolve_try_ms(wait_limit(500ms)), 500);
  EXPECT_EQ(fabric::resolve_try_ms(wait_limit(0ms)), 1);
  EXPECT_LE(fabric::resolve_try_ms(wait_limit(1h).until(fabric::deadline::after(300ms))), 300);
}

TEST(pair_bounds, a_meeting_ends_once_the_peer_is_known_to_be_gone) {
  auto bounds = fabric::pair_bounds::from_now(1h, 1h, 1h);
  int asked = 0;
  bounds.peer_gone = [&]() -> std::optional<std::string> {
    if (++asked == 2) return "fabric-b stopped answering";
    return std::nullopt;
  };
  int dials = 0;
  auto nobody_listens = [&](const wait_limit&) -> int {
    ++dials;
    throw fabric::error(fabric::exit_code::connect_failed, "rejected");
  };
  try {
    fabric::dial_to_meet(bounds, nobody_listens);
    ADD_FAILURE() << "met nobody";
  } catch (const fabric::error& e) {
    EXPECT_EQ(e.code(), fabric::exit_code::connect_failed);
    EXPECT_EQ(std::string_view(e.what()), "rejected: fabric-b stopped answering") << "the dial's own words, then why";
  }
  EXPECT_EQ(asked, 2) << "asked once an interval, not at every dial";
  EXPECT_GT(dials, asked);
}

TEST(pair_bounds, without_the_question_a_meeting_waits_its_time) {
  fabric::pair_bounds bounds = fabric::pair_bounds::from_now(1h, 1h, 1h);
  fabric::gone_check gone(bounds);
  EXPECT_NO_THROW(gone("a client"));
  auto until = fabric::deadline::after(1h);
  EXPECT_GT(gone.asking_by(until).poll_timeout(), 3'000'000) << "no stop to ask";
  bounds.peer_gone = [] { return std::optional<std::string>("gone"); };
  EXPECT_LE(gone.asking_by(until).poll_timeout(), 1000) << "stops to ask within an interval";
}
