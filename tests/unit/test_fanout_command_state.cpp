// fanout/command_state: where a command is on its way through a worker's
// session (the kept shell, an exec channel, -u, a stop channel closing), and
// how the kept shell's end of a run decides between its status and a channel.
#include <doctest/doctest.h>

#include <algorithm>
#include <optional>
#include <vector>

#include "tpush/fanout/command_state.h"

namespace {

using tpush::fanout::Carrier;
using tpush::fanout::CommandEvent;
using tpush::fanout::CommandState;
using tpush::fanout::next_state;
using tpush::fanout::shell_fallback;
using tpush::fanout::Stage;
using RunEnd = tpush::ssh::KeptShell::RunEnd;

constexpr CommandState kWaiting{};
constexpr CommandState kInShell{Stage::running, Carrier::kept_shell};
constexpr CommandState kOnChannel{Stage::running, Carrier::channel};

CommandState timing_out(Carrier c) { return {Stage::timing_out, c}; }
CommandState ending(Carrier c) { return {Stage::ending, c}; }

constexpr Carrier kCarriers[] = {Carrier::kept_shell, Carrier::channel};

// Every state a command can be in.
std::vector<CommandState> all_states() {
  std::vector<CommandState> all{kWaiting};
  for (const Carrier c : kCarriers)
    for (const Stage s : {Stage::running, Stage::timing_out, Stage::ending}) all.push_back({s, c});
  return all;
}

}  // namespace

TEST_CASE("command state: a command starts in the kept shell when it took it, else on an exec channel") {
  CHECK(next_state(kWaiting, CommandEvent::sent_to_shell) == kInShell);
  CHECK(next_state(kWaiting, CommandEvent::opened_channel) == kOnChannel);
}

TEST_CASE("command state: a command that started runs nowhere else unless its shell gave it up or its session broke") {
  for (const CommandState s : all_states()) {
    if (s == kWaiting) continue;
    CAPTURE(tpush::fanout::state_name(s));
    CHECK_FALSE(next_state(s, CommandEvent::sent_to_shell));
    CHECK_FALSE(next_state(s, CommandEvent::opened_channel));
  }
}

TEST_CASE("command state: a command the kept shell declined or lost goes on an exec channel") {
  CHECK(next_state(kInShell, CommandEvent::shell_declined) == kOnChannel);
  CHECK(next_state(kInShell, CommandEvent::shell_lost) == kOnChannel);
  CHECK_FALSE(next_state(kOnChannel, CommandEvent::shell_declined));
  CHECK_FALSE(next_state(kWaiting, CommandEvent::shell_lost));
  // Once timing out or ending, the shell's end is the command's.
  CHECK_FALSE(next_state(timing_out(Carrier::kept_shell), CommandEvent::shell_lost));
  CHECK_FALSE(next_state(ending(Carrier::kept_shell), CommandEvent::shell_declined));
}

TEST_CASE("command state: a kept shell that ran the command ends it with the command's own status") {
  CHECK_FALSE(shell_fallback(RunEnd::exited(0), true));
  CHECK_FALSE(shell_fallback(RunEnd::exited(3), true));
}

TEST_CASE("command state: a changed login file makes the kept shell decline, and the command runs as a new login would") {
  CHECK(shell_fallback(RunEnd::declined(), false) == CommandEvent::shell_declined);
}

TEST_CASE("command state: a kept shell that ended before the command answered, its session up, has the command run on a channel") {
  CHECK(shell_fallback(RunEnd::failed("the shell ended"), false) == CommandEvent::shell_lost);
}

TEST_CASE("command state: a kept shell whose session hung up, or that failed after the command answered, is the worker's failure, not run again") {
  CHECK_FALSE(shell_fallback(RunEnd::failed("connection lost", true), false));
  CHECK_FALSE(shell_fallback(RunEnd::failed("the shell ended"), true));
}

TEST_CASE("command state: past -u with TERM sent the command is timing out, on the carrier it had") {
  for (const Carrier c : kCarriers) {
    CHECK(next_state({Stage::running, c}, CommandEvent::term_sent) == timing_out(c));
    CHECK(next_state(ending(c), CommandEvent::term_sent) == timing_out(c));
  }
  CHECK_FALSE(next_state(kWaiting, CommandEvent::term_sent));
}

TEST_CASE("command state: a command that ended with its Ctrl-C's kill still closing waits for it, and a timing-out one stays timing out") {
  for (const Carrier c : kCarriers) {
    CHECK(next_state({Stage::running, c}, CommandEvent::ended_stops_closing) == ending(c));
    CHECK(next_state(ending(c), CommandEvent::ended_stops_closing) == ending(c));
    CHECK(next_state(timing_out(c), CommandEvent::ended_stops_closing) == timing_out(c));
  }
}

TEST_CASE("command state: a command whose kept session broke before it answered waits for a fresh session, unless stops were sent") {
  CHECK(next_state(kInShell, CommandEvent::kept_session_broke) == kWaiting);
  CHECK(next_state(kOnChannel, CommandEvent::kept_session_broke) == kWaiting);
  for (const Carrier c : kCarriers) {
    CHECK_FALSE(next_state(timing_out(c), CommandEvent::kept_session_broke));
    CHECK_FALSE(next_state(ending(c), CommandEvent::kept_session_broke));
  }
}

TEST_CASE("command state: every state the events reach knows its carrier, and nothing carries a waiting command") {
  constexpr CommandEvent kEvents[] = {CommandEvent::sent_to_shell,  CommandEvent::opened_channel,
                                      CommandEvent::shell_declined, CommandEvent::shell_lost,
                                      CommandEvent::term_sent,      CommandEvent::ended_stops_closing,
                                      CommandEvent::kept_session_broke};
  std::vector<CommandState> reached{kWaiting};
  for (std::size_t i = 0; i < reached.size(); ++i)
    for (const CommandEvent e : kEvents)
      if (const auto next = next_state(reached[i], e); next && std::find(reached.begin(), reached.end(), *next) == reached.end())
        reached.push_back(*next);
  CHECK(reached.size() == all_states().size());
  for (const CommandState s : reached) {
    CAPTURE(tpush::fanout::state_name(s));
    CHECK((s.carrier == Carrier::none) == (s.stage == Stage::waiting));
  }
  CHECK(tpush::fanout::state_name(timing_out(Carrier::kept_shell)) == "timing out in the kept shell");
  CHECK(tpush::fanout::state_name(ending(Carrier::channel)) == "ending on an exec channel");
}
