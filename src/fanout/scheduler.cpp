#include "tpush/fanout/scheduler.h"

#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <csignal>

#include <spdlog/spdlog.h>

#include "tpush/util/error.h"

namespace tpush::fanout {
namespace {

constexpr std::uint64_t kSignalTag = ~std::uint64_t{0};
constexpr std::uint64_t kWriterTag = kSignalTag - 1;
constexpr std::uint64_t kInputTag = kSignalTag - 2;
constexpr std::uint64_t kServiceTag = std::uint64_t{1} << 62;  // | the service's index
constexpr auto kTick = std::chrono::milliseconds(100);

unsigned events_for(util::Wait w) {
  switch (w) {
    case util::Wait::none: return 0;
    case util::Wait::read: return EPOLLIN;
    case util::Wait::write: return EPOLLOUT;
    case util::Wait::read_write: return EPOLLIN | EPOLLOUT;
  }
  return 0;
}

}  // namespace

Scheduler::Scheduler(std::size_t workers, std::size_t fanout, JobFactory factory, int signal_fd,
                     OutputSink* output, std::function<void()> after_events, InputFeed* input, Now now)
    : workers_(workers),
      fanout_(std::max<std::size_t>(1, fanout)),
      pace_(fanout_),
      factory_(std::move(factory)),
      signal_fd_(signal_fd),
      output_(output),
      after_events_(std::move(after_events)),
      now_(std::move(now)),
      slots_(workers),
      input_(input) {
  epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
  if (epoll_fd_ < 0) throw SetupError(std::string("cannot create an epoll instance: ") + std::strerror(errno));
  outcome_.results.resize(workers);
  for (auto& r : outcome_.results) r.reason = "not started";
  auto watch = [&](int fd, std::uint64_t tag) {
    if (fd < 0) return;
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = tag;
    epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev);
  };
  watch(signal_fd_, kSignalTag);
  if (output_) watch(output_->wake_fd(), kWriterTag);
}

Scheduler::~Scheduler() {
  if (epoll_fd_ >= 0) close(epoll_fd_);
}

std::size_t Scheduler::count_connecting(Clock::time_point now) const {
  const auto lost_after = pace_.presumed_lost_after();
  std::size_t n = 0;
  for (std::size_t i : active_) {
    const Job& job = *slots_[i].job;
    n += job.connecting() && now - job.setup_progress(now) < lost_after ? 1 : 0;
  }
  return n;
}

void Scheduler::start_more(Clock::time_point now) {
  if (stopping_ || next_ >= workers_ || active_.size() >= fanout_) return;
  std::size_t connecting = count_connecting(now);
  while (!stopping_ && next_ < workers_ && active_.size() < fanout_ && connecting < pace_.window()) {
    ++connecting;
    const std::size_t i = next_++;
    Slot& slot = slots_[i];
    slot.job = factory_(i);
    active_.push_back(i);
    if (observer_) observer_(i, nullptr);
    slot.job->advance(now);
    settle(i);
  }
}

// A handshake that passed a stage or completed tells the pace how long it
// took; one that failed tells nothing about load (refused, no route, a
// deadline of its own). A job ready at its start (a session kept from an
// earlier run) made no handshake.
void Scheduler::note_setup(Slot& slot) {
  const Job& job = *slot.job;
  if (job.connecting()) {
    if (!slot.connecting_since) {  // again, on a fresh session
      slot.connecting_since = slot.stage_since = now_();
      slot.stage = job.setup_stage();
    } else if (const std::size_t stage = job.setup_stage(); stage != slot.stage) {
      const auto now = now_();
      if (stage > slot.stage) pace_.progressed(stage, now - slot.stage_since);  // not a new attempt's start
      slot.stage = stage;
      slot.stage_since = now;
    }
  } else if (slot.connecting_since) {
    if (!job.finished()) {
      const auto now = now_();
      pace_.completed(now - *slot.connecting_since, now);
    }
    slot.connecting_since.reset();
  }
}

void Scheduler::watch(Watch& w, int fd, unsigned events, std::uint64_t tag) {
  if (fd < 0) events = 0;
  if (w.fd >= 0 && (w.fd != fd || events == 0)) {
    epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, w.fd, nullptr);  // may be gone already
    w.fd = -1;
  }
  if (events != 0 && (w.fd != fd || w.events != events)) {
    epoll_event ev{};
    ev.events = events;
    ev.data.u64 = tag;
    const int op = w.fd == fd ? EPOLL_CTL_MOD : EPOLL_CTL_ADD;
    if (epoll_ctl(epoll_fd_, op, fd, &ev) != 0 && errno == ENOENT)
      epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev);  // the kernel dropped it with a closed fd
    w.fd = fd;
    w.events = events;
  }
}

