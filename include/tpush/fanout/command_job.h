// Runs one command on one worker: an exec channel on the job's session, its
// output into the sink, its exit status as the result.
//
// Without a pty the command runs behind ssh/remote_group's prologue, and
// stopping it (first Ctrl-C, --fail-fast, -u) signals its whole process group
// through a second channel on the same session, which works for root logins
// too (sshd refuses their signal requests). With a pty, ^C goes through the
// terminal and the hang-up sends SIGHUP.
//
// On a session a persist master keeps, a command without a pty or stdin runs
// through the session's kept shell (ssh/kept_shell.h) once it has one; the
// first command on the session starts that shell beside its own exec channel.
// A command that the kept shell never answered runs again (on a new session
// when the kept one died, else on an exec channel of the same session), behind
// the claim that keeps it from running twice.
//
// Where the command is, its stage (waiting for a session, running, timing
// out, ending) and its carrier (the kept shell, an exec channel), is a
// CommandState, moved on by one function (fanout/command_state.h) as things
// happen: the job asks it, not its channels, what carries the command.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tpush/fanout/command_state.h"
#include "tpush/fanout/output_sink.h"
#include "tpush/fanout/session_job.h"
#include "tpush/fanout/sudo_exchange.h"
#include "tpush/fanout/sudo_password.h"
#include "tpush/ssh/exec_channel.h"
#include "tpush/ssh/remote_group.h"

namespace tpush::fanout {

class CommandJob final : public SessionJob {
 public:
  // `sudo`: the run's sudo password (--sudo): the command runs under sudo
  // with its prompt and mark (a fresh exec channel, never a kept shell).
  CommandJob(std::size_t index, ssh::Endpoint endpoint, const ssh::ConnectionSettings& settings,
             std::string command, ssh::Channel::Settings channel_settings, Deadlines deadlines,
             OutputSink& out, SudoPassword* sudo = nullptr);

  // First Ctrl-C: ^C through the pty, else INT to the remote process group.
  void forward_interrupt() override;
  std::optional<std::uint64_t> input_offset() const override;

 private:
  // Moves the command's state on (command_state.h).
  void go(CommandEvent event);
  // The kept shell carries the command (it was sent there and did not fall
  // back to an exec channel), whatever its stage.
  bool via_shell() const { return state_.carrier == Carrier::kept_shell; }
  void start_work() override;
  // A ^C or signal that the channel could not take when it was asked for goes
  // out from the next tick, not only at the next bytes from the worker (a
  // command that prints nothing, as `sleep`, may send none for seconds).
  void tick_work() override;
  void advance_work() override;
  util::Wait work_wait() const override;
  bool work_paused() const override { return carrier_paused(); }
  bool before_timeout() override;
  void release_work() override;
  bool work_clean() const override;
  bool work_may_start_again() const override;
  void reset_work() override;
  // The command went to the kept shell and never answered: from now on it runs
  // on exec channels behind its claim (ssh::with_claim), and a login that finds
  // it claimed ends the job as `outcome`, saying `what_failed`.
  void run_behind_claim(Outcome outcome, std::string what_failed);
  void finish_from_channel();
  void finish_from_shell(const ssh::KeptShell::RunEnd& end);
  // Starts the kept shell for the session's later commands, once no other
  // channel is being opened.
  void start_shell();
  // True while a channel of this job is being opened (one at a time per session).
  bool channel_opening() const;
  // True while the kept shell must be driven on before the job may end: it is
  // starting (the job started it), or leaving and its channel not yet closed.
  bool shell_settling() const;
  bool carrier_paused() const;
  // Sends `signal` to the remote process group over a new channel, as soon as
  // the group is known; false when it never will be (a pty, or no tag came).
  bool signal_group(const std::string& signal);
  ssh::HangUpWatch hang_up_watch(const ssh::ConnectionSettings& settings) const;
  void stderr_data(std::string_view bytes);
  // --sudo: the stream sudo speaks on goes through the exchange first.
  void sudo_data(Stream stream, std::string_view bytes);
  void sudo_asked();
  // Sends the password, waits for the worker it is checked on, or gives up.
  void answer_sudo();
  bool stops_pending() const;
  // The command ended while a stop channel (its Ctrl-C's kill) was still
  // closing: on a session a persist master may keep, the job waits for it a
  // moment (state ending), so the session is given back clean instead of dropped.
  bool waiting_for_stops();

  std::unique_ptr<ssh::Channel> channel_;
  std::string command_;      // with the group-report prologue, for an exec channel
  std::string raw_command_;  // as given, for a kept shell
  ssh::Channel::Settings channel_settings_;
  CommandState state_;
  bool want_shell_ = false;      // a kept shell may run this command
  bool shell_started_ = false;   // this job started the session's kept shell, for later runs
  std::optional<std::pair<Outcome, std::string>> claimed_;  // run_behind_claim()'s
  std::vector<std::string> signals_sent_;  // to the group: what a status of 128 + N may mean
  OutputSink& out_;
  // -A / ForwardAgent: every request of the worker's agent channels goes to the
  // user's agent; otherwise all are refused.
  ssh::AgentPolicy forwarding_{nullptr};
  ssh::AgentPolicy& agent_policy() override { return forwarding_; }
  ssh::Channel::Sink sink_;
  std::optional<ssh::GroupReport> group_;       // without a pty
  std::vector<std::string> queued_signals_;     // waiting for the group's tag
  std::vector<std::unique_ptr<ssh::Channel>> stops_;  // `kill -s SIG -- -PGID` channels
  std::optional<Clock::time_point> ended_before_stops_;  // waiting_for_stops() since
  SudoPassword* sudo_ = nullptr;
  std::optional<SudoExchange> sudo_exchange_;
  bool sudo_sent_ = false;     // the password went to this worker
  bool sudo_waiting_ = false;  // sudo asked; the password is being checked on another worker
  std::string sudo_failure_;   // why sudo did not run the command, for the summary
};

}  // namespace tpush::fanout
