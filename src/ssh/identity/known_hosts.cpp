#include "tpush/ssh/identity/known_hosts.h"

#include <fcntl.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <memory>

#include "tpush/ssh/wire.h"
#include "tpush/util/base64.h"
#include "tpush/util/file.h"
#include "tpush/util/pattern.h"
#include "tpush/util/string.h"

namespace tpush::ssh {

namespace {

constexpr size_t kSha1Len = 20;  // salt and HMAC length of |1| hashed names
constexpr std::string_view kBlanks = " \t";

// Splits off the next blank-separated token of `rest`.
std::string_view next_token(std::string_view& rest) {
  const size_t start = rest.find_first_not_of(kBlanks);
  if (start == std::string_view::npos) {
    rest = {};
    return {};
  }
  rest.remove_prefix(start);
  const size_t end = std::min(rest.find_first_of(kBlanks), rest.size());
  std::string_view token = rest.substr(0, end);
  rest.remove_prefix(end);
  return token;
}

// Checks the structure of the key types tpush knows; others (sk-*,
// certificates, ...) are opaque beyond their embedded type name.
bool blob_well_formed(std::string_view type, std::string_view blob) {
  if (type.ends_with("-cert-v01@openssh.com")) return !wire::blob_type(blob).empty();  // opaque here
  const auto parts = wire::strings_of(blob);
  if (type == "ssh-ed25519") return parts && parts->size() == 2 && (*parts)[1].size() == 32;
  if (type == "ssh-rsa") return parts && parts->size() == 3 && !(*parts)[1].empty() && !(*parts)[2].empty();
  if (type.starts_with("ecdsa-sha2-nistp"))
    return parts && parts->size() == 3 && (*parts)[1] == type.substr(std::string_view("ecdsa-sha2-").size()) &&
           !(*parts)[2].empty();
  return !wire::blob_type(blob).empty();
}

// The type a key is compared under: the blob's own type when it has one
// (so "rsa-sha2-512" from a signature algorithm still means "ssh-rsa").
std::string effective_type(const HostKey& key) {
  std::string type = wire::blob_type(key.blob);
  if (!type.empty()) return type;
  if (key.type == "rsa-sha2-256" || key.type == "rsa-sha2-512") return "ssh-rsa";
  return key.type;
}

std::optional<HostKey> parse_key_fields(std::string_view text, std::string& error) {
  std::string_view rest = text;
  const std::string_view type = next_token(rest);
  const std::string_view encoded = next_token(rest);
  if (type.empty()) {
    error = "missing key";
    return std::nullopt;
  }
  if (type.find_first_not_of("0123456789") == std::string_view::npos) {
    error = "unsupported SSH protocol 1 key";
    return std::nullopt;
  }
  if (encoded.empty()) {
    error = "missing key data after type '" + std::string(type) + "'";
    return std::nullopt;
  }
  std::optional<std::string> blob = util::base64_decode(encoded);
  if (!blob) {
    error = "invalid base64 in key";
    return std::nullopt;
  }
  const std::string embedded = wire::blob_type(*blob);
  if (embedded != type) {
    error = "key type '" + std::string(type) + "' does not match the key's own type '" +
            embedded + "'";
    return std::nullopt;
  }
  if (!blob_well_formed(type, *blob)) {
    error = "malformed " + std::string(type) + " key";
    return std::nullopt;
  }
  return HostKey{std::string(type), std::move(*blob)};
}

// HMAC-SHA1 (RFC 2104) over a fetched-once SHA-1 and a per-thread digest
// context: the one-shot HMAC() fetches its algorithm on every call, which is
// the bulk of the cost when every hashed line is tried for hundreds of hosts.
bool hmac_sha1(std::string_view key, std::string_view data,
               std::array<unsigned char, kSha1Len>& out) {
  constexpr size_t kBlock = 64;
  static EVP_MD* const sha1 = EVP_MD_fetch(nullptr, "SHA1", nullptr);
  struct CtxDeleter {
    void operator()(EVP_MD_CTX* c) const { EVP_MD_CTX_free(c); }
  };
  thread_local std::unique_ptr<EVP_MD_CTX, CtxDeleter> ctx(EVP_MD_CTX_new());
  if (sha1 == nullptr || !ctx) return false;

  if (key.size() > kBlock) return false;  // salts are 20 bytes; longer keys would need hashing
  std::array<unsigned char, kBlock> k{};
  std::memcpy(k.data(), key.data(), key.size());
  unsigned int len = 0;
  std::array<unsigned char, kBlock> pad{};
  std::array<unsigned char, kSha1Len> inner{};
  for (size_t i = 0; i < kBlock; ++i) pad[i] = k[i] ^ 0x36;
  if (EVP_DigestInit_ex(ctx.get(), sha1, nullptr) != 1 ||
      EVP_DigestUpdate(ctx.get(), pad.data(), pad.size()) != 1 ||
      EVP_DigestUpdate(ctx.get(), data.data(), data.size()) != 1 ||
      EVP_DigestFinal_ex(ctx.get(), inner.data(), &len) != 1 || len != kSha1Len)
    return false;
  for (size_t i = 0; i < kBlock; ++i) pad[i] = k[i] ^ 0x5c;
  if (EVP_DigestInit_ex(ctx.get(), sha1, nullptr) != 1 ||
      EVP_DigestUpdate(ctx.get(), pad.data(), pad.size()) != 1 ||
      EVP_DigestUpdate(ctx.get(), inner.data(), inner.size()) != 1 ||
      EVP_DigestFinal_ex(ctx.get(), out.data(), &len) != 1 || len != kSha1Len)
    return false;
  return true;
}

std::vector<std::string> lookup_names(std::string_view host, uint16_t port,
                                      std::span<const std::string> aliases) {
  std::vector<std::string> names;
  names.reserve(1 + aliases.size());
  names.push_back(known_hosts_name(host, port));
  for (const std::string& alias : aliases) names.push_back(known_hosts_name(alias, port));
  return names;
}

std::string errno_text(int err) { return std::strerror(err); }

// mkdir -p with mode 0700 for the directories that do not exist yet.
std::string make_parent_dirs(const std::filesystem::path& dir) {
  if (dir.empty()) return {};
  std::filesystem::path partial;
  for (const auto& part : dir) {
    partial /= part;
    if (::mkdir(partial.c_str(), 0700) != 0 && errno != EEXIST)
      return "cannot create directory " + partial.string() + ": " + errno_text(errno);
  }
  return {};
}


}  // namespace

std::string fingerprint_sha256(std::string_view blob) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> md{};
  unsigned int len = 0;
  if (EVP_Digest(blob.data(), blob.size(), md.data(), &len, EVP_sha256(), nullptr) != 1)
    return "SHA256:?";
  return "SHA256:" +
         util::base64_encode(std::string_view(reinterpret_cast<const char*>(md.data()), len),
                             /*pad=*/false);
}

