#include "tpush/fanout/command_state.h"

namespace tpush::fanout {

std::optional<CommandState> next_state(CommandState from, CommandEvent event) {
  using E = CommandEvent;
  const bool started = from.stage != Stage::waiting;
  switch (event) {
    case E::sent_to_shell:
      if (!started) return CommandState{Stage::running, Carrier::kept_shell};
      break;
    case E::opened_channel:
      if (!started) return CommandState{Stage::running, Carrier::channel};
      break;
    case E::shell_declined:
    case E::shell_lost:
      if (from == CommandState{Stage::running, Carrier::kept_shell}) return CommandState{Stage::running, Carrier::channel};
      break;
    case E::term_sent:
      if (from.stage == Stage::running || from.stage == Stage::ending) return CommandState{Stage::timing_out, from.carrier};
      break;
    case E::ended_stops_closing:
      if (from.stage == Stage::running || from.stage == Stage::ending) return CommandState{Stage::ending, from.carrier};
      if (from.stage == Stage::timing_out) return from;  // it ends timed out all the same
      break;
    case E::kept_session_broke:
      if (from.stage == Stage::running) return CommandState{};
      break;
  }
  return std::nullopt;
}

std::optional<CommandEvent> shell_fallback(const ssh::KeptShell::RunEnd& end, bool answered) {
  using Kind = ssh::KeptShell::RunEnd::Kind;
  if (end.kind == Kind::declined) return CommandEvent::shell_declined;
  if (end.kind == Kind::failed && !end.hung_up && !answered) return CommandEvent::shell_lost;
  return std::nullopt;
}

std::string state_name(CommandState s) {
  const char* stage = "?";
  switch (s.stage) {
    case Stage::waiting: stage = "waiting"; break;
    case Stage::running: stage = "running"; break;
    case Stage::timing_out: stage = "timing out"; break;
    case Stage::ending: stage = "ending"; break;
  }
  switch (s.carrier) {
    case Carrier::none: return stage;
    case Carrier::kept_shell: return std::string(stage) + " in the kept shell";
    case Carrier::channel: return std::string(stage) + " on an exec channel";
  }
  return stage;
}

}  // namespace tpush::fanout
