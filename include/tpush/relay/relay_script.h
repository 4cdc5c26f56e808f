// The worker's side of a relayed copy (tpush cp --relay), as a bash script
// tpush runs on each worker over its own session (src/relay/relay_control.sh),
// and the words they speak.
//
// Every worker of a transfer runs the control script, on a session channel
// with the agent forwarded (tpush serves it: ssh/agent_server.h). It reads its
// setup on stdin (the hop's one-line receiving command, relay_hop.sh, and the
// manifest), then:
//   - makes a directory of its own, tpush-relay.RANDOM under TMPDIR (else
//     /tmp), with mkdir (never one that was there), everything under umask
//     077, and checks it is a plain path, not a link, owned by the user, mode
//     0700; nothing on its command line names it;
//   - puts there a FIFO per attempt, `in.1` to `in.3`;
//   - says "ready DIRECTORY", and waits for orders, one line each:
//       go N -                       receive attempt N from `in.N` (tpush, or
//                                    a sender of its own, feeds it)
//       go N ADDRESS PORT USER ALIAS KEYTYPE KEY DIRECTORY IDTYPE IDKEY
//                                    the same, passing every byte on to that
//                                    worker as it arrives, with the worker's
//                                    own ssh, logged in as USER with the
//                                    identity IDTYPE IDKEY through the agent
//                                    tpush serves (which signs that one login,
//                                    to that host only), the host key tpush
//                                    pinned for it as the only one known, into
//                                    its FIFO in its DIRECTORY (relay_hop.sh)
//       -                            nothing: tpush is there (kHeartbeatSeconds)
//       quit
//     An attempt is received in the background, so orders are read all along:
//     with none for 45 s (three heartbeats missed: a cut network, tpush
//     stopped or killed without its FIN reaching the worker) the script ends.
//     When an attempt ends, a sender still attached to its FIFO (one that
//     vanished without closing) is let go and stopped, and the FIFO removed: a
//     later attempt never reads a stale sender's bytes. Every writer of a FIFO
//     records itself beside it as "PID START" (START: its start time), so it is
//     stopped only while that pid is still that process;
//   - stores each file of the manifest beside its target in a temporary file
//     of its own (made new by the shell's O_EXCL open, the user's alone), checks its size and
//     SHA-256 against the manifest tpush sent (not against anything that came
//     through the chain), sets its mode, renames it over the target. A copy of
//     one file is written into its temporary file (and passed on) by the
//     FIFO's writer itself, which the script tells where (relay_write.sh): its
//     bytes cross no FIFO and no pipe on the worker;
//   - reports each attempt with lines (RelayReport) ending in "end".
// On exit for any reason (quit, end of stdin, silence, HUP from tpush's hang-up
// watchdog when the connection is lost, INT, TERM) it stops its own process
// group and the writers it recorded, and removes its directory and a partly
// written file. Nothing outside its directory and the copy's targets is
// touched: no key file, no authorized_keys.
#pragma once

#include <cstdint>
#include <ctime>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tpush::relay {

// One thing the transfer creates, in order (parents first).
struct ManifestEntry {
  bool directory = false;
  unsigned mode = 0644;
  std::time_t mtime = 0;
  std::uint64_t size = 0;       // files: the bytes the stream holds for it
  std::string sha256;           // files: lowercase hex
  std::string path;             // as the worker's shell sees it (relative to home, or absolute)
};

// Where a worker passes the bytes on to.
struct HopTarget {
  std::string address;  // as the sending worker reaches it
  int port = 22;
  std::string user;
  std::string alias;     // its name in the sender's known hosts (relay_host_alias)
  std::string host_key;  // "TYPE BASE64", as tpush verified it
  std::string directory; // the relay's directory on it (its "ready" line)
  std::string identity;  // "TYPE BASE64": the public key tpush logged in to it with
};

// The command that runs the control script (behind `exec bash -c`).
// `preserve`: keep each file's mtime (cp -p). A script
// that hears nothing for `silence_seconds` ends, and removes what it made.
// tpush says "-" every kHeartbeatSeconds: the script ends on silence within
// kSilenceSeconds of a cut network.
inline constexpr int kHeartbeatSeconds = 15;
inline constexpr int kSilenceSeconds = 3 * kHeartbeatSeconds;
std::string relay_control_command(bool preserve, int silence_seconds = kSilenceSeconds);

// True for what the control script's "ready" line may name: an absolute path
// of letters, digits, '.', '_', '/' and '-', without "..". Anything else is
// never put in a command.
bool plain_directory(std::string_view path);

// The command that writes its stdin into the FIFO for `attempt` in a worker's
// `directory` (from its "ready" line; a plain_directory(), else it throws):
// tpush runs it to feed a worker itself (a sending worker's hop runs the
// receiving command, relay_hop.sh, which does the same). Each records itself
// beside the FIFO.
// When a sender had reached the FIFO before (it went mid-stream), it stops
// that sender instead and exits kFeedCut: the attempt ends short on the worker.
std::string relay_feed_command(const std::string& directory, int attempt);
inline constexpr int kFeedCut = 3;

// relay_hop.sh as one line: the command a hop runs on the next worker, as
// `exec /bin/sh -c 'THIS' tpush-relay ATTEMPT DIRECTORY`.
std::string relay_hop_script();

// A worker's name in the known hosts of a transfer.
std::string relay_host_alias(const std::string& id, std::size_t worker);

// The setup the control script reads first: a length line, then the fields
// (the hop's command, the manifest), each ended by a NUL.
std::string relay_setup(const std::vector<ManifestEntry>& manifest);

// An order's line ("go 1 -\n", "go 1 ADDRESS PORT USER ALIAS KEYTYPE KEY DIRECTORY IDTYPE IDKEY\n").
std::string relay_go(int attempt, const std::optional<HopTarget>& next);

// One line the control script writes.
struct RelayReport {
  enum class Kind {
    ready,     // set up, waiting for orders; `text`: its directory
    stored,    // every file checked and in place; `text`: milliseconds since its `go`
    failed,    // a file could not be written (`index`, or -1 for the setup): `text` says why
    short_of,  // the stream ended early at file `index`: its sender went away
    mismatch,  // file `index` arrived with other bytes than tpush sent
    hop,       // passing the bytes on failed: `text` has ssh's status and last line
    end,       // the attempt is over
    unknown,   // anything else (a login script's chatter): ignored
  };
  Kind kind = Kind::unknown;
  long index = -1;
  std::string text;
};
RelayReport parse_relay_report(std::string_view line);

}  // namespace tpush::relay
