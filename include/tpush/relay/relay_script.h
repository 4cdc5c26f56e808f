// The worker's side of a relayed copy (tpush cp --relay), as a bash script
// tpush runs on each worker over its own session (src/relay/relay_control.sh),
// and the words they speak.
//
// Every worker of a transfer runs the control script. It reads its setup on
// stdin (the transfer's hop key, the host keys tpush verified, the
// authorized_keys line, the manifest), then:
//   - makes /tmp/tpush-relay-ID/ADDR/ (0700; ADDR is the address the worker
//     was reached at, from $SSH_CONNECTION) with the key and a FIFO per
//     attempt, `in.1` to `in.3`;
//   - adds the hop key to authorized_keys with restrict, expiry-time (an hour)
//     and a forced command that only writes into the FIFO of the attempt the
//     sender names ("tpush-relay N");
//   - says "ready", and waits for orders, one line each:
//       go N -                       receive attempt N from `in.N` (tpush, or
//                                    a sender of its own, feeds it)
//       go N ADDRESS PORT USER ALIAS KEYTYPE KEY
//                                    the same, passing every byte on to that
//                                    worker as it arrives, with the worker's
//                                    own ssh, the hop key, and the host key
//                                    tpush verified for it as the only one
//                                    known
//       quit
//     When an attempt ends, a sender still attached to its FIFO (one that
//     vanished without closing) is let go, and the FIFO removed: a later
//     attempt never reads a stale sender's bytes;
//   - stores each file of the manifest beside its target under a temporary
//     name, checks its size and SHA-256 against the manifest tpush sent
//     (not against anything that came through the chain), sets its mode,
//     renames it over the target;
//   - reports each attempt with lines (RelayReport) ending in "end".
// On exit for any reason (quit, end of stdin, HUP from tpush's hang-up
// watchdog when the connection is lost, INT, TERM) it removes its directory,
// a partly written file, and the authorized_keys line (under flock on the
// key file's directory).
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
};

// The command that runs the control script (behind `exec bash -c`).
// `preserve`: keep each file's mtime (cp -p). `authorized_keys`: the file
// sshd reads the user's keys from ("" = ~/.ssh/authorized_keys).
std::string relay_control_command(const std::string& id, bool preserve, const std::string& authorized_keys);

// The command that writes its stdin into a worker's FIFO for `attempt`: tpush
// runs it to feed a worker itself (a sending worker runs the hop key's forced
// command, which does the same, leaving its pid beside the FIFO). When a
// sender had reached the FIFO before (it went mid-stream), it kills that
// sender instead and exits kFeedCut: the attempt ends short on the worker.
std::string relay_feed_command(const std::string& id, int attempt);
inline constexpr int kFeedCut = 3;

// The authorized_keys line for `public_line` (the control script fills in the
// expiry in the worker's own time zone).
std::string relay_authorized_line(const std::string& id, const std::string& public_line);

// A worker's name in the known hosts of a transfer.
std::string relay_host_alias(const std::string& id, std::size_t worker);

// The setup the control script reads first: a length line, then the fields,
// each ended by a NUL.
std::string relay_setup(const std::string& private_key, const std::string& authorized_line,
                        const std::vector<ManifestEntry>& manifest);

// An order's line ("go 1 -\n", "go 1 ADDRESS PORT USER ALIAS KEYTYPE KEY\n").
std::string relay_go(int attempt, const std::optional<HopTarget>& next);

// One line the control script writes.
struct RelayReport {
  enum class Kind {
    ready,     // set up, waiting for orders
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