std::optional<HostKey> parse_public_key(std::string_view text) {
  std::string error;
  return parse_key_fields(text, error);
}

std::string known_hosts_name(std::string_view host, uint16_t port) {
  if (port == 0 || port == 22) return util::ascii_lowercase(host);
  return "[" + util::ascii_lowercase(host) + "]:" + std::to_string(port);
}

// `|1|base64(salt)|base64(HMAC-SHA1(salt, name))` into the entry; false when
// the field is not that.
bool KnownHosts::parse_hashed_name(std::string_view field, Entry& entry) {
  std::optional<std::string> salt, mac;
  if (field.starts_with("|1|")) {
    field.remove_prefix(3);
    const size_t bar = field.find('|');
    if (bar != std::string_view::npos) {
      salt = util::base64_decode(field.substr(0, bar));
      mac = util::base64_decode(field.substr(bar + 1));
    }
  }
  if (!salt || !mac || salt->size() != kSha1Len || mac->size() != kSha1Len) return false;
  entry.hashed = true;
  std::memcpy(entry.salt.data(), salt->data(), kSha1Len);
  std::memcpy(entry.hmac.data(), mac->data(), kSha1Len);
  return true;
}

bool KnownHosts::parse_line(std::string_view rest, Entry& entry, std::string& why) {
  why.clear();
  if (!rest.empty() && rest.back() == '\r') rest.remove_suffix(1);
  const size_t start = rest.find_first_not_of(kBlanks);
  if (start == std::string_view::npos || rest[start] == '#') return false;

  std::string_view hosts = next_token(rest);
  if (hosts.front() == '@') {
    if (hosts == "@cert-authority") {
      entry.marker = Marker::cert_authority;
    } else if (hosts == "@revoked") {
      entry.marker = Marker::revoked;
    } else {
      why = "unknown marker '" + std::string(hosts) + "'";
      return false;
    }
    hosts = next_token(rest);
    if (hosts.empty()) {
      why = "missing host names after marker";
      return false;
    }
  }
  if (hosts.front() != '|') {
    entry.hosts = std::string(hosts);
  } else if (!parse_hashed_name(hosts, entry)) {
    why = "malformed hashed host name";
    return false;
  }
  std::optional<HostKey> key = parse_key_fields(rest, why);
  if (!key) return false;
  entry.key = std::move(*key);
  return true;
}

