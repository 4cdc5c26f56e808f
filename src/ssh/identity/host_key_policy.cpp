#include "tpush/ssh/identity/host_key_policy.h"

#include <ctime>

#include "tpush/ssh/wire.h"
#include "tpush/util/error.h"

namespace tpush::ssh {
namespace {

std::string lookup_name(const HostKeyIdentity& id) {
  return id.aliases.empty() ? id.host : id.aliases.front();
}

std::span<const std::string> other_aliases(const HostKeyIdentity& id) {
  return id.aliases.empty() ? id.aliases : id.aliases.subspan(1);
}

// Like OpenSSH's HostKeyAlias, an alias is recorded bare, whatever the port.
uint16_t lookup_port(const HostKeyIdentity& id) { return id.aliases.empty() ? id.port : 22; }

// "WHAT revoked (FINGERPRINT is marked @revoked in FILE:LINE)".
std::string revoked_reason(const std::string& what, const std::string& fingerprint, const HostKeyCheck& check) {
  return what + " revoked (" + fingerprint + " is marked @revoked in " + check.file + ":" +
         std::to_string(check.line) + ")";
}

// "type SHA256:..." of a key blob.
std::string shown_key(std::string_view blob) { return wire::blob_type(blob) + " " + fingerprint_sha256(blob); }

// The name ssh-keygen -R wants for this entry.
std::string keygen_name(const std::string& host, uint16_t port) {
  return port == 22 ? host : "[" + host + "]:" + std::to_string(port);
}

}  // namespace

HostKeyMode parse_host_key_mode(const std::string& text) {
  if (text == "accept-new") return HostKeyMode::accept_new;
  if (text == "yes") return HostKeyMode::yes;
  if (text == "no") return HostKeyMode::no;
  throw UsageError("bad --host-key-check '" + text + "' (use accept-new, yes or no)");
}

HostKeyPolicy::HostKeyPolicy(HostKeyMode mode, std::filesystem::path user_file,
                             std::vector<std::filesystem::path> extra_files)
    : mode_(mode), user_file_(std::move(user_file)) {
  if (mode_ == HostKeyMode::no) return;
  known_.load(user_file_);
  for (const auto& f : extra_files) known_.load(f);
}

std::vector<std::string> HostKeyPolicy::known_types(const HostKeyIdentity& id) const {
  std::vector<std::string> types;
  if (id.pinned && *id.pinned)
    if (auto k = parse_public_key(**id.pinned)) types.push_back(k->type);
  if (mode_ != HostKeyMode::no)
    for (auto& t : known_.known_types(lookup_name(id), lookup_port(id), other_aliases(id)))
      types.push_back(t);
  return types;
}

bool HostKeyPolicy::wants_certificate(const HostKeyIdentity& id) const {
  return mode_ != HostKeyMode::no && known_.has_authority(lookup_name(id), lookup_port(id), other_aliases(id));
}

HostKeyPolicy::CertificateCheck HostKeyPolicy::check_certificate(const HostKeyIdentity& id,
                                                                 const Certificate& cert) const {
  CertificateCheck result;
  if (const auto key = known_.check_revoked(cert.key_blob); key.status == HostKeyStatus::revoked) {
    result.refusal = HostKeyVerdict{false, revoked_reason("host key", shown_key(cert.key_blob), key)};
    return result;
  }
  const std::string name = lookup_name(id);
  const auto authority = known_.check_authority(name, lookup_port(id), cert.authority, other_aliases(id));
  if (authority.status == HostKeyStatus::revoked) {
    result.refusal =
        HostKeyVerdict{false, revoked_reason("host certificate's authority", shown_key(cert.authority), authority)};
    return result;
  }
  result.authority_known = authority.status == HostKeyStatus::match;
  if (!cert.signed_by_authority()) {
    result.problem = "its authority's signature does not verify";
  } else if (cert.kind != Certificate::Kind::host) {
    result.problem = "it is a user certificate";
  } else if (!result.authority_known) {
    result.problem = "its authority " + shown_key(cert.authority) + " has no @cert-authority line for " + name;
  } else if (!cert.critical_options.empty()) {
    result.problem = "it has critical options tpush does not know (" + cert.critical_options.front() + ")";
  } else if (auto who = cert.principal_problem(name, /*required=*/true); !who.empty()) {
    result.problem = std::move(who);
  } else {
    result.problem = cert.outside_validity(std::time(nullptr));
  }
  return result;
}

HostKeyVerdict HostKeyPolicy::verify(const HostKeyIdentity& id, const HostKey& offered) {
  if (mode_ == HostKeyMode::no) return {true, {}};
  if (!is_certificate_type(offered.type)) return verify_key(id, offered);
  const auto cert = Certificate::parse(offered.blob);
  if (!cert) return {false, "protocol error (the server's host certificate is malformed)"};
  auto check = check_certificate(id, *cert);
  if (check.refusal) return *check.refusal;
  if (check.problem.empty()) return {true, {}};
  // As OpenSSH: the certified key, checked as a plain one.
  auto verdict = verify_key(id, HostKey{wire::blob_type(cert->key_blob), cert->key_blob});
  const std::string why = "its certificate was not accepted: " + check.problem;
  if (!verdict.accepted) {
    verdict.reason += "; " + why;
  } else if (check.authority_known && verdict.warning.empty()) {
    verdict.warning = "host key accepted as a plain key; " + why;
  }
  return verdict;
}

HostKeyVerdict HostKeyPolicy::verify_key(const HostKeyIdentity& id, const HostKey& offered) {
  const std::string offered_fp = offered.type + " " + fingerprint_sha256(offered.blob);

  if (id.pinned && *id.pinned) {
    auto pinned = parse_public_key(**id.pinned);
    if (pinned && pinned->type == offered.type) {
      if (pinned->blob == offered.blob) return {true, {}};
      return {false, "host key does not match the key gcloud reports (offered " + offered_fp +
                         ", expected " + fingerprint_sha256(pinned->blob) +
                         "; retry with --refresh if the TPU was recreated)"};
    }
  }

  const std::string name = lookup_name(id);
  const uint16_t port = lookup_port(id);
  const auto check = known_.check(name, port, offered, other_aliases(id));
  switch (check.status) {
    case HostKeyStatus::match:
      return {true, {}};
    case HostKeyStatus::revoked:
      return {false, revoked_reason("host key", offered_fp, check)};
    case HostKeyStatus::mismatch:
      return {false, "host key changed (offered " + offered_fp + ", expected " +
                         check.expected_type + " " + check.expected_fingerprint + " at " +
                         check.file + ":" + std::to_string(check.line) +
                         "; if the host was rebuilt: ssh-keygen -R '" +
                         keygen_name(name, port) + "' -f " + check.file + ")"};
    case HostKeyStatus::unknown:
      break;
  }
  if (mode_ == HostKeyMode::yes)
    return {false, "host key unknown (" + offered_fp + " is not in " + user_file_.string() +
                       "; use --host-key-check=accept-new to record it)"};
  known_.add(name, port, offered);
  const std::string err = append_known_host(user_file_, name, port, offered);
  if (!err.empty()) return {true, {}, "could not record the new host key: " + err};
  return {true, {}};
}

}  // namespace tpush::ssh
