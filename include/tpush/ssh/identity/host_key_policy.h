// Decides whether a worker's host key is acceptable, like OpenSSH's
// StrictHostKeyChecking: accept-new (default), yes, or no.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "tpush/ssh/identity/certificate.h"
#include "tpush/ssh/identity/known_hosts.h"

namespace tpush::ssh {

enum class HostKeyMode { accept_new, yes, no };

// Parses "accept-new" / "yes" / "no" (UsageError otherwise).
HostKeyMode parse_host_key_mode(const std::string& text);

struct HostKeyIdentity {
  std::string host;
  uint16_t port = 22;
  // gcloud-style aliases: when present, keys are recorded and looked up under
  // these names instead of the address (addresses of TPU VMs get recycled).
  std::span<const std::string> aliases;
  const std::optional<std::string>* pinned = nullptr;  // "type base64" from gcloud
};

struct HostKeyVerdict {
  bool accepted = false;
  std::string reason{};   // when refused: "host key changed (...)" etc.
  std::string warning{};  // accepted, but something the user should know
};

class HostKeyPolicy {
 public:
  // `user_file` is read and appended to (~/.ssh/known_hosts); `extra_files` are
  // only read (~/.ssh/google_compute_known_hosts).
  HostKeyPolicy(HostKeyMode mode, std::filesystem::path user_file,
                std::vector<std::filesystem::path> extra_files);

  HostKeyMode mode() const { return mode_; }
  std::vector<std::string> known_types(const HostKeyIdentity& id) const;
  // True when an @cert-authority line names the host: ask for its certificate.
  bool wants_certificate(const HostKeyIdentity& id) const;
  // A certificate (`offered` of a "...-cert-v01@openssh.com" type) is accepted
  // when an @cert-authority line for the host names its authority, that
  // authority signed it, and it is a host certificate for the host's name
  // (the alias, else the host as given), valid now, with no critical options,
  // as OpenSSH's check_host_cert(); neither its key nor its authority @revoked.
  // Otherwise its key is checked as a plain key, the reason the certificate
  // was not accepted added to a refusal (or, when an authority was trusted
  // for the host, given as a warning).
  HostKeyVerdict verify(const HostKeyIdentity& id, const HostKey& offered);

 private:
  HostKeyVerdict verify_key(const HostKeyIdentity& id, const HostKey& offered);
  // Why the certificate is not accepted ("" when it is), and whether an
  // authority was trusted for the host at all.
  struct CertificateCheck {
    std::string problem;
    bool authority_known = false;
    std::optional<HostKeyVerdict> refusal;  // its key or its authority revoked: no fallback
  };
  CertificateCheck check_certificate(const HostKeyIdentity& id, const Certificate& cert) const;

  HostKeyMode mode_;
  std::filesystem::path user_file_;
  KnownHosts known_;
};

}  // namespace tpush::ssh
