#include "tpush/relay/relay_job.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdlib>

#include "tpush/ssh/wire.h"
#include "tpush/util/base64.h"

namespace tpush::relay {
namespace {

// The last line of `text` that holds anything.
std::string last_line(const std::string& text) {
  std::size_t end = text.find_last_not_of("\r\n");
  if (end == std::string::npos) return {};
  const std::size_t start = text.find_last_of('\n', end);
  return text.substr(start == std::string::npos ? 0 : start + 1, end + 1 - (start == std::string::npos ? 0 : start + 1));
}

// A key blob as an order carries it: "TYPE BASE64", as known_hosts and .pub files write it.
std::string key_line(const std::string& blob) {
  const std::string type = ssh::wire::blob_type(blob);
  return (type.empty() ? "unknown" : type) + " " + util::base64_encode(blob);
}

}  // namespace

RelayJob::RelayJob(std::size_t index, ssh::Endpoint endpoint, const ssh::ConnectionSettings& settings,
                   fanout::Deadlines deadlines, RelayTransfer& transfer, ProgressFn progress, Fallback fallback,
                   const std::string& hop_address)
    : SessionJob(index, endpoint, settings, deadlines),
      transfer_(transfer),
      progress_(std::move(progress)),
      make_fallback_(std::move(fallback)),
      agent_policy_([this](const std::string& line) { spdlog::info("{}: relay: {}", transfer_.label(index_), line); }) {
  sink_.data = [this](int stream, std::string_view bytes) {
    if (stream == 1) return on_stdout(bytes);
    const std::string own = group_.filter(bytes);
    stderr_tail_ = (stderr_tail_ + own).substr(stderr_tail_.size() + own.size() > 4096 ? stderr_tail_.size() + own.size() - 4096 : 0);
  };
  sink_.can_accept = [] { return true; };
  feed_sink_.data = [](int, std::string_view) {};
  feed_sink_.can_accept = [] { return true; };
  orders_.text = transfer_.setup();
  where_ = HopTarget{hop_address.empty() ? endpoint.host : hop_address, endpoint.port, endpoint.user, "", "", "", ""};
}

RelayJob::~RelayJob() { detach(true); }

void RelayJob::order(std::string line) { orders_.text += line; }

void RelayJob::feed(int attempt) { feeds_wanted_.push_back(attempt); }

void RelayJob::start_work() {
  host_key_ = ssh_session().host_key();
  if (!host_key_.empty()) where_.host_key = key_line(host_key_);
  login_ = ssh_session().login_identity();
  if (!login_.blob.empty()) where_.identity = key_line(login_.blob);
  control_ = ssh_session().open_channel(transfer_.control_command(), {.input = &orders_, .forward_agent = true});
  if (progress_) progress_(0, false);
}

void RelayJob::on_stdout(std::string_view bytes) {
  partial_line_.append(bytes);
  for (std::size_t nl; (nl = partial_line_.find('\n')) != std::string::npos;) {
    const std::string line = partial_line_.substr(0, nl);
    partial_line_.erase(0, nl + 1);
    on_report(line);
  }
}

void RelayJob::on_report(const std::string& line) {
  const RelayReport r = parse_relay_report(line);
  using K = RelayReport::Kind;
  spdlog::debug("{}: relay: {}", transfer_.label(index_), line);
  switch (r.kind) {
    case K::ready:
      if (!plain_directory(r.text)) {
        failure_ = "the relay could not start: its directory is not a plain path (" + r.text + ")";
        return quit();
      }
      where_.directory = r.text;
      attached_ = true;
      transfer_.attach(index_, this, where_, host_key_, login_);
      transfer_.ready(index_);
      return;
    case K::stored: {
      stored_ = true;
      const double seconds = std::max(1.0, std::atof(r.text.c_str())) / 1000;
      stored_in_ = fmt::format("stored in {:.2f} s, {:.0f} MiB/s", seconds, transfer_.stream_size() / 1048576.0 / seconds);
      spdlog::info("{}: relay: {:.1f} MiB {} {}", transfer_.label(index_), transfer_.stream_size() / 1048576.0,
                   stored_in_, transfer_.how(index_));
      if (progress_) progress_(transfer_.stream_size(), false);
      transfer_.stored(index_);
      return;
    }
    case K::failed:
      if (r.index < 0) {
        failure_ = "the relay could not start: " + r.text;
      } else {
        failure_ = transfer_.path(static_cast<std::size_t>(r.index)) + ": " + r.text;
      }
      return;
    case K::short_of:
    case K::mismatch:
      transfer_.broken(index_);
      return;
    case K::hop:
      spdlog::info("{}: relay: passing the bytes on failed (ssh exit {})", transfer_.label(index_), r.text);
      transfer_.hop_failed(index_);
      return;
    case K::end:
      if (!failure_.empty()) transfer_.failed(index_);
      return;
    case K::unknown:
      return;
  }
}

void RelayJob::quit() {
  if (quitting_) return;
  quitting_ = true;
  orders_.text += "quit\n";
  orders_.closed = true;
}

void RelayJob::fall_back(const std::string& why) {
  spdlog::info("{}: relay: {}; tpush sends it the copy over SFTP", transfer_.label(index_), why);
  fallback_why_ = why;
  detach(false);
  if (control_) control_->release();  // the channel ended; the session frees it
  control_.reset();
  fallback_ = make_fallback_(ssh_session());
}

void RelayJob::advance_fallback() {
  fallback_->advance();
  if (progress_) progress_(fallback_->bytes_done(), false);
  switch (fallback_->phase()) {
    case ssh::SftpTransfer::Phase::running:
      return;
    case ssh::SftpTransfer::Phase::done:
      if (progress_) progress_(fallback_->bytes_done(), true);
      return finish(fanout::Outcome::ok, "ok (from tpush over SFTP: " + fallback_why_ + ")", 0);
    case ssh::SftpTransfer::Phase::failed:
      if (fallback_->server_hung_up()) return finish(fanout::Outcome::lost, lost_reason(fallback_->error()));
      return finish(fanout::Outcome::failed, fallback_->error());
  }
}

// Every kHeartbeatSeconds, "-" to the control script: hearing nothing for
// three of them, it ends on its own (a cut network, tpush killed).
void RelayJob::tick_work() {
  if (control_ && !quitting_ && !fallback_) {
    const auto t = now();
    if (!last_heartbeat_) last_heartbeat_ = t;
    if (t - *last_heartbeat_ >= std::chrono::seconds(kHeartbeatSeconds)) {
      last_heartbeat_ = t;
      orders_.text += "-\n";
    }
  }
  advance_work();
}

void RelayJob::advance_work() {
  if (fallback_) return advance_fallback();
  for (int attempt : std::exchange(feeds_wanted_, {}))
    feeds_.push_back({attempt, ssh_session().open_channel(relay_feed_command(where_.directory, attempt),
                                                          {.input = &transfer_.stream()})});
  // Orders (tpush's "-" among them) and an agent's answers go before more of
  // the stream: a feed keeps the socket full for as long as it lasts, and a
  // script that hears nothing for kSilenceSeconds ends.
  const bool orders_waiting =
      control_->phase() == ssh::Channel::Phase::stream && control_->input_offset() < orders_.text.size();
  const bool others_waiting = orders_waiting || agent_answer_waiting();
  for (Feed& f : feeds_) {
    if (f.ended) continue;
    f.channel->hold_input(others_waiting);
    f.channel->advance(feed_sink_);
    if (!f.channel->ended()) continue;
    f.ended = true;
    if (f.channel->phase() == ssh::Channel::Phase::done && f.channel->exit_status() != 0)
      transfer_.not_fed(index_, f.attempt, f.channel->exit_status() == kFeedCut);
  }
  control_->advance(sink_);
  if (!agent_checked_ && control_->command_sent() && control_->phase() != ssh::Channel::Phase::exec) {
    agent_checked_ = true;
    if (!control_->agent_refusal().empty())
      spdlog::info("{}: relay: {}: its hops cannot log in, and tpush feeds the workers after it itself",
                   transfer_.label(index_), control_->agent_refusal());
  }
  if (!control_->ended()) return;
  if (!attached_ && make_fallback_ && (control_->phase() != ssh::Channel::Phase::failed || !control_->server_hung_up())) {
    fall_back(failure_.empty() ? why_failed() : failure_);
    return advance_fallback();
  }
  if (control_->phase() == ssh::Channel::Phase::failed) {
    if (restart_on_fresh_session()) return;
    if (control_->server_hung_up()) return finish(fanout::Outcome::lost, lost_reason(control_->error()));
    return finish(fanout::Outcome::failed, control_->error());
  }
  if (stored_ && failure_.empty()) {
    transfer_.delivered(index_);
    if (progress_) progress_(transfer_.stream_size(), true);
    return finish(fanout::Outcome::ok, "ok (" + transfer_.how(index_) + "; " + stored_in_ + ")", 0);
  }
  finish(fanout::Outcome::failed, why_failed(), control_->exit_status());
}

std::string RelayJob::why_failed() const {
  if (!failure_.empty()) return failure_;
  if (transfer_.chain().exhausted(index_))
    return "the copy did not check out in " + std::to_string(RelayChain::kMaxAttempts) + " attempts";
  const std::string said = last_line(stderr_tail_);
  const std::string status = control_->phase() == ssh::Channel::Phase::failed
                                 ? control_->error()
                                 : "exit " + std::to_string(control_->exit_status()) + (said.empty() ? "" : ": " + said);
  return (attached_ ? "the relay ended early (" : "the relay's script could not run (") + status + ")";
}

util::Wait RelayJob::work_wait() const {
  if (fallback_) return fallback_->wait();
  return ssh_session().sending() ? util::Wait::read_write : util::Wait::read;
}

void RelayJob::detach(bool mid_attempt) {
  if (detached_) return;
  detached_ = true;
  transfer_.detach(index_, mid_attempt);
}

void RelayJob::release_work() {
  detach(!quitting_);
  if (control_) control_->release();
  for (Feed& f : feeds_) f.channel->release();
  if (fallback_) fallback_->release();
}

}  // namespace tpush::relay
