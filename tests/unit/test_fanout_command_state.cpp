// fanout/command_state: where a command is on its way through a worker's
// session (the kept shell, an exec channel, -u, a stop channel closing), and
// how the kept shell's end of a run decides between its status and a channel.
#include <doctest/doctest.h>

#include <optional>

#include "tpush/fanout/command_state.h"

namespace {

using tpush::fanout::CommandEvent;
using tpush::fanout::CommandState;
using tpush::fanout::next_state;
using tpush::fanout::shell_fallback;
using RunEnd = tpush::ssh::KeptShell::RunEnd;

constexpr CommandState kAll[] = {CommandState::waiting, CommandState::in_shell, CommandState::on_channel,
                                 CommandState::timing_out, CommandState::ending};

}  // namespace

TEST_CASE("command state: a command starts in the kept shell when it took it, else on an exec channel") {
  CHECK(next_state(CommandState::waiting, CommandEvent::sent_to_shell) == CommandState::in_shell);
  CHECK(next_state(CommandState::waiting, CommandEvent::opened_channel) == CommandState::on_channel);
}

TEST_CASE("command state: a command that started runs nowhere else unless its shell gave it up or its session broke") {
  for (const CommandState s : kAll) {
    if (s == CommandState::waiting) continue;
    CAPTURE(tpush::fanout::state_name(s));
    CHECK_FALSE(next_state(s, CommandEvent::sent_to_shell));
    CHECK_FALSE(next_state(s, CommandEvent::opened_channel));
  }
}

TEST_CASE("command state: a command the kept shell declined or lost goes on an exec channel") {
  CHECK(next_state(CommandState::in_shell, CommandEvent::shell_declined) == CommandState::on_channel);
  CHECK(next_state(CommandState::in_shell, CommandEvent::shell_lost) == CommandState::on_channel);
  CHECK_FALSE(next_state(CommandState::on_channel, CommandEvent::shell_declined));
  CHECK_FALSE(next_state(CommandState::waiting, CommandEvent::shell_lost));
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

TEST_CASE("command state: past -u with TERM sent the command is timing out, whatever carries it") {
  CHECK(next_state(CommandState::in_shell, CommandEvent::term_sent) == CommandState::timing_out);
  CHECK(next_state(CommandState::on_channel, CommandEvent::term_sent) == CommandState::timing_out);
  CHECK(next_state(CommandState::ending, CommandEvent::term_sent) == CommandState::timing_out);
  CHECK_FALSE(next_state(CommandState::waiting, CommandEvent::term_sent));
}

TEST_CASE("command state: a command that ended with its Ctrl-C's kill still closing waits for it, and a timing-out one stays timing out") {
  CHECK(next_state(CommandState::in_shell, CommandEvent::ended_stops_closing) == CommandState::ending);
  CHECK(next_state(CommandState::on_channel, CommandEvent::ended_stops_closing) == CommandState::ending);
  CHECK(next_state(CommandState::ending, CommandEvent::ended_stops_closing) == CommandState::ending);
  CHECK(next_state(CommandState::timing_out, CommandEvent::ended_stops_closing) == CommandState::timing_out);
}

TEST_CASE("command state: a command whose kept session broke before it answered waits for a fresh session, unless stops were sent") {
  CHECK(next_state(CommandState::in_shell, CommandEvent::kept_session_broke) == CommandState::waiting);
  CHECK(next_state(CommandState::on_channel, CommandEvent::kept_session_broke) == CommandState::waiting);
  CHECK_FALSE(next_state(CommandState::timing_out, CommandEvent::kept_session_broke));
  CHECK_FALSE(next_state(CommandState::ending, CommandEvent::kept_session_broke));
}
