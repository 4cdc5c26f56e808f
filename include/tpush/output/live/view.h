// --live: the run as a full screen with one row per worker (its state, how
// long it has run, its exit, the last line it printed), failures and
// stragglers first, drawn with ncurses on the controlling terminal. Keys come
// from that terminal (the event loop drives the view as a Pollable); redraws
// are paced to at most ~10 a second whatever the workers print. Each worker's
// whole output is kept (up to a bound) so a key can open it and come back.
// When the run ends the screen stays until the user quits; close() leaves it
// and the caller prints the usual summary below.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tpush/fanout/output_sink.h"
#include "tpush/util/pollable.h"

namespace tpush::output {

class LiveView final : public fanout::OutputSink, public util::Pollable {
 public:
  // Takes over the terminal `tty` (an fd open on it, read for keys and drawn on).
  LiveView(std::vector<std::string> labels, int tty);
  ~LiveView() override;
  LiveView(const LiveView&) = delete;
  LiveView& operator=(const LiveView&) = delete;

  // fanout::OutputSink
  void data(std::size_t worker, fanout::Stream stream, std::string_view bytes) override;
  void end(std::size_t worker) override;
  void started(std::size_t worker) override;
  void connected(std::size_t worker) override;
  void finished(std::size_t worker, const fanout::WorkerResult& result) override;
  void flush() override;
  void notice(std::string line) override;
  bool accepting() const override { return true; }
  bool closed() const override { return false; }
  int wake_fd() const override { return -1; }
  void clear_wake() override {}

  // util::Pollable: the terminal's keys, and the paced redraw.
  int fd() const override;
  util::Wait wait() const override;
  void advance(Clock::time_point now) override;
  void tick(Clock::time_point now) override;

  // After the run: shows the final states until the user quits (q), or until
  // a signal (Ctrl-C, hang-up, TERM) arrives on `signal_fd`.
  void hold_until_quit(int signal_fd);
  // Leaves the full screen (idempotent); the terminal is as it was before.
  void close();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tpush::output
