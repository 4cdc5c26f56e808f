#include "tpush/ssh/identity/user_certificate.h"

#include <array>

#include "tpush/ssh/wire.h"

namespace tpush::ssh {
namespace {

constexpr std::string_view kCertSuffix = "-cert-v01@openssh.com";
constexpr std::uint32_t kUserCertificate = 1;  // SSH2_CERT_TYPE_USER

// How many key fields (strings or mpints) follow the nonce, for a plain key type.
int key_field_count(std::string_view plain_type) {
  if (plain_type == "ssh-ed25519") return 1;                 // public key
  if (plain_type == "ssh-rsa") return 2;                     // e, n
  if (plain_type.substr(0, 11) == "ecdsa-sha2-") return 2;  // curve, point
  return 0;
}

std::string utc_time(std::uint64_t seconds) {
  const std::time_t t = static_cast<std::time_t>(seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  std::array<char, 32> text{};
  std::strftime(text.data(), text.size(), "%Y-%m-%d %H:%M:%S UTC", &tm);
  return text.data();
}

}  // namespace

std::string_view plain_signature_algorithm(std::string_view algorithm) {
  if (algorithm.size() > kCertSuffix.size() && algorithm.ends_with(kCertSuffix))
    algorithm.remove_suffix(kCertSuffix.size());
  return algorithm;
}

std::optional<UserCertificate> UserCertificate::parse(std::string_view blob) {
  wire::Reader r(blob);
  const auto type = r.string();
  if (!type || !type->ends_with(kCertSuffix)) return std::nullopt;
  const std::string_view plain = plain_signature_algorithm(*type);
  const int fields = key_field_count(plain);
  if (fields == 0 || !r.string()) return std::nullopt;  // the nonce

  UserCertificate cert;
  cert.blob = blob;
  wire::put_string(cert.key_blob, plain);
  for (int i = 0; i < fields; ++i) {
    const auto field = r.string();
    if (!field) return std::nullopt;
    wire::put_string(cert.key_blob, *field);
  }
  const auto serial = r.u64();
  const auto cert_type = r.u32();
  const auto key_id = r.string();
  const auto principals = r.string();
  const auto valid_after = r.u64();
  const auto valid_before = r.u64();
  if (!serial || !cert_type || !key_id || !principals || !valid_after || !valid_before) return std::nullopt;
  if (*cert_type != kUserCertificate) return std::nullopt;
  // Critical options, extensions, reserved, the authority's key, its signature.
  for (int i = 0; i < 5; ++i)
    if (!r.string()) return std::nullopt;
  if (!r.rest().empty()) return std::nullopt;

  const auto names = wire::strings_of(*principals);
  if (!names) return std::nullopt;
  for (const std::string_view name : *names) cert.principals.emplace_back(name);
  cert.key_id = *key_id;
  cert.valid_after = *valid_after;
  cert.valid_before = *valid_before;
  return cert;
}

std::string UserCertificate::unfit_for(std::string_view user, std::time_t now) const {
  const auto when = static_cast<std::uint64_t>(now < 0 ? 0 : now);
  if (when >= valid_before) return "expired " + utc_time(valid_before);
  if (when < valid_after) return "not valid before " + utc_time(valid_after);
  if (principals.empty()) return {};
  std::string listed;
  for (const auto& p : principals) {
    if (p == user) return {};
    listed += (listed.empty() ? "" : ", ") + p;
  }
  return "its principals (" + listed + ") do not include '" + std::string(user) + "'";
}

}  // namespace tpush::ssh