void KnownHosts::load(const std::filesystem::path& file) {
  const std::string file_name = file.string();
  std::error_code ec;
  if (std::filesystem::is_directory(file, ec)) {
    warnings_.push_back(file_name + ": is a directory, not a known_hosts file");
    return;
  }
  if (!std::filesystem::exists(file, ec)) {
    if (ec && ec != std::errc::no_such_file_or_directory && ec != std::errc::not_a_directory)
      warnings_.push_back(file_name + ": cannot read: " + ec.message());
    return;  // a missing file is just an empty one
  }
  errno = 0;
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    warnings_.push_back(file_name + ": cannot read: " +
                        (errno != 0 ? errno_text(errno) : std::string("open failed")));
    return;
  }

  const auto file_index = static_cast<uint32_t>(files_.size());
  files_.push_back(file_name);
  kept_matches_.clear();

  std::string raw, why;
  int line_no = 0;
  while (std::getline(in, raw)) {
    ++line_no;
    Entry entry;
    entry.file = file_index;
    entry.line = line_no;
    if (parse_line(raw, entry, why)) entries_.push_back(std::move(entry));
    else if (!why.empty()) warnings_.push_back(file_name + ":" + std::to_string(line_no) + ": " + why);
  }
  if (in.bad()) warnings_.push_back(file_name + ": read error after line " + std::to_string(line_no));
}

bool KnownHosts::entry_matches(const Entry& entry, const std::vector<std::string>& names) const {
  for (const std::string& name : names) {
    if (entry.literal) {
      if (entry.hosts == name) return true;
    } else if (entry.hashed) {
      std::array<unsigned char, kSha1Len> mac{};
      const std::string_view salt(reinterpret_cast<const char*>(entry.salt.data()), kSha1Len);
      if (hmac_sha1(salt, name, mac) && CRYPTO_memcmp(mac.data(), entry.hmac.data(), kSha1Len) == 0)
        return true;
    } else if (util::pattern_list_match(name, entry.hosts, /*lower_patterns=*/true) ==
               util::PatternListMatch::positive) {  // `name` is lowercase already
      return true;
    }
  }
  return false;
}

std::vector<uint32_t> KnownHosts::matching(const std::vector<std::string>& names, bool keep) const {
  std::string joined;
  for (const std::string& name : names) joined.append(name).push_back('\n');
  if (auto it = kept_matches_.find(joined); it != kept_matches_.end()) {
    std::vector<uint32_t> found = keep ? it->second : std::move(it->second);
    if (!keep) kept_matches_.erase(it);
    return found;
  }
  std::vector<uint32_t> found;
  for (uint32_t i = 0; i < entries_.size(); ++i)
    if (entries_[i].marker == Marker::none && entry_matches(entries_[i], names)) found.push_back(i);
  if (keep) kept_matches_[std::move(joined)] = found;
  return found;
}

void KnownHosts::locate(const Entry& entry, HostKeyCheck& result) const {
  result.file = files_[entry.file];
  result.line = entry.line;
}

HostKeyCheck KnownHosts::check(std::string_view host, uint16_t port, const HostKey& key,
                               std::span<const std::string> aliases) const {
  HostKeyCheck result;
  const std::vector<std::string> names = lookup_names(host, port, aliases);
  const std::vector<uint32_t> matches = matching(names, /*keep=*/false);

  // A revoked key is revoked for every host, and wins over any match.
  if (auto revoked = check_revoked(key.blob); revoked.status == HostKeyStatus::revoked) return revoked;

  const std::string type = effective_type(key);
  const Entry* same_type = nullptr;
  const Entry* other_type = nullptr;
  for (const uint32_t i : matches) {
    const Entry& e = entries_[i];
    if (e.key.blob == key.blob) {
      result.status = HostKeyStatus::match;
      locate(e, result);
      return result;
    }
    if (effective_type(e.key) == type) {
      if (!same_type) same_type = &e;
    } else if (!other_type) {
      other_type = &e;
    }
  }

  const Entry* shown = same_type ? same_type : other_type;
  result.status = same_type ? HostKeyStatus::mismatch : HostKeyStatus::unknown;
  if (shown) {
    result.expected_type = effective_type(shown->key);
    result.expected_fingerprint = fingerprint_sha256(shown->key.blob);
    locate(*shown, result);
  }
  return result;
}

