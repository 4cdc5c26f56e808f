// Where one command is on its way through a worker's session, and the one
// function that moves it on: fanout/command_job drives it, a unit test checks
// it. Ending is not a state here: the job finishes (WorkerJob::finish).
#pragma once

#include <optional>
#include <string>

#include "tpush/ssh/kept_shell.h"

namespace tpush::fanout {

// What carries the command to the worker.
enum class Carrier {
  none,        // nothing yet: it waits for a ready session
  kept_shell,  // the session's kept shell (ssh/kept_shell.h)
  channel,     // an exec channel of its own (behind the kept shell's claim when that had it)
};

// How far the command got, whatever carries it.
enum class Stage {
  waiting,     // for a ready session: the first, or a fresh one after a kept one broke
  running,     // sent to its carrier
  timing_out,  // -u passed and TERM is on its way to its process group: it ends timed out
  ending,      // it ended while a stop channel (a Ctrl-C's kill) still closes: waited for a
               // moment, so a persist master may keep the session
};

// Where the command is: its stage and its carrier (none exactly while waiting).
struct CommandState {
  Stage stage = Stage::waiting;
  Carrier carrier = Carrier::none;

  bool operator==(const CommandState&) const = default;
};

enum class CommandEvent {
  sent_to_shell,        // the session is ready and its kept shell took the command
  opened_channel,       // the session is ready: the command goes on an exec channel
  shell_declined,       // a login file changed since the shell started: a new login's channel runs it
  shell_lost,           // the shell ended before the command answered, its session up: a channel
                        // runs it (behind the claim when the shell had it)
  term_sent,            // -u passed: TERM went to the process group
  ended_stops_closing,  // the command ended, a stop channel still closing
  kept_session_broke,   // the kept session broke before the command answered: a fresh session
};

// The state `event` moves `from` to; nullopt when it cannot happen there.
std::optional<CommandState> next_state(CommandState from, CommandEvent event);

// How the kept shell's end of the command's run goes on: nullopt when the
// command ended there (its status, or a failure that is the worker's: the
// session hung up, or the command had answered), else the event that sends it
// to an exec channel.
std::optional<CommandEvent> shell_fallback(const ssh::KeptShell::RunEnd& end, bool answered);

// "running in the kept shell": for -v traces and test messages.
std::string state_name(CommandState s);

}  // namespace tpush::fanout
