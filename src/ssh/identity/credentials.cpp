#include "tpush/ssh/identity/credentials.h"

#include <cerrno>
#include <cstdlib>
#include <algorithm>
#include <cstring>
#include <fstream>
#include <sstream>

#include <spdlog/spdlog.h>

#include "tpush/ssh/identity/known_hosts.h"
#include "tpush/ssh/wire.h"
#include "tpush/util/environment.h"
#include "tpush/util/error.h"
#include "tpush/util/file.h"
#include "tpush/util/terminal.h"

namespace tpush::ssh {
namespace fs = std::filesystem;
namespace {

// "type base64 comment" in FILE.pub -> the blob; "" when there is none.
std::string public_blob_of(const fs::path& private_key) {
  const auto text = util::read_file(fs::path(private_key.string() + ".pub"));
  if (!text) return {};
  const auto key = parse_public_key(*text);
  return key ? key->blob : std::string();
}

// The user certificate in `path`; nullopt when there is no such file, or
// (`named` false: a KEY-cert.pub ssh would also pass over) it holds something else.
std::optional<UserCertificate> read_certificate(const fs::path& path, bool named) {
  const auto text = util::read_file(path);
  if (!text) {
    spdlog::debug("certificate {} not read: {}", path.string(), std::strerror(errno));
    return std::nullopt;
  }
  const auto key = parse_public_key(*text);
  auto cert = key ? UserCertificate::parse(key->blob) : std::nullopt;
  if (!cert) {
    if (!named) {
      spdlog::debug("{} is not a user certificate; not offered", path.string());
      return std::nullopt;
    }
    throw UsageError("CertificateFile " + path.string() + ": not an OpenSSH user certificate of an ed25519, " +
                     "ECDSA or RSA key (make one with: ssh-keygen -s CA_KEY -I ID KEY.pub)");
  }
  cert->path = path;
  cert->text = *text;
  while (!cert->text.empty() && (cert->text.back() == '\n' || cert->text.back() == '\r')) cert->text.pop_back();
  return cert;
}

// "ED25519 SHA256:...": a key as ssh-keygen -l names it, for messages.
std::string key_name(const std::string& blob) {
  std::string type = wire::blob_type(blob);
  if (type == "ssh-ed25519") type = "ED25519";
  else if (type == "ssh-rsa") type = "RSA";
  else if (type.starts_with("ecdsa-sha2-")) type = "ECDSA";
  return type + " " + fingerprint_sha256(blob);
}

}  // namespace

std::string shorten_home(const fs::path& p, const fs::path& home) {
  const std::string s = p.string(), h = home.string();
  if (!h.empty() && s.rfind(h + "/", 0) == 0) return "~" + s.substr(h.size());
  return s;
}

std::vector<fs::path> default_identity_files(const fs::path& home) {
  std::vector<fs::path> out;
  for (const char* name : {"id_ed25519", "id_ecdsa", "id_rsa", "google_compute_engine"}) {
    const fs::path p = home / ".ssh" / name;
    std::error_code ec;
    if (fs::exists(p, ec)) out.push_back(p);
  }
  return out;
}

bool is_encrypted_private_key(const std::string& text) {
  if (text.find("ENCRYPTED") != std::string::npos) return true;  // PEM / PKCS#8
  const auto contents = openssh_key_contents(text);
  if (!contents) return false;
  const auto cipher = wire::Reader(*contents).string();
  return cipher && *cipher != "none";
}

Credentials Credentials::gather(const std::vector<fs::path>& identity_files,
                                const std::vector<fs::path>& other_files,
                                const std::vector<fs::path>& certificate_files, bool ask, int terminal) {
  Credentials c;
  c.use_agent = util::env_value("SSH_AUTH_SOCK").has_value();

  auto add = [&](const fs::path& p, bool explicit_file) {
    for (const auto& k : c.keys)
      if (k.path == p) return;
    KeyFile key;
    key.path = p;
    auto text = util::read_file(p);
    if (!text) {
      if (explicit_file)
        throw UsageError("cannot read identity file '" + p.string() + "': " + std::strerror(errno) +
                         " (check the path given to -i)");
      spdlog::debug("identity file {} not read: {}", p.string(), std::strerror(errno));
      return;
    }
    key.private_key = std::move(*text);
    key.encrypted = is_encrypted_private_key(key.private_key);
    c.keys.push_back(std::move(key));
  };
  for (const auto& p : identity_files) add(p, true);
  for (const auto& p : other_files) add(p, false);

  // One prompt per encrypted key, before any connection; never per worker.
  if (!c.use_agent) {
    for (auto it = c.keys.begin(); it != c.keys.end();) {
      if (it->encrypted && !ask) {
        it->unasked = true;
      } else if (it->encrypted) {
        auto pass = util::read_secret_from_tty("Enter passphrase for key '" + it->path.string() + "': ", terminal);
        if (!pass) {
          it = c.keys.erase(it);  // no terminal to ask: the key cannot be used
          continue;
        }
        it->passphrase = *pass;
      }
      ++it;
    }
  }
  for (auto& key : c.keys) {
    if (!key.unasked) key.signing_key = SigningKey::parse(key.private_key, key.passphrase);
    key.public_blob = key.signing_key ? key.signing_key->public_blob() : public_blob_of(key.path);
    spdlog::debug("key {}: {}", key.path.string(),
                  key.unasked        ? "passphrase not asked, not offered"
                  : key.signing_key ? "decoded once, signs for every session"
                                    : "not decoded by tpush, libssh2 reads it per session");
  }
  c.pair_certificates(certificate_files);
  return c;
}

// Reads the certificates beside the keys and those named, each paired with the
// key file that signs for it. `keys` is complete: the pointers stay valid.
void Credentials::pair_certificates(const std::vector<fs::path>& certificate_files) {
  struct Found {
    UserCertificate cert;
    KeyFile* key;
    bool beside;  // KEY-cert.pub: the key's own
  };
  std::vector<Found> found;
  for (auto& key : keys) {
    const fs::path beside(key.path.string() + "-cert.pub");
    auto cert = read_certificate(beside, false);
    if (!cert) continue;
    if (!key.public_blob.empty() && key.public_blob != cert->key_blob)
      throw UsageError("certificate " + beside.string() + " certifies another key (" + key_name(cert->key_blob) +
                       ") than " + key.path.string() + " (" + key_name(key.public_blob) +
                       "): sign " + key.path.string() + ".pub again with ssh-keygen -s, or remove the certificate");
    found.push_back({std::move(*cert), &key, true});
  }
  for (const auto& path : certificate_files) {
    if (std::any_of(found.begin(), found.end(), [&](const Found& f) { return f.cert.path == path; })) continue;
    auto cert = read_certificate(path, true);
    if (!cert) continue;
    KeyFile* holder = nullptr;
    for (auto& key : keys)
      if (key.public_blob == cert->key_blob) holder = &key;
    if (!holder && !use_agent)
      throw UsageError("CertificateFile " + path.string() + " certifies a key (" + key_name(cert->key_blob) +
                       ") that no identity file holds: name its private key with -i or IdentityFile, "
                       "or add it to ssh-agent with its certificate");
    if (!holder) spdlog::debug("certificate {}: its key is in no identity file; the agent's certificates are offered",
                               path.string());
    found.push_back({std::move(*cert), holder, false});
  }
  certificates.reserve(found.size());  // no reallocation below: the pointers to them stay valid
  for (Found& f : found) {
    f.cert.key = f.key;
    certificates.push_back(std::move(f.cert));
    if (f.beside) f.key->certificate = &certificates.back();
  }
}

const KeyFile* Credentials::find(const fs::path& path) const {
  for (const auto& k : keys)
    if (k.path == path) return &k;
  return nullptr;
}

Identities Credentials::all() const {
  Identities ids;
  if (use_agent) ids.agent_socket = "";
  for (const auto& k : keys) {
    ids.keys.push_back(&k);
    if (k.certificate && !k.unasked) ids.certificates.push_back(k.certificate);
  }
  return ids;
}

const UserCertificate* Credentials::find_certificate(const fs::path& path) const {
  for (const auto& c : certificates)
    if (c.path == path) return &c;
  return nullptr;
}

std::string Identities::describe(const fs::path& home) const {
  std::string out;
  for (const UserCertificate* c : certificates) out += (out.empty() ? "" : ", ") + shorten_home(c->path, home);
  if (agent_socket) out += out.empty() ? "agent" : ", agent";
  for (const KeyFile* k : keys)
    out += (out.empty() ? "" : ", ") + shorten_home(k->path, home) +
           (k->unasked ? " (passphrase not asked: every worker's session was kept; run again)" : "");
  return out.empty() ? "no keys found: use -i FILE or ssh-agent" : out;
}

}  // namespace tpush::ssh
