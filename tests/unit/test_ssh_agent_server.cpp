// The agent tpush serves a sending worker of a relayed copy: what it lists,
// what it signs, and every request it refuses, spoken to in the agent protocol
// as OpenSSH's ssh speaks it (session-bind, then identities, then one sign),
// with keys from ssh-keygen; a key in a real ssh-agent is passed on to it.
// (A worker's real ssh through a real sshd: tests/integration/test_relay*.py.)
#include <doctest/doctest.h>

#include <chrono>
#include <cstdlib>
#include <thread>
#include <filesystem>
#include <string>
#include <vector>

#include "ssh_keys.h"
#include "test_support.h"
#include "tpush/ssh/agent/protocol.h"
#include "tpush/ssh/agent/server.h"
#include "tpush/ssh/identity/signature_check.h"
#include "tpush/ssh/identity/signing_key.h"
#include "tpush/ssh/wire.h"
#include "tpush/util/shell_quote.h"

namespace fs = std::filesystem;
namespace agent = tpush::ssh::agent;
namespace wire = tpush::ssh::wire;
using tpush::ssh::AgentConversation;
using tpush::ssh::AgentPolicy;
using tpush::ssh::LoginIdentity;
using tpush::ssh::PlannedHop;
using tpush::ssh::SigningKey;
using tpush::ssh::signature_valid;

namespace {

struct Keys : tpush::test::KeyDir {
  // A key from ssh-keygen, decoded.
  SigningKey make(const std::string& name, const std::string& type) const {
    const fs::path key = generate(name, "-t " + type + " -N ''");
    auto k = SigningKey::parse(tpush::test::read_file(key), "");
    REQUIRE(k);
    return *k;
  }
};

std::string blob_of(std::string_view algorithm, const std::string& signature) {
  std::string b;
  wire::put_string(b, algorithm);
  wire::put_string(b, signature);
  return b;
}

// What a host sends in KEX: its signature over the session id.
std::string host_signature(const SigningKey& host, const std::string& sid) {
  const std::string type = wire::blob_type(host.public_blob());
  const std::string alg = type == "ssh-rsa" ? "rsa-sha2-512" : type;
  const auto sig = host.sign(alg, sid);
  REQUIRE(sig);
  return blob_of(alg, *sig);
}

std::string bind_message(const std::string& host_key, const std::string& sid, const std::string& signature,
                         bool forwarding = false) {
  std::string body;
  wire::put_string(body, "session-bind@openssh.com");
  wire::put_string(body, host_key);
  wire::put_string(body, sid);
  wire::put_string(body, signature);
  body.push_back(forwarding ? 1 : 0);
  return agent::frame(agent::kExtension, body);
}

std::string userauth(const std::string& sid, const std::string& user, const std::string& key,
                     const std::string& algorithm, const std::string& host_key = "") {
  std::string d;
  wire::put_string(d, sid);
  d.push_back(50);
  wire::put_string(d, user);
  wire::put_string(d, "ssh-connection");
  wire::put_string(d, host_key.empty() ? "publickey" : "publickey-hostbound-v00@openssh.com");
  d.push_back(1);
  wire::put_string(d, algorithm);
  wire::put_string(d, key);
  if (!host_key.empty()) wire::put_string(d, host_key);
  return d;
}

std::string sign_message(const std::string& key, const std::string& data, std::uint32_t flags = 0) {
  std::string body;
  wire::put_string(body, key);
  wire::put_string(body, data);
  wire::put_u32(body, flags);
  return agent::frame(agent::kSignRequest, body);
}

// The reply the conversation wrote, taken off its output.
std::string reply(AgentConversation& c) {
  bool bad = false;
  auto m = agent::take_message(c.output(), bad);
  REQUIRE(m);
  return *m;
}

// The signature blob in a SIGN_RESPONSE.
std::string signature_in(const std::string& response) {
  REQUIRE(static_cast<std::uint8_t>(response[0]) == agent::kSignResponse);
  wire::Reader r(std::string_view(response).substr(1));
  const auto blob = r.string();
  REQUIRE(blob);
  return std::string(*blob);
}

const std::string kFailure(1, char(agent::kFailure)), kSuccess(1, char(agent::kSuccess));

// One sending worker with one planned hop, to "w1" as "me".
struct Setup {
  Keys keys;
  SigningKey user = keys.make("user", "ed25519");
  SigningKey host = keys.make("host", "ed25519");
  SigningKey other_host = keys.make("other", "ed25519");
  std::vector<std::string> said;
  AgentPolicy policy{[this](const std::string& line) { said.push_back(line); }};
  std::string sid = std::string(64, 'S');

  Setup() { policy.plan(PlannedHop{"w1", host.public_blob(), "me", LoginIdentity{user.public_blob(), &user, {}, "~/.ssh/id"}}); }
  std::string bind() const { return bind_message(host.public_blob(), sid, host_signature(host, sid)); }
  std::string login(const std::string& on_sid) const {
    return sign_message(user.public_blob(),
                        userauth(on_sid, "me", user.public_blob(), "ssh-ed25519", host.public_blob()));
  }
  bool said_like(const std::string& part) const {
    for (const auto& l : said)
      if (l.find(part) != std::string::npos) return true;
    return false;
  }
};

}  // namespace