// Brings the epoll registration in line with what the job now waits for, or
// collects its result when it has finished.
void Scheduler::settle(std::size_t i) {
  Slot& slot = slots_[i];
  Job& job = *slot.job;
  note_setup(slot);
  watch(slot.watch, job.finished() ? -1 : job.fd(), events_for(job.wait()), i);
  if (job.finished()) {
    outcome_.results[i] = job.result();
    if (observer_) observer_(i, &outcome_.results[i]);
    slot.job.reset();
    active_.erase(std::find(active_.begin(), active_.end(), i));
  }
}

void Scheduler::add(util::Pollable& p) {
  for (const auto& s : services_)
    if (s.pollable == &p) return;
  services_.push_back({&p, {}});
  settle_service(services_.size() - 1);
}

void Scheduler::remove(util::Pollable& p) {
  for (auto& s : services_) {
    if (s.pollable != &p) continue;
    watch(s.watch, -1, 0, 0);
    s.pollable = nullptr;
  }
}

void Scheduler::update(util::Pollable& p) {
  for (std::size_t i = 0; i < services_.size(); ++i)
    if (services_[i].pollable == &p) settle_service(i);
}

void Scheduler::settle_service(std::size_t i) {
  Service& s = services_[i];
  if (s.pollable) watch(s.watch, s.pollable->fd(), events_for(s.pollable->wait()), kServiceTag | i);
}

void Scheduler::for_each_service(const std::function<void(util::Pollable&)>& call) {
  for (std::size_t i = 0; i < services_.size(); ++i) {
    if (!services_[i].pollable) continue;
    call(*services_[i].pollable);
    settle_service(i);
  }
}

void Scheduler::for_each_running(const std::function<void(Job&)>& call) {
  const auto running = active_;
  for (std::size_t i : running) {
    if (!slots_[i].job) continue;
    call(*slots_[i].job);
    settle(i);
  }
}

void Scheduler::stop_starting() {
  stopping_ = true;
  outcome_.interrupted = true;
  for (std::size_t i = next_; i < workers_; ++i) {
    outcome_.results[i].outcome = Outcome::not_started;
    outcome_.results[i].reason = "not started (interrupted)";
  }
  next_ = workers_;
}

void Scheduler::stop_all(const std::string& why) {
  if (!stop_request_) stop_request_ = why;  // done between events (this may run inside settle())
}

// As a first Ctrl-C, without the notice and without counting as an interrupt;
// what still runs after the second-interrupt window is closed.
void Scheduler::handle_stop_request(Clock::time_point now) {
  if (!stop_request_) return;
  if (!stopped_at_) {
    stopped_at_ = now;
    stopping_ = true;
    for (std::size_t i = next_; i < workers_; ++i) {
      outcome_.results[i].outcome = Outcome::not_started;
      outcome_.results[i].reason = *stop_request_;
    }
    next_ = workers_;
    for_each_running([](Job& job) { job.forward_interrupt(); });
  } else if (now - *stopped_at_ >= second_interrupt_window) {
    for_each_running([](Job& job) { job.interrupt(); });
  }
}

void Scheduler::interrupt_all() {
  stop_starting();
  for_each_running([](Job& job) { job.interrupt(); });
}

void Scheduler::on_signal(int signo, Clock::time_point now) {
  const bool repeated = first_interrupt_ && now - *first_interrupt_ < second_interrupt_window;
  if (signo == SIGINT && !repeated && !outcome_.output_closed) return first_interrupt(now);
  interrupt_all();
}

// Stop starting workers, pass ^C on, and say who is still running.
void Scheduler::first_interrupt(Clock::time_point now) {
  first_interrupt_ = now;
  stop_starting();
  // Counted as they are passed the interrupt: one whose command ends at once
  // (its exit arrived with the same wake-up) was still sent it.
  std::size_t sent = 0;
  for_each_running([&sent](Job& job) {
    if (!job.connecting()) ++sent;
    job.forward_interrupt();
  });
  if (output_ && sent > 0)
    output_->notice("tpush: interrupt sent to " + std::to_string(sent) +
                    " running worker(s); Ctrl-C again within " +
                    std::to_string(second_interrupt_window.count()) + "s to close them\n");
}

void Scheduler::advance_all(Clock::time_point now) {
  for_each_running([now](Job& job) { job.advance(now); });
}

void Scheduler::after_events() {
  if (output_) output_->flush();
  if (after_events_) after_events_();
}

