// The writer thread: a vanished reader, congestion (output/writer).
#include <doctest/doctest.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstddef>
#include <random>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "test_support.h"
#include "tpush/output/writer.h"

namespace {

using tpush::output::Writer;

bool readable(int fd, int timeout_ms) {
  pollfd p{fd, POLLIN, 0};
  return poll(&p, 1, timeout_ms) == 1 && (p.revents & POLLIN);
}

}  // namespace

TEST_CASE("line output: writer notices when the reader of a pipe is gone") {
  std::signal(SIGPIPE, SIG_IGN);
  int p[2];
  REQUIRE(pipe2(p, O_CLOEXEC) == 0);
  close(p[0]);
  {
    Writer writer(p[1], p[1]);
    CHECK_FALSE(writer.reader_gone());
    CHECK_FALSE(readable(writer.wake_fd(), 0));
    writer.write(1, "hello\n");
    CHECK(readable(writer.wake_fd(), 5000));
    CHECK(writer.reader_gone());
    writer.clear_wake();
    CHECK_FALSE(readable(writer.wake_fd(), 0));
    writer.write(2, "dropped\n");  // accepted and dropped, no crash
    writer.drain_and_stop();
    CHECK(writer.reader_gone());
  }
  close(p[1]);
}

TEST_CASE("line output: writer is congested above high water until drained") {
  std::signal(SIGPIPE, SIG_IGN);
  int p[2];
  REQUIRE(pipe2(p, O_CLOEXEC) == 0);
  std::string payload(Writer::high_water + 4096, 'y');
  for (std::size_t i = 0; i < payload.size(); i += 4099) payload[i] = '\n';
  std::string received;
  {
    Writer writer(p[1], p[1]);
    writer.write(1, std::string(1000, 'a'));
    CHECK_FALSE(writer.congested());
    writer.write(1, payload);
    CHECK(writer.congested());
    // Nobody reads the pipe: the writer thread is stuck, the queue stays full.
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    CHECK(writer.congested());
    CHECK_FALSE(readable(writer.wake_fd(), 0));

    const std::size_t want = 1000 + payload.size();
    std::thread reader([&] {
      char buf[1 << 16];
      while (received.size() < want) {
        const ssize_t n = read(p[0], buf, sizeof buf);
        if (n <= 0) break;
        received.append(buf, static_cast<std::size_t>(n));
      }
    });
    CHECK(readable(writer.wake_fd(), 10000));
    CHECK_FALSE(writer.congested());
    CHECK_FALSE(writer.reader_gone());
    writer.clear_wake();
    reader.join();
    writer.drain_and_stop();
  }
  close(p[0]);
  close(p[1]);
  CHECK(received.size() == 1000 + payload.size());
  CHECK(received == std::string(1000, 'a') + payload);
}

TEST_CASE("writer: the status line is erased before other output and costs no congestion") {
  tpush::test::MemFile out, err;  // stdout is not a terminal: only stderr output erases
  {
    Writer w(out.fd(), err.fd());
    w.status("tpush: 1/2 done");
    w.write(1, "w0: line\n");  // not the terminal: the status stays
    w.write(2, "w1: oops\n");  // the terminal: erased first
    w.status("");              // nothing shown: nothing to erase
    w.status("tpush: 2/2 done");
    w.status("");
    w.drain_and_stop();
    CHECK_FALSE(w.congested());
  }
  CHECK(out.contents() == "w0: line\n");
  CHECK(err.contents() == "\rtpush: 1/2 done\033[K\r\033[Kw1: oops\n\rtpush: 2/2 done\033[K\r\033[K");
}

TEST_CASE("writer: many status lines leave the queue's count at zero") {
  tpush::test::MemFile out, err;
  Writer w(out.fd(), err.fd());
  for (int i = 0; i < 1000; ++i) w.status("tpush: " + std::to_string(i));
  w.write(1, "x\n");
  w.drain_and_stop();
  CHECK_FALSE(w.congested());  // a count that went below zero would read as congested forever
}
