// The SSH agent protocol (draft-miller-ssh-agent, OpenSSH's PROTOCOL.agent) as
// tpush speaks it on an agent channel a worker opens: framing, the messages it
// reads and writes, and the two payloads it checks before it signs, the
// session-bind extension and the userauth request.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tpush::ssh::agent {

// Message types (OpenSSH authfd.h).
enum : std::uint8_t {
  kFailure = 5,
  kSuccess = 6,
  kRequestIdentities = 11,
  kIdentitiesAnswer = 12,
  kSignRequest = 13,
  kSignResponse = 14,
  kExtension = 27,
};
// SIGN_REQUEST flags for RSA keys.
inline constexpr std::uint32_t kRsaSha2_256 = 0x02, kRsaSha2_512 = 0x04;
// The largest message tpush reads (ssh-agent's AGENT_MAX_LEN).
inline constexpr std::size_t kMaxMessage = 256 * 1024;

// Takes the first whole message (type byte and body, without the length)
// off the front of `buffer`. nullopt: not whole yet. A length of zero or over
// kMaxMessage sets `bad` (the channel is then closed).
std::optional<std::string> take_message(std::string& buffer, bool& bad);
// A message framed for the wire: its length, then `type` and `body`.
std::string frame(std::uint8_t type, std::string_view body = {});
// An IDENTITIES_ANSWER with one key (or none: an empty `blob`).
std::string identities_answer(std::string_view blob, std::string_view comment);
// A SIGN_RESPONSE carrying a signature blob (string alg, string signature).
std::string sign_response(std::string_view algorithm, std::string_view signature);

// session-bind@openssh.com, the body of an EXTENSION after its name.
struct SessionBind {
  std::string host_key;    // blob
  std::string session_id;  // the exchange hash of the worker's connection to the host
  std::string signature;   // the host's signature blob over session_id
  bool forwarding = false;
};
std::optional<SessionBind> parse_session_bind(std::string_view contents);

// A SIGN_REQUEST's body.
struct SignRequest {
  std::string key;   // blob
  std::string data;  // what to sign
  std::uint32_t flags = 0;
};
std::optional<SignRequest> parse_sign_request(std::string_view body);

// The data of a publickey userauth request (RFC 4252 section 7), with OpenSSH's
// publickey-hostbound-v00@openssh.com, which carries the server's host key.
struct UserauthRequest {
  std::string session_id;
  std::string user;
  std::string method;
  std::string algorithm;
  std::string key;       // blob
  std::string host_key;  // blob; hostbound method only
};
// nullopt unless `data` is exactly such a request: service ssh-connection,
// method publickey or the hostbound one, a signature following, nothing after.
std::optional<UserauthRequest> parse_userauth_request(std::string_view data);

// The RSA flags a request for `algorithm` carries (0 for anything else).
std::uint32_t rsa_flags_for(std::string_view algorithm);

}  // namespace tpush::ssh::agent
