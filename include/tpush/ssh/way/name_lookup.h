// A host name lookup that does not block the event loop.
//
// getaddrinfo() blocks, and for a name it asks the system's resolver: a slow
// or unreachable DNS server holds it for seconds. Done in the event loop, one
// such name would stall every other worker's I/O, its deadlines and Ctrl-C.
// So a NameLookup runs getaddrinfo() on one of a few helper threads and makes
// an eventfd readable when it is done; the loop watches that fd like a socket.
// Address literals never get here (Connection parses them directly).
#pragma once

#include <netdb.h>

#include <memory>
#include <string>

namespace tpush::ssh {

class NameLookup {
 public:
  // Starts looking up `host` (service `port`, numeric) with these hints.
  NameLookup(std::string host, std::string port, const addrinfo& hints);
  // Forgets a lookup still running: its thread finishes it and frees the result.
  ~NameLookup();
  NameLookup(const NameLookup&) = delete;
  NameLookup& operator=(const NameLookup&) = delete;

  // Readable once the lookup is done (stays readable); -1 if no eventfd
  // could be made, in which case done() is already true with an error.
  int fd() const;
  bool done() const;
  // Once done: getaddrinfo's return code, and on success hands over the
  // addresses (the caller frees them with freeaddrinfo).
  int take(addrinfo** addresses);

  // Helper threads; lookups beyond that many wait their turn.
  static constexpr int max_threads = 8;

  struct State;

 private:
  std::shared_ptr<State> state_;
};

}  // namespace tpush::ssh
