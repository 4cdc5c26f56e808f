#include "tpush/ssh/identity/certificate.h"

#include <array>

#include "tpush/ssh/identity/signature_check.h"
#include "tpush/ssh/wire.h"

namespace tpush::ssh {
namespace {

constexpr std::string_view kCertSuffix = "-cert-v01@openssh.com";

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
  if (is_certificate_type(algorithm)) algorithm.remove_suffix(kCertSuffix.size());
  return algorithm;
}

bool is_certificate_type(std::string_view type) {
  return type.size() > kCertSuffix.size() && type.ends_with(kCertSuffix);
}

std::optional<Certificate> Certificate::parse(std::string_view blob) {
  wire::Reader r(blob);
  const auto type = r.string();
  if (!type || !is_certificate_type(*type)) return std::nullopt;
  const std::string_view plain = plain_signature_algorithm(*type);
  const int fields = key_field_count(plain);
  if (fields == 0 || !r.string()) return std::nullopt;  // the nonce

  Certificate cert;
  cert.blob = blob;
  wire::put_string(cert.key_blob, plain);
  for (int i = 0; i < fields; ++i) {
    const auto field = r.string();
    if (!field) return std::nullopt;
    wire::put_string(cert.key_blob, *field);
  }
  const auto serial = r.u64();
  const auto kind = r.u32();
  const auto key_id = r.string();
  const auto principals = r.string();
  const auto valid_after = r.u64();
  const auto valid_before = r.u64();
  const auto critical = r.string();
  const auto extensions = r.string();
  const auto reserved = r.string();
  const auto authority = r.string();
  if (!serial || !kind || !key_id || !principals || !valid_after || !valid_before || !critical || !extensions ||
      !reserved || !authority)
    return std::nullopt;
  cert.signed_length = blob.size() - r.rest().size();
  const auto signature = r.string();
  if (!signature || !r.rest().empty()) return std::nullopt;
  if (*kind != static_cast<std::uint32_t>(Kind::user) && *kind != static_cast<std::uint32_t>(Kind::host))
    return std::nullopt;

  const auto names = wire::strings_of(*principals);
  const auto options = wire::strings_of(*critical);  // name, data, name, data, ...
  if (!names || !options || options->size() % 2 != 0) return std::nullopt;
  for (const std::string_view name : *names) cert.principals.emplace_back(name);
  for (std::size_t i = 0; i < options->size(); i += 2) cert.critical_options.emplace_back((*options)[i]);
  cert.kind = static_cast<Kind>(*kind);
  cert.key_id = *key_id;
  cert.valid_after = *valid_after;
  cert.valid_before = *valid_before;
  cert.authority = *authority;
  cert.signature = *signature;
  return cert;
}

bool Certificate::signed_by_authority() const {
  if (is_certificate_type(wire::blob_type(authority))) return false;  // an authority is a plain key
  return signature_valid(authority, signature, std::string_view(blob).substr(0, signed_length));
}

std::string Certificate::outside_validity(std::time_t now) const {
  const auto when = static_cast<std::uint64_t>(now < 0 ? 0 : now);
  if (when >= valid_before) return "expired " + utc_time(valid_before);
  if (when < valid_after) return "not valid before " + utc_time(valid_after);
  return {};
}

std::string Certificate::principal_problem(std::string_view name, bool required) const {
  if (principals.empty()) return required ? "it lists no principals" : "";
  std::string listed;
  for (const auto& p : principals) {
    if (p == name) return {};
    listed += (listed.empty() ? "" : ", ") + p;
  }
  return "its principals (" + listed + ") do not include '" + std::string(name) + "'";
}

}  // namespace tpush::ssh