TEST_CASE("agent: a hop's bound login is signed once, for that host and session only") {
  Setup s;
  AgentConversation c(s.policy);
  c.receive(s.bind());
  CHECK(reply(c) == kSuccess);
  c.receive(agent::frame(agent::kRequestIdentities));
  std::string expected_list;
  wire::put_u32(expected_list, 1);
  wire::put_string(expected_list, s.user.public_blob());
  wire::put_string(expected_list, "tpush relay");
  CHECK(reply(c) == std::string(1, char(agent::kIdentitiesAnswer)) + expected_list);

  const std::string data = userauth(s.sid, "me", s.user.public_blob(), "ssh-ed25519", s.host.public_blob());
  c.receive(sign_message(s.user.public_blob(), data));
  CHECK(signature_valid(s.user.public_blob(), signature_in(reply(c)), data));
  CHECK(s.said_like("signed the login to w1 as 'me' with ~/.ssh/id"));

  c.receive(sign_message(s.user.public_blob(), data));
  CHECK(reply(c) == kFailure);
  CHECK(s.said_like("a second login to w1"));
  // and no hop is left to list
  c.receive(agent::frame(agent::kRequestIdentities));
  CHECK(reply(c) == std::string(1, char(agent::kIdentitiesAnswer)) + std::string(4, '\0'));
}

TEST_CASE("agent: what a worker may not have signed is refused, one line each") {
  Setup s;
  SUBCASE("a host that is no planned hop") {
    AgentConversation c(s.policy);
    c.receive(bind_message(s.other_host.public_blob(), s.sid, host_signature(s.other_host, s.sid)));
    CHECK(reply(c) == kFailure);
    CHECK(s.said_like("no planned hop"));
    c.receive(sign_message(s.user.public_blob(), userauth(s.sid, "me", s.user.public_blob(), "ssh-ed25519")));
    CHECK(reply(c) == kFailure);  // nothing after a refused bind
  }
  SUBCASE("a bind whose signature is not the host's") {
    AgentConversation c(s.policy);
    c.receive(bind_message(s.host.public_blob(), s.sid, host_signature(s.other_host, s.sid)));
    CHECK(reply(c) == kFailure);
    CHECK(s.said_like("does not check out"));
  }
  SUBCASE("a worker that would forward the agent further") {
    AgentConversation c(s.policy);
    c.receive(bind_message(s.host.public_blob(), s.sid, host_signature(s.host, s.sid), true));
    CHECK(reply(c) == kFailure);
    CHECK(s.said_like("forward the agent further"));
  }
  SUBCASE("a login for another session than the bound one") {
    AgentConversation c(s.policy);
    c.receive(s.bind());
    CHECK(reply(c) == kSuccess);
    c.receive(s.login(std::string(64, 'X')));
    CHECK(reply(c) == kFailure);
    CHECK(s.said_like("another session"));
  }
  SUBCASE("a login as another user") {
    AgentConversation c(s.policy);
    c.receive(s.bind());
    reply(c);
    c.receive(sign_message(s.user.public_blob(), userauth(s.sid, "root", s.user.public_blob(), "ssh-ed25519")));
    CHECK(reply(c) == kFailure);
    CHECK(s.said_like("as 'root'"));
  }
  SUBCASE("anything that is not a login") {
    AgentConversation c(s.policy);
    c.receive(sign_message(s.user.public_blob(), "a commit to sign"));
    CHECK(reply(c) == kFailure);
    CHECK(s.said_like("not a login"));
    c.receive(agent::frame(17));  // ADD_IDENTITY
    CHECK(reply(c) == kFailure);
  }
  SUBCASE("a second bind") {
    AgentConversation c(s.policy);
    c.receive(s.bind());
    reply(c);
    c.receive(s.bind());
    CHECK(reply(c) == kFailure);
  }
  SUBCASE("bytes that are no agent message") {
    AgentConversation c(s.policy);
    c.receive(std::string("\xff\xff\xff\xff", 4));
    CHECK(c.broken());
  }
}

TEST_CASE("agent: an ssh without session-bind gets one login per hop, and -v says so") {
  Setup s;
  AgentConversation c(s.policy);
  const std::string data = userauth(s.sid, "me", s.user.public_blob(), "ssh-ed25519");
  c.receive(sign_message(s.user.public_blob(), data));
  CHECK(signature_valid(s.user.public_blob(), signature_in(reply(c)), data));
  CHECK(s.said_like("sent no session-bind"));
  AgentConversation again(s.policy);
  again.receive(sign_message(s.user.public_blob(), data));
  CHECK(reply(again) == kFailure);
}

