#include "tpush/fanout/command_job.h"

#include <algorithm>
#include <cstring>
#include <mutex>
#include <utility>

#include <spdlog/spdlog.h>

#include "tpush/ssh/kept_shell.h"

namespace tpush::fanout {
namespace {

// The stop channels' output (there is none) goes nowhere.
const ssh::Channel::Sink kDiscard{[](int, std::string_view) {}, [] { return true; }};

// How long a command that ended waits for its stop channels to close. A kill
// answers in milliseconds; one that does not is given up with its session at
// the next event after this (a keepalive's answer at the latest).
constexpr auto kStopsWait = std::chrono::seconds(1);

}  // namespace

CommandJob::CommandJob(std::size_t index, ssh::Endpoint endpoint, const ssh::ConnectionSettings& settings,
                       std::string command, ssh::Channel::Settings channel_settings, Deadlines deadlines,
                       OutputSink& out, SudoPassword* sudo)
    : SessionJob(index, endpoint, settings, deadlines),
      command_(std::move(command)),
      channel_settings_(channel_settings),
      // A kept shell started before: the agent can reach only a command of its own channel.
      // Sudo's password goes on a channel's stdin of its own, never into a kept shell.
      want_shell_(settings.pool && !channel_settings.pty && !channel_settings.input && !endpoint.forward_agent &&
                  !sudo),
      out_(out),
      sudo_(sudo) {
  if (sudo_) {
    channel_settings_.stdin_gated = true;
    sudo_exchange_.emplace(sudo_->prompt(), sudo_->mark());
  }
  if (endpoint.forward_agent) {
    channel_settings_.forward_agent = true;
    forwarding_.forward_everything_to(*endpoint.forward_agent);
  }
  if (want_shell_) raw_command_ = command_;
  if (!channel_settings_.pty) {
    group_.emplace();
    channel_settings_.stdin_watched = !settings.pool && !channel_settings_.input && !sudo_;
    command_ = ssh::with_group_report(command_, hang_up_watch(settings));
  }
  sink_.data = [this](int stream, std::string_view bytes) {
    if (stream == 2) return stderr_data(bytes);
    if (sudo_exchange_ && channel_settings_.pty) return sudo_data(Stream::out, bytes);
    out_.data(index_, Stream::out, bytes);
  };
  sink_.can_accept = [this] { return out_.accepting(); };
}

// A session a persist master may keep gets the connection's guardian; a
// command without input, the watch on its channel's stdin; one that reads
// tpush's input, its own watchdog (said once, under -v).
ssh::HangUpWatch CommandJob::hang_up_watch(const ssh::ConnectionSettings& settings) const {
  if (settings.pool) return ssh::HangUpWatch::per_connection;
  if (channel_settings_.stdin_watched) return ssh::HangUpWatch::stdin;
  static std::once_flag said;
  std::call_once(said, [] {
    spdlog::debug("the command's stdin carries tpush's input or sudo's password, so it cannot carry the hang-up: "
                  "each worker runs a watchdog (sh and two `tail --pid`) beside it");
  });
  return ssh::HangUpWatch::per_command;
}

void CommandJob::stderr_data(std::string_view bytes) {
  const auto pass = [&](std::string_view own) {
    if (sudo_exchange_ && !channel_settings_.pty) return sudo_data(Stream::err, own);
    out_.data(index_, Stream::err, own);
  };
  if (!group_ || group_->settled()) return pass(bytes);
  const std::string own = group_->filter(bytes);
  if (!own.empty()) pass(own);
  if (!group_->settled()) return;
  for (const auto& signal : std::exchange(queued_signals_, {})) signal_group(signal);
}

void CommandJob::sudo_data(Stream stream, std::string_view bytes) {
  if (sudo_exchange_->ran()) return out_.data(index_, stream, bytes);
  const SudoExchange::Seen seen = sudo_exchange_->take(bytes);
  if (!seen.out.empty()) out_.data(index_, stream, seen.out);
  for (int i = 0; i < seen.prompts; ++i) sudo_asked();
  if (seen.ran) {
    spdlog::debug("worker {}: sudo runs the command", index_);
    sudo_->ran(index_);
    if (channel_) channel_->open_gate();  // the command's own input (or EOF) follows
  }
}

void CommandJob::sudo_asked() {
  if (!channel_ || !sudo_failure_.empty() || sudo_waiting_) return;
  if (!sudo_sent_) return answer_sudo();
  // Asked again after the password: wrong here. sudo gets EOF, never a second try.
  sudo_failure_ = sudo_->refused(index_);
  channel_->end_input();
}

void CommandJob::answer_sudo() {
  SudoPassword::Answer answer = sudo_->asked(index_);
  static constexpr const char* kWhat[] = {"the password goes", "waits for the worker it is checked on",
                                          "gives up"};
  spdlog::debug("worker {}: sudo asks for the password: {}", index_, kWhat[static_cast<int>(answer.kind)]);
  sudo_waiting_ = answer.kind == SudoPassword::Answer::Kind::wait;
  if (answer.kind == SudoPassword::Answer::Kind::send) {
    channel_->write_first(std::move(answer.password));
    sudo_sent_ = true;
  } else if (answer.kind == SudoPassword::Answer::Kind::give_up) {
    sudo_failure_ = std::move(answer.reason);
    channel_->end_input();
  }
}

void CommandJob::go(CommandEvent event) {
  const auto next = next_state(state_, event);
  if (!next) {
    spdlog::debug("worker {}: command event {} in state {} ignored", index_, static_cast<int>(event),
                  state_name(state_));
    return;
  }
  // Every event of every worker passes here: the names are made only for -vv.
  if (spdlog::should_log(spdlog::level::trace))
    spdlog::trace("worker {}: command {} -> {}", index_, state_name(state_), state_name(*next));
  state_ = *next;
}

void CommandJob::start_work() {
  out_.connected(index_);
  ssh::KeptShell* shell = kept_shell();
  if (want_shell_ && shell && shell->ready() && shell->run(raw_command_, ssh::group_tag()))
    return go(CommandEvent::sent_to_shell);
  channel_ = ssh_session().open_channel(command_, channel_settings_);
  go(CommandEvent::opened_channel);
}

void CommandJob::start_shell() {
  if (!want_shell_ || shell_started_ || !may_keep_session() || state_.stage == Stage::timing_out || !stops_.empty())
    return;
  if (const ssh::KeptShell* shell = kept_shell(); shell && (!shell->ended() || shell->unavailable())) return;
  if (channel_opening()) return;
  shell_started_ = true;
  set_kept_shell(std::make_unique<ssh::KeptShell>(ssh_session()));
  kept_shell()->advance(kDiscard);
}

bool CommandJob::channel_opening() const {
  const auto opening = [](const ssh::Channel& c) { return c.phase() == ssh::Channel::Phase::open; };
  if (channel_ && opening(*channel_)) return true;
  if (kept_shell() && kept_shell()->opening()) return true;
  for (const auto& stop : stops_)
    if (opening(*stop)) return true;
  return false;
}

bool CommandJob::shell_settling() const {
  const ssh::KeptShell* shell = kept_shell();
  if (!shell) return false;
  // A shell this job started is waited for until it is ready (or cannot be):
  // the next run then surely finds it so.
  if (shell_started_ && shell->alive() && !shell->ready()) return true;
  return shell->opening() || (!shell->alive() && !shell->ended());
}

bool CommandJob::carrier_paused() const {
  if (via_shell()) return kept_shell()->paused();
  return channel_ && channel_->paused();
}

bool CommandJob::stops_pending() const {
  for (const auto& stop : stops_)
    if (!stop->ended()) return true;
  return false;
}

bool CommandJob::waiting_for_stops() {
  if (!may_keep_session() || !stops_pending()) return false;
  const auto t = now();
  if (!ended_before_stops_) ended_before_stops_ = t;
  if (t - *ended_before_stops_ >= kStopsWait) return false;
  go(CommandEvent::ended_stops_closing);
  return true;
}

util::Wait CommandJob::work_wait() const {
  if (carrier_paused() && !stops_pending()) return util::Wait::none;
  // Data may arrive at any time while streaming; write interest only while
  // libssh2 has a packet half-sent.
  return ssh_session().sending() ? util::Wait::read_write : util::Wait::read;
}

void CommandJob::advance_work() {
  for (auto& stop : stops_) {
    const bool was = stop->ended();
    stop->advance(kDiscard);
    if (!was && stop->ended())
      spdlog::trace("worker {}: stop channel ended: {} exit {} {}", index_, static_cast<int>(stop->phase()),
                    stop->exit_status(), stop->error());
  }
  ssh::KeptShell* shell = kept_shell();
  if (shell) shell->advance(via_shell() ? sink_ : kDiscard);
  if (via_shell() && shell->run_end()) {
    const auto& end = *shell->run_end();
    // A login file changed since the shell started (declined), or the shell
    // ended before the command answered, its session still up: this command
    // runs as a new login would, on an exec channel (behind its claim when it
    // was sent), and a new shell starts for the next.
    const auto fallback = shell_fallback(end, shell->answered());
    if (!fallback) {
      if (!waiting_for_stops()) finish_from_shell(end);
      return;
    }
    spdlog::debug("worker {}: command not run in the kept shell: {}", index_,
                  end.error.empty() ? "a login file changed" : end.error);
    if (*fallback == CommandEvent::shell_lost && shell->command_sent())
      run_behind_claim(Outcome::failed, "the worker's kept shell ended before the command answered");
    go(*fallback);
    channel_ = ssh_session().open_channel(command_, channel_settings_);
  }
  if (channel_) channel_->advance(sink_);
  start_shell();
  if (!channel_opening())
    for (const auto& signal : std::exchange(queued_signals_, {})) signal_group(signal);
  if (channel_ && channel_->ended() && !shell_settling() && !waiting_for_stops()) return finish_from_channel();
  // -u: the group has its TERM; the connection can go (the watchdog sends HUP
  // to whatever is left).
  if (state_.stage == Stage::timing_out && !stops_pending()) finish(Outcome::timed_out, timed_out_reason());
}

void CommandJob::finish_from_shell(const ssh::KeptShell::RunEnd& end) {
  if (state_.stage == Stage::timing_out) return finish(Outcome::timed_out, timed_out_reason());
  if (end.kind == ssh::KeptShell::RunEnd::Kind::failed) {
    if (restart_on_fresh_session()) return;
    if (end.hung_up) return finish(Outcome::lost, lost_reason(end.error));
    return finish(Outcome::failed, end.error);
  }
  // bash reports a job killed by signal N as 128 + N; when tpush sent N to
  // the group, it is reported as an exec channel's exit signal would be.
  const char* name = end.status > 128 ? sigabbrev_np(end.status - 128) : nullptr;
  if (name && std::find(signals_sent_.begin(), signals_sent_.end(), name) != signals_sent_.end())
    return finish(Outcome::failed, "killed by SIG" + std::string(name), -1, name);
  finish(end.status == 0 ? Outcome::ok : Outcome::failed, "exit " + std::to_string(end.status), end.status);
}

void CommandJob::run_behind_claim(Outcome outcome, std::string what_failed) {
  command_ = ssh::with_claim(kept_shell()->claim_path(), command_);
  claimed_.emplace(outcome, std::move(what_failed));
}

void CommandJob::finish_from_channel() {
  if (state_.stage == Stage::timing_out) return finish(Outcome::timed_out, timed_out_reason());
  // The claim's exit, before the group's tag: the kept shell had the command.
  if (claimed_ && channel_->phase() == ssh::Channel::Phase::done && channel_->exit_signal().empty() &&
      channel_->exit_status() == 255 && group_ && !group_->pgid())
    return finish(claimed_->first, claimed_->second + ": it may have run, so it was not run again");
  if (channel_->phase() == ssh::Channel::Phase::failed && restart_on_fresh_session()) return;
  if (sudo_ && !sudo_exchange_->ran()) {
    sudo_->ended(index_);
    if (!sudo_failure_.empty() && channel_->phase() == ssh::Channel::Phase::done)
      return finish(Outcome::failed, sudo_failure_, channel_->exit_status());
  }
  finish_from(*channel_);
}

bool CommandJob::signal_group(const std::string& signal) {
  if (!group_) return false;
  if (!group_->settled() || channel_opening()) {
    spdlog::trace("worker {}: {} waits for {}", index_, signal,
                  group_->settled() ? "another channel to open" : "the command's process group");
    queued_signals_.push_back(signal);
    return true;
  }
  if (!group_->pgid()) {
    spdlog::debug("worker {}: no process group to send {} to", index_, signal);
    return false;
  }
  spdlog::trace("worker {}: {} to process group {}", index_, signal, *group_->pgid());
  signals_sent_.push_back(signal);
  stops_.push_back(ssh_session().open_channel(ssh::group_signal_command(*group_->pgid(), signal), {}));
  stops_.back()->advance(kDiscard);
  return true;
}

bool CommandJob::before_timeout() {
  // TERM for the command's process group (and the hang-up after it); with a
  // pty, or without the group's tag, a signal request (which sshd refuses for
  // root) and the hang-up (SIGHUP through a pty).
  if (group_ && group_->pgid() && signal_group("TERM")) {
    go(CommandEvent::term_sent);
    return true;
  }
  if (!channel_) return false;  // the kept shell's command, before its group is known: the hang-up
  channel_->send_signal("TERM");
  channel_->advance(sink_);
  return false;
}

void CommandJob::tick_work() {
  if (sudo_waiting_ && channel_) {  // the password was being checked on another worker
    answer_sudo();
    if (!sudo_waiting_) return advance_work();
  }
  bool pending = channel_ && channel_->requests_pending();
  for (const auto& stop : stops_) pending = pending || stop->requests_pending();
  if (pending) advance_work();
}

void CommandJob::forward_interrupt() {
  if (finished()) return;
  if (state_.stage == Stage::waiting) return interrupt();  // still connecting: its command must not start now
  // Before the group's tag has come, also a signal request: it reaches a
  // non-root login's command even if the tag never comes. (A kept shell's
  // command reports its group at once.)
  const bool known = group_ && group_->pgid();
  if (!known && channel_) channel_->interrupt_remote();
  if (!channel_settings_.pty) signal_group("INT");
  advance(now());
}

std::optional<std::uint64_t> CommandJob::input_offset() const {
  if (finished() || !channel_settings_.input) return std::nullopt;
  return channel_ ? channel_->input_offset() : 0;
}

bool CommandJob::work_clean() const {
  if (state_.stage == Stage::timing_out || shell_settling()) return false;
  if (via_shell()) {
    const auto& end = kept_shell()->run_end();
    if (!end || end->kind != ssh::KeptShell::RunEnd::Kind::exited) return false;
  } else if (!channel_ || channel_->phase() != ssh::Channel::Phase::done) {
    return false;
  }
  for (const auto& stop : stops_)
    if (stop->phase() != ssh::Channel::Phase::done) return false;
  return true;
}

bool CommandJob::work_may_start_again() const {
  if (!stops_.empty()) return false;
  if (via_shell()) return !kept_shell()->answered();
  return channel_ && !channel_->command_sent();
}

void CommandJob::reset_work() {
  if (via_shell() && kept_shell()->command_sent())
    run_behind_claim(Outcome::lost, lost_reason("the kept session broke before the command answered"));
  go(CommandEvent::kept_session_broke);
  if (channel_) channel_->release();
  channel_.reset();
  shell_started_ = false;
}

void CommandJob::release_work() {
  for (auto& stop : stops_)
    if (stop->phase() != ssh::Channel::Phase::done) stop->release();
  if (state_.stage == Stage::waiting) return;
  if (group_) {  // a line that looked like the start of the tag, then the command ended
    const std::string held = group_->flush();
    if (!held.empty()) out_.data(index_, Stream::err, held);
  }
  if (sudo_exchange_) {  // likewise, the start of sudo's prompt or the mark
    const std::string held = sudo_exchange_->flush();
    if (!held.empty()) out_.data(index_, channel_settings_.pty ? Stream::out : Stream::err, held);
  }
  out_.end(index_);  // the last line without a newline, if any
  if (channel_ && channel_->phase() != ssh::Channel::Phase::done) channel_->release();
}

}  // namespace tpush::fanout
