#include "tpush/ssh/agent/protocol.h"

#include "tpush/ssh/wire.h"

namespace tpush::ssh::agent {

std::optional<std::string> take_message(std::string& buffer, bool& bad) {
  if (buffer.size() < 4) return std::nullopt;
  const auto* p = reinterpret_cast<const unsigned char*>(buffer.data());
  const std::uint32_t length = std::uint32_t(p[0]) << 24 | std::uint32_t(p[1]) << 16 | std::uint32_t(p[2]) << 8 | p[3];
  if (length == 0 || length > kMaxMessage) {
    bad = true;
    return std::nullopt;
  }
  if (buffer.size() < 4 + std::size_t(length)) return std::nullopt;
  std::string message = buffer.substr(4, length);
  buffer.erase(0, 4 + std::size_t(length));
  return message;
}

std::string frame(std::uint8_t type, std::string_view body) {
  std::string out;
  wire::put_u32(out, static_cast<std::uint32_t>(body.size() + 1));
  out.push_back(static_cast<char>(type));
  out.append(body);
  return out;
}

std::string identities_answer(std::string_view blob, std::string_view comment) {
  std::string body;
  wire::put_u32(body, blob.empty() ? 0 : 1);
  if (!blob.empty()) {
    wire::put_string(body, blob);
    wire::put_string(body, comment);
  }
  return frame(kIdentitiesAnswer, body);
}

std::string sign_response(std::string_view algorithm, std::string_view signature) {
  std::string blob;
  wire::put_string(blob, algorithm);
  wire::put_string(blob, signature);
  std::string body;
  wire::put_string(body, blob);
  return frame(kSignResponse, body);
}

std::optional<SessionBind> parse_session_bind(std::string_view contents) {
  wire::Reader r(contents);
  const auto key = r.string(), sid = r.string(), sig = r.string();
  const auto forwarding = r.byte();
  if (!forwarding || !r.rest().empty() || key->empty() || sid->empty()) return std::nullopt;
  return SessionBind{std::string(*key), std::string(*sid), std::string(*sig), *forwarding != 0};
}

std::optional<SignRequest> parse_sign_request(std::string_view body) {
  wire::Reader r(body);
  const auto key = r.string(), data = r.string();
  const auto flags = r.u32();
  if (!flags || !r.rest().empty()) return std::nullopt;
  return SignRequest{std::string(*key), std::string(*data), *flags};
}

std::optional<UserauthRequest> parse_userauth_request(std::string_view data) {
  constexpr std::uint8_t kUserauthRequest = 50;  // SSH_MSG_USERAUTH_REQUEST
  constexpr std::string_view kHostbound = "publickey-hostbound-v00@openssh.com";
  wire::Reader r(data);
  UserauthRequest out;
  const auto sid = r.string();
  const auto type = r.byte();
  const auto user = r.string(), service = r.string(), method = r.string();
  const auto signature_follows = r.byte();
  const auto algorithm = r.string(), key = r.string();
  if (!key || sid->empty() || *type != kUserauthRequest || *service != "ssh-connection" || *signature_follows != 1)
    return std::nullopt;
  if (*method == kHostbound) {
    const auto host_key = r.string();
    if (!host_key || host_key->empty()) return std::nullopt;
    out.host_key = std::string(*host_key);
  } else if (*method != "publickey") {
    return std::nullopt;
  }
  if (!r.rest().empty()) return std::nullopt;
  out.session_id = std::string(*sid);
  out.user = std::string(*user);
  out.method = std::string(*method);
  out.algorithm = std::string(*algorithm);
  out.key = std::string(*key);
  return out;
}

std::uint32_t rsa_flags_for(std::string_view algorithm) {
  if (algorithm == "rsa-sha2-256") return kRsaSha2_256;
  if (algorithm == "rsa-sha2-512") return kRsaSha2_512;
  return 0;
}

}  // namespace tpush::ssh::agent