TEST_CASE("agent: RSA signs with the hash its flags ask for, and only that") {
  Setup s;
  const SigningKey rsa = s.keys.make("rsa", "rsa");
  s.policy.hops()[0].identity = LoginIdentity{rsa.public_blob(), &rsa, {}, "~/.ssh/id_rsa"};
  AgentConversation c(s.policy);
  c.receive(s.bind());
  reply(c);
  const std::string data = userauth(s.sid, "me", rsa.public_blob(), "rsa-sha2-512", s.host.public_blob());
  c.receive(sign_message(rsa.public_blob(), data, agent::kRsaSha2_256));
  CHECK(reply(c) == kFailure);  // flags for SHA-256, a request for SHA-512
  c.receive(sign_message(rsa.public_blob(), data, agent::kRsaSha2_512));
  const std::string sig = signature_in(reply(c));
  CHECK(sig.substr(4, 12) == "rsa-sha2-512");
  CHECK(signature_valid(rsa.public_blob(), sig, data));
}

TEST_CASE("agent: host signatures of each key type check out, and a changed byte does not") {
  Keys keys;
  for (const char* type : {"ed25519", "ecdsa", "rsa"}) {
    CAPTURE(type);
    const SigningKey host = keys.make(std::string("h-") + type, type);
    const std::string sid(32, 'i'), sig = host_signature(host, sid);
    CHECK(signature_valid(host.public_blob(), sig, sid));
    CHECK_FALSE(signature_valid(host.public_blob(), sig, std::string(32, 'j')));
    std::string bent = sig;
    bent[bent.size() - 3] ^= 1;
    CHECK_FALSE(signature_valid(host.public_blob(), bent, sid));
  }
}

// A real ssh-agent of the test's own, with the keys given; killed at the end.
struct RealAgent {
  fs::path socket;
  std::string pid;
  RealAgent(const Keys& keys, const std::vector<std::string>& key_names) : socket(keys / "agent.sock") {
    const std::string dir = keys.path().string();
    std::string add;
    for (const auto& k : key_names) add += " && ssh-add -q '" + dir + "/" + k + "' 2>&1";
    const auto started = tpush::test::run_shell("ssh-agent -a '" + socket.string() + "' > '" + dir + "/env' && . '" +
                                                dir + "/env' >/dev/null" + add + " && echo $SSH_AGENT_PID");
    REQUIRE_MESSAGE(started.status == 0, started.out);
    pid = started.out;
  }
  ~RealAgent() { std::system(("kill " + pid).c_str()); }
};

// Polls the conversation as the event loop does, until the agent's answer is in.
void await_agent(AgentConversation& c) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (c.poll() && std::chrono::steady_clock::now() < give_up) std::this_thread::yield();
}

TEST_CASE("agent: a key in the user's agent is passed on to it, and what it answers goes back") {
  Setup s;
  RealAgent agent(s.keys, {"user"});
  s.policy.hops()[0].identity = LoginIdentity{s.user.public_blob(), nullptr, agent.socket.string(), "the agent's ssh-ed25519 key"};
  AgentConversation c(s.policy);
  c.receive(s.bind());
  reply(c);
  const std::string data = userauth(s.sid, "me", s.user.public_blob(), "ssh-ed25519", s.host.public_blob());
  c.receive(sign_message(s.user.public_blob(), data));
  await_agent(c);
  CHECK(signature_valid(s.user.public_blob(), signature_in(reply(c)), data));
  CHECK(s.said_like("on to the user's agent"));
}

TEST_CASE("agent: the user's agent refusing to sign is a refusal, said once") {
  Setup s;
  RealAgent agent(s.keys, {});  // holds no key: it refuses
  s.policy.hops()[0].identity = LoginIdentity{s.user.public_blob(), nullptr, agent.socket.string(), "the agent's key"};
  AgentConversation c(s.policy);
  c.receive(s.bind());
  reply(c);
  c.receive(s.login(s.sid));
  await_agent(c);
  CHECK(reply(c) == kFailure);
  CHECK(s.said_like("the user's agent refused to sign"));
}

TEST_CASE("agent: forwarding (-A) passes every request on, whatever it is") {
  Setup s;
  RealAgent agent(s.keys, {"user"});
  AgentPolicy forwarding(nullptr);
  forwarding.forward_everything_to(agent.socket.string());
  AgentConversation c(forwarding);
  c.receive(agent::frame(agent::kRequestIdentities));
  await_agent(c);
  const std::string answer = reply(c);
  REQUIRE(static_cast<std::uint8_t>(answer[0]) == agent::kIdentitiesAnswer);
  wire::Reader r(std::string_view(answer).substr(1));
  CHECK(r.u32() == 1u);
  CHECK(r.string() == std::string_view(s.user.public_blob()));
  // a sign request no relay hop would get is the user's agent's to answer
  const std::string data = "anything at all";
  c.receive(sign_message(s.user.public_blob(), data));
  await_agent(c);
  CHECK(signature_valid(s.user.public_blob(), signature_in(reply(c)), data));
}
