#include "tpush/ssh/identity/credentials.h"

#include <cerrno>
#include <cstdlib>
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
                                const std::vector<fs::path>& other_files, bool ask, int terminal) {
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
  return c;
}

const KeyFile* Credentials::find(const fs::path& path) const {
  for (const auto& k : keys)
    if (k.path == path) return &k;
  return nullptr;
}

Identities Credentials::all() const {
  Identities ids;
  if (use_agent) ids.agent_socket = "";
  for (const auto& k : keys) ids.keys.push_back(&k);
  return ids;
}

std::string Identities::describe(const fs::path& home) const {
  std::string out = agent_socket ? "agent" : "";
  for (const KeyFile* k : keys)
    out += (out.empty() ? "" : ", ") + shorten_home(k->path, home) +
           (k->unasked ? " (passphrase not asked: every worker's session was kept; run again)" : "");
  return out.empty() ? "no keys found: use -i FILE or ssh-agent" : out;
}

}  // namespace tpush::ssh
