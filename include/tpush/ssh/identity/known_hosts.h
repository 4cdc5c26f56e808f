// Host key verification with OpenSSH known_hosts semantics.
//
// libssh2's own matcher ignores @revoked, @cert-authority, wildcards and
// negation, lets a plain `host` entry match any port, and stops at the first
// bad line, so tpush reads known_hosts itself and asks libssh2 only for the
// server's raw key blob and type.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace tpush::ssh {

// A public key as a server offered it or a file recorded it.
struct HostKey {
  std::string type;  // "ssh-ed25519", "ecdsa-sha2-nistp256", "ssh-rsa", ...
  std::string blob;  // raw wire-format key blob (bytes)

  bool operator==(const HostKey&) const = default;
};

// "SHA256:" + unpadded base64 of the blob's SHA-256, as `ssh-keygen -l` prints.
std::string fingerprint_sha256(std::string_view blob);

// Parses "type base64 [comment]" (leading/trailing blanks allowed). The type
// must match the type embedded in the blob, and for ed25519, ECDSA and RSA
// the blob must be well formed.
std::optional<HostKey> parse_public_key(std::string_view text);

enum class HostKeyStatus { match, mismatch, unknown, revoked };

struct HostKeyCheck {
  HostKeyStatus status = HostKeyStatus::unknown;
  // mismatch: the first recorded key of the offered type for this host.
  // unknown:  empty, or the first recorded key of another type when only
  //           other types are recorded (OpenSSH's "keys of different type
  //           are already known for this host").
  std::string expected_type, expected_fingerprint;
  // Where the deciding line is: the mismatching / other-type line, the
  // matching line for `match`, the @revoked line for `revoked`. Entries made
  // with add() have an empty file and line 0.
  std::string file;
  int line = 0;
};

class KnownHosts {
 public:
  // Loads a file in OpenSSH known_hosts format; may be called for several
  // files. A missing file is fine. Bad lines (and an unreadable file) are
  // recorded in warnings() as "file:line: reason"; loading never stops early.
  void load(const std::filesystem::path& file);
  const std::vector<std::string>& warnings() const { return warnings_; }

  // Checks `key` for the host as OpenSSH would. The lookup name is `host`
  // for port 22 (or 0), else `[host]:port`, lowercased; a plain `host` entry
  // never matches another port. `aliases` are extra names under the same
  // port rule. Patterns: comma lists, `*`/`?`, `!negation` (excludes the
  // line), hashed `|1|salt|hmac`. A key listed in any @revoked line, for any
  // host, is revoked; @cert-authority lines are for check_authority(). Otherwise the same
  // key on a line for the host is a match; a different key of the same type
  // is a mismatch (first such line); only other types, or no line, is unknown.
  HostKeyCheck check(std::string_view host, uint16_t port, const HostKey& key,
                     std::span<const std::string> aliases = {}) const;

  // Whether `authority` may sign the host's certificates: `match` when an
  // @cert-authority line names the host with that key (`file`/`line` say
  // where), `revoked` when a @revoked line lists the key, else `unknown`.
  HostKeyCheck check_authority(std::string_view host, uint16_t port, std::string_view authority,
                               std::span<const std::string> aliases = {}) const;
  // `revoked` (and where) when a @revoked line lists the key blob, for any
  // host; else `unknown`.
  HostKeyCheck check_revoked(std::string_view blob) const;
  // True when some @cert-authority line names the host: its certificates are
  // asked for first, as OpenSSH does.
  bool has_authority(std::string_view host, uint16_t port, std::span<const std::string> aliases = {}) const;

  // Key types recorded for the host (plain entries only, file order, no
  // duplicates), to order libssh2's host key method preference.
  std::vector<std::string> known_types(std::string_view host, uint16_t port,
                                       std::span<const std::string> aliases = {}) const;

  // Adds an entry for exactly this host/port in memory, so later checks in
  // the same run see it.
  void add(std::string_view host, uint16_t port, const HostKey& key);

 private:
  enum class Marker : uint8_t { none, cert_authority, revoked };
  // One per line; a pod's known_hosts has thousands, so it is kept small.
  struct Entry {
    Marker marker = Marker::none;
    bool hashed = false;   // a "|1|salt|hmac" line: salt and hmac hold it, hosts is empty
    bool literal = false;  // from add(): hosts is one exact lookup name
    uint32_t file = 0;     // index in files_ (add(): none, line 0)
    int line = 0;
    std::array<unsigned char, 20> salt{}, hmac{};
    std::string hosts;
    HostKey key;
  };

  // One line of a file (without its newline) into `entry`: false with `why`
  // empty for a blank line or a comment, with `why` set for a line that is no entry.
  static bool parse_line(std::string_view line, Entry& entry, std::string& why);
  static bool parse_hashed_name(std::string_view field, Entry& entry);
  bool entry_matches(const Entry& entry, const std::vector<std::string>& names) const;
  // Indexes of the unmarked entries naming one of `names`. With hashed lines
  // that is an HMAC per line and name, so the answer for a host is kept from
  // known_types() (before its handshake) for check() (after it), which takes it.
  std::vector<uint32_t> matching(const std::vector<std::string>& names, bool keep) const;
  void locate(const Entry& entry, HostKeyCheck& result) const;

  std::vector<Entry> entries_;
  std::vector<std::string> files_{std::string()};  // files_[0]: none (entries made by add())
  std::vector<std::string> warnings_;
  mutable std::unordered_map<std::string, std::vector<uint32_t>> kept_matches_;
};

// The name OpenSSH looks up and hashes: `host` for port 22 (or 0), else
// `[host]:port`, lowercased.
std::string known_hosts_name(std::string_view host, uint16_t port);

// Appends one hashed line (`|1|salt|hmac type base64`) for host/port/key to
// `file`, creating it with mode 0600 (and missing directories with 0700),
// under O_APPEND and flock() so concurrent tpush processes don't interleave.
// Returns an error message, or "" on success; never throws.
std::string append_known_host(const std::filesystem::path& file, std::string_view host,
                              uint16_t port, const HostKey& key);

}  // namespace tpush::ssh
