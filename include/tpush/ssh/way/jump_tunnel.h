// One worker's way through a jump host: the relay socket the worker's session
// speaks SSH on (one end of a socketpair; the worker holds the other), the
// direct-tcpip channel that carries it, and what waits in each direction.
//
// A tunnel waits in its lane (jump_pool.h) until a session to the jump host
// is free to open its channel; the session that opens it relays it
// (jump_host.h). Until a byte has gone through a channel, the worker's
// session has only written into the socketpair, so a tunnel whose gateway
// could not forward can wait for another, or be handed to a program of its
// own (an IAP tunnel per worker), without the session noticing.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "tpush/ssh/way/direct_channel.h"
#include "tpush/ssh/way/transport.h"


namespace tpush::ssh {

class JumpHost;

struct JumpTunnel {
  using Clock = std::chrono::steady_clock;
  enum class State {
    queued,   // waiting for a channel (or for its own program to start)
    opening,  // its channel open is in flight
    open,     // relayed both ways
    closing,  // the worker is done: the channel is being closed
    done,
    own_way,  // handed to a program of its own (`own_way` below)
  };

  std::string host;
  std::uint16_t port = 22;
  State state = State::queued;
  int relay_fd = -1;        // our end of the worker's socketpair
  unsigned watched = 0;     // epoll events on relay_fd, in the carrier's set
  bool registered = false;  // relay_fd is in the carrier's epoll set
  std::unique_ptr<DirectChannel> channel;  // open, or being closed
  std::string to_channel;   // from the worker, not yet written to the channel
  std::size_t to_channel_sent = 0;
  std::string to_worker;    // from the channel, not yet written to the worker
  std::size_t to_worker_sent = 0;
  bool worker_eof = false;  // the worker closed its side (it is done)
  bool channel_eof = false; // the worker's server sent EOF
  std::string failure;
  // The session that carries its channel (none while queued).
  std::weak_ptr<JumpHost> carrier;
  // Its time in the queue: waiting for a turn is not the worker's time.
  Clock::time_point queued_at{};
  Clock::duration waited{};
  // Gateways that could not reach it; the lane tries the others.
  int gateways_tried = 0;
  // How the worker is reached without a gateway (empty: it is not), and,
  // after every gateway failed, that way (its proxy command on relay_fd),
  // still starting until its server is heard from.
  TransportFactory own_factory;
  std::unique_ptr<Transport> own_way;
  bool own_starting = false;

  bool waiting() const { return state == State::queued && failure.empty() && !worker_eof; }
  Clock::duration waited_so_far(Clock::time_point now) const {
    return state == State::queued ? waited + (now - queued_at) : waited;
  }
};

}  // namespace tpush::ssh