// Reads stdin while there is room, hands it to every job, and lets go of
// what every present and future job has sent.
void Scheduler::pump_input(Clock::time_point now) {
  if (!input_) return;
  std::size_t got = 0;
  while (input_wanted()) {
    const std::size_t n = input_->read_some();
    got += n;
    if (n == 0 || input_->pollable()) break;  // a pipe: one chunk per wake-up
  }
  if (got > 0 || input_->eof()) advance_all(now);
  if (next_ >= workers_) {  // every job started: keep only what the slowest needs
    std::optional<std::uint64_t> slowest;
    for (std::size_t i : active_)
      if (auto off = slots_[i].job->input_offset()) slowest = std::min(slowest.value_or(*off), *off);
    input_->trim(slowest.value_or(input_->total()));
  }
  // Watch the pipe only while there is room for more.
  const bool want = input_->pollable() && input_wanted();
  if (want != input_registered_) {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = kInputTag;
    epoll_ctl(epoll_fd_, want ? EPOLL_CTL_ADD : EPOLL_CTL_DEL, input_->fd(), &ev);
    input_registered_ = want;
  }
}

// Room for more stdin: under the limit, or without limit while some workers
// have not started (they will need it from the beginning).
bool Scheduler::input_wanted() const {
  return !input_->eof() && (input_->held() < input_->limit() || next_ < workers_);
}

void Scheduler::abort_all() {
  outcome_.output_closed = true;
  interrupt_all();
}

RunOutcome Scheduler::run() {
  std::vector<epoll_event> events(256);
  auto now = now_();
  auto next_tick = now + kTick;
  if (input_) {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = kInputTag;
    input_registered_ = epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, input_->fd(), &ev) == 0;
    input_->set_pollable(input_registered_);  // files and /dev/null: EPERM
  }
  start_more(now);
  while (!active_.empty() || (!stopping_ && next_ < workers_)) {
    const auto wait_ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(next_tick - now_()).count();
    // Unpollable input (a file) is read whenever there is room: don't sleep then.
    const bool read_file = input_ && !input_->pollable() && input_wanted();
    // A full buffer drains as jobs send: look again each turn.
    const bool input_full = input_ && !input_->eof() && !input_wanted();
    const int n = epoll_wait(epoll_fd_, events.data(), static_cast<int>(events.size()),
                             read_file ? 0 : static_cast<int>(std::max<long>(0, wait_ms)));
    if (n < 0 && errno != EINTR)
      throw SetupError(std::string("epoll_wait failed: ") + std::strerror(errno));
    now = now_();
    bool resume = false;
    for (int k = 0; k < n; ++k) {
      const std::uint64_t tag = events[k].data.u64;
      if (tag == kSignalTag) {
        signalfd_siginfo info;
        bool any = false;
        while (read(signal_fd_, &info, sizeof info) == sizeof info) {
          any = true;
          on_signal(static_cast<int>(info.ssi_signo), now);
        }
        if (!any) interrupt_all();  // readable, but not a signalfd: stop
      } else if (tag == kInputTag) {
        pump_input(now);
      } else if (tag == kWriterTag) {
        output_->clear_wake();
        if (output_->closed()) {
          if (!outcome_.output_closed) abort_all();
        } else {
          resume = true;
        }
      } else if (tag & kServiceTag) {
        const std::size_t i = static_cast<std::size_t>(tag & ~kServiceTag);
        if (i < services_.size() && services_[i].pollable) services_[i].pollable->advance(now);
      } else if (tag < slots_.size() && slots_[tag].job) {
        slots_[tag].job->advance(now);
        settle(tag);
      }
    }
    // Jobs that stopped reading while the output was congested; libssh2 may
    // hold their data already, so their sockets alone would not wake them.
    if (resume && !output_->closed()) {
      for_each_running([&](Job& job) {
        if (job.paused_for_output() && output_->accepting()) job.advance(now);
      });
    }
    if (now >= next_tick) {
      for_each_service([now](util::Pollable& p) { p.tick(now); });
      for_each_running([now](Job& job) { job.tick(now); });
      next_tick = now + kTick;
    }
    // Jobs may have asked a service for something (a jump host for a tunnel).
    for (std::size_t i = 0; i < services_.size(); ++i) settle_service(i);
    if (read_file || input_full) pump_input(now);
    handle_stop_request(now);
    after_events();
    if (output_ && output_->closed() && !outcome_.output_closed) abort_all();
    start_more(now);
  }
  after_events();
  if (const std::string pace = pace_.summary(); !pace.empty()) spdlog::debug("{}", pace);
  return std::move(outcome_);
}

}  // namespace tpush::fanout
