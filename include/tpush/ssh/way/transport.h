// How a worker's SSH session reaches its server when it is not a plain TCP
// connection (ProxyCommand, ProxyJump): a descriptor that carries the SSH byte
// stream, and, when the way there fails, why, naming the jump host or proxy.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>

namespace tpush::util {
class ChildReaper;
}

namespace tpush::ssh {

class Transport {
 public:
  virtual ~Transport() = default;
  // Starts the way there and returns the fd the session speaks SSH on (one end
  // of a socketpair), or -1 when it could not even start (failure() says why).
  // The far end may not be reached yet: bytes written wait until it is.
  virtual int open() = 0;
  // The cause when the way itself failed ("jump host bastion:22: auth failed
  // ..."), which is then the worker's reason; empty when it did not (the
  // server behind it refused, say).
  virtual std::string failure() const = 0;
  // What the way said that may explain a failure (a proxy command's stderr);
  // empty when nothing.
  virtual std::string notes() const { return {}; }
  // The cause when the session failed before a single byte came back: the
  // way never reached the server ("proxy command 'nc %h %p' closed the
  // connection before the server spoke: ..."); empty to keep the session's
  // own reason.
  virtual std::string unanswered() const { return failure(); }
  // Time spent so far waiting for a turn in tpush's own queue (a jump host
  // opens one channel at a time), which is not the worker's: its connect
  // deadline does not count it. waiting_turn(): it waits now.
  virtual std::chrono::steady_clock::duration waited() const { return {}; }
  virtual bool waiting_turn() const { return false; }
  // The session heard its server for the first time: the way is up.
  virtual void answered() {}
  // Starts the way on `fd`, a descriptor of the caller's (it keeps its own
  // copy), instead of a socketpair of its own. False when this way cannot.
  virtual bool open_on(int /*fd*/) { return false; }
  // The worker is done with it: close the fd's far side, stop helpers. Never blocks.
  virtual void close() = 0;
  // The run that opened it ends, but a persist master keeps the session
  // (kept_sessions.h): from now on `reaper` takes its helper when it closes.
  virtual void outlive_run(util::ChildReaper* /*reaper*/) {}
};

// Makes a Transport for each connection attempt of one worker.
using TransportFactory = std::function<std::unique_ptr<Transport>()>;

}  // namespace tpush::ssh