HostKeyCheck KnownHosts::check_revoked(std::string_view blob) const {
  HostKeyCheck result;
  for (const Entry& e : entries_) {
    if (e.marker == Marker::revoked && e.key.blob == blob) {
      result.status = HostKeyStatus::revoked;
      locate(e, result);
      break;
    }
  }
  return result;
}

HostKeyCheck KnownHosts::check_authority(std::string_view host, uint16_t port, std::string_view authority,
                                         std::span<const std::string> aliases) const {
  HostKeyCheck result = check_revoked(authority);
  if (result.status == HostKeyStatus::revoked) return result;
  const std::vector<std::string> names = lookup_names(host, port, aliases);
  for (const Entry& e : entries_) {
    if (e.marker == Marker::cert_authority && e.key.blob == authority && entry_matches(e, names)) {
      result.status = HostKeyStatus::match;
      locate(e, result);
      return result;
    }
  }
  return result;
}

bool KnownHosts::has_authority(std::string_view host, uint16_t port, std::span<const std::string> aliases) const {
  const std::vector<std::string> names = lookup_names(host, port, aliases);
  return std::any_of(entries_.begin(), entries_.end(), [&](const Entry& e) {
    return e.marker == Marker::cert_authority && entry_matches(e, names);
  });
}

std::vector<std::string> KnownHosts::known_types(std::string_view host, uint16_t port,
                                                 std::span<const std::string> aliases) const {
  const std::vector<std::string> names = lookup_names(host, port, aliases);
  std::vector<std::string> types;
  for (const uint32_t i : matching(names, /*keep=*/true)) {
    std::string type = effective_type(entries_[i].key);
    if (std::find(types.begin(), types.end(), type) == types.end()) types.push_back(std::move(type));
  }
  return types;
}

void KnownHosts::add(std::string_view host, uint16_t port, const HostKey& key) {
  Entry entry;
  entry.literal = true;
  entry.hosts = known_hosts_name(host, port);
  entry.key = HostKey{effective_type(key), key.blob};
  entries_.push_back(std::move(entry));
  kept_matches_.clear();
}

std::string append_known_host(const std::filesystem::path& file, std::string_view host,
                              uint16_t port, const HostKey& key) {
  try {
    const std::string type = effective_type(key);
    if (key.blob.empty() || type.empty()) return "cannot record an empty host key";
    if (type.find_first_of(" \t\r\n") != std::string::npos) return "invalid host key type";

    std::array<unsigned char, kSha1Len> salt{};
    if (RAND_bytes(salt.data(), static_cast<int>(salt.size())) != 1)
      return "cannot generate a random salt for the hashed host name";
    const std::string_view salt_bytes(reinterpret_cast<const char*>(salt.data()), salt.size());
    std::array<unsigned char, kSha1Len> mac{};
    if (!hmac_sha1(salt_bytes, known_hosts_name(host, port), mac))
      return "cannot compute HMAC-SHA1 for the hashed host name";
    const std::string line =
        "|1|" + util::base64_encode(salt_bytes) + "|" +
        util::base64_encode(std::string_view(reinterpret_cast<const char*>(mac.data()), mac.size())) +
        " " + type + " " + util::base64_encode(key.blob) + "\n";

    if (std::string err = make_parent_dirs(file.parent_path()); !err.empty()) return err;

    const int fd = ::open(file.c_str(), O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) return "cannot open " + file.string() + ": " + errno_text(errno);
    std::string error;
    int rc;
    while ((rc = ::flock(fd, LOCK_EX)) != 0 && errno == EINTR) {
    }
    if (rc != 0) {
      error = "cannot lock " + file.string() + ": " + errno_text(errno);
    } else {
      // Don't glue our line onto a last line that lacks its newline.
      std::string prefix;
      struct stat st{};
      char last = '\n';
      if (::fstat(fd, &st) == 0 && st.st_size > 0 && ::pread(fd, &last, 1, st.st_size - 1) == 1 &&
          last != '\n')
        prefix = "\n";
      if (!util::write_all(fd, prefix + line))
        error = "cannot write " + file.string() + ": " + errno_text(errno);
    }
    if (::close(fd) != 0 && error.empty())
      error = "cannot write " + file.string() + ": " + errno_text(errno);
    return error;
  } catch (const std::exception& e) {
    return std::string("cannot record host key: ") + e.what();
  }
}

}  // namespace tpush::ssh
