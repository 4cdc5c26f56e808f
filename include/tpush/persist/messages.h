// What a persist client and its master say to each other, over a Unix
// SOCK_SEQPACKET socket (one message per send, boundaries kept): a verb and
// NUL-separated fields, and with a run, the client's descriptors (SCM_RIGHTS).
//
//   master -> client   "hello"                 accepted, idle: send the run
//                      "busy"                  serving another run: run directly
//                      "exit" CODE             the run ended with this exit code
//                      "held" TEXT             (to disconnect) what it held; it ends
//   client -> master   "run" PERSIST UMASK ARGC ARGV... ENV...
//                                              + fds cwd, 0, 1, 2 and its terminal if any
//                      "stop", "cont"          the client was stopped (Ctrl-Z), continued
//                      "disconnect"
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

namespace tpush::persist {

struct Message {
  std::vector<std::string> fields;  // fields[0]: the verb
  std::vector<int> fds;             // received descriptors (the receiver owns them)
};

// One message, with `fds` attached. False (errno set) when it could not be
// sent whole (EMSGSIZE: an environment too large for one message).
bool send_message(int sock, const std::vector<std::string>& fields, const std::vector<int>& fds = {});
// The next message; nullopt at EOF or on an error (errno set; EAGAIN when a
// non-blocking socket has none yet).
std::optional<Message> receive_message(int sock);
// Closes every descriptor a message carried.
void close_fds(Message& m);

struct Peer {
  pid_t pid = 0;
  uid_t uid = 0;
};
// Who is at the other end of a connected Unix socket (SO_PEERCRED).
std::optional<Peer> peer_of(int sock);

}  // namespace tpush::persist
