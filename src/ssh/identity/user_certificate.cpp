#include "tpush/ssh/identity/user_certificate.h"

namespace tpush::ssh {

std::optional<UserCertificate> UserCertificate::parse(std::string_view blob) {
  auto parsed = Certificate::parse(blob);
  if (!parsed || parsed->kind != Certificate::Kind::user) return std::nullopt;
  UserCertificate cert;
  static_cast<Certificate&>(cert) = std::move(*parsed);
  return cert;
}

std::string UserCertificate::unfit_for(std::string_view user, std::time_t now) const {
  if (auto when = outside_validity(now); !when.empty()) return when;
  return principal_problem(user, /*required=*/false);
}

}  // namespace tpush::ssh
