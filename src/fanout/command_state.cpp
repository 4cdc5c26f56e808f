#include "tpush/fanout/command_state.h"

namespace tpush::fanout {

std::optional<CommandState> next_state(CommandState from, CommandEvent event) {
  using S = CommandState;
  using E = CommandEvent;
  switch (event) {
    case E::sent_to_shell:
      if (from == S::waiting) return S::in_shell;
      break;
    case E::opened_channel:
      if (from == S::waiting) return S::on_channel;
      break;
    case E::shell_declined:
    case E::shell_lost:
      if (from == S::in_shell) return S::on_channel;
      break;
    case E::term_sent:
      if (from == S::in_shell || from == S::on_channel || from == S::ending) return S::timing_out;
      break;
    case E::ended_stops_closing:
      if (from == S::in_shell || from == S::on_channel || from == S::ending) return S::ending;
      if (from == S::timing_out) return S::timing_out;  // it ends timed out all the same
      break;
    case E::kept_session_broke:
      if (from == S::in_shell || from == S::on_channel) return S::waiting;
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

const char* state_name(CommandState s) {
  switch (s) {
    case CommandState::waiting: return "waiting";
    case CommandState::in_shell: return "in_shell";
    case CommandState::on_channel: return "on_channel";
    case CommandState::timing_out: return "timing_out";
    case CommandState::ending: return "ending";
  }
  return "?";
}

}  // namespace tpush::fanout
