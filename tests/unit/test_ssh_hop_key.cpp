// The relay's per-transfer key: OpenSSH itself reads the private key tpush
// writes (ssh-keygen -y derives the same public key), and so does tpush's own
// key reader; every key is new.
#include <doctest/doctest.h>
#include <sys/stat.h>

#include <fstream>

#include "test_support.h"
#include "tpush/ssh/hop_key.h"
#include "tpush/ssh/signing_key.h"
#include "tpush/util/base64.h"

using tpush::ssh::HopKey;
using tpush::ssh::make_hop_key;
using tpush::test::run_shell;

namespace {

// The first two fields ("type base64") of a public key line.
std::string type_and_blob(const std::string& line) {
  const auto first = line.find(' ');
  const auto second = line.find_first_of(" \n", first + 1);
  return line.substr(0, second);
}

}  // namespace

TEST_CASE("hop key: ssh-keygen reads the private key and derives the same public key") {
  REQUIRE_MESSAGE(tpush::test::have_ssh_keygen(), "ssh-keygen (openssh-client) is needed: make deps installs it");
  const HopKey key = make_hop_key("tpush-relay-test");
  CHECK(key.public_line.rfind("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5", 0) == 0);
  CHECK(key.public_line.substr(key.public_line.rfind(' ') + 1) == "tpush-relay-test");
  tpush::test::TempDir dir;
  const std::string path = (dir / "key").string();
  std::ofstream(path) << key.private_text;
  ::chmod(path.c_str(), 0600);
  const auto derived = run_shell("ssh-keygen -y -f '" + path + "' 2>&1");
  CHECK_MESSAGE(derived.status == 0, derived.out);
  CHECK(type_and_blob(derived.out) == type_and_blob(key.public_line));
}

TEST_CASE("hop key: tpush's own reader signs with it, and each key is new") {
  const HopKey a = make_hop_key("a"), b = make_hop_key("b");
  const auto parsed = tpush::ssh::SigningKey::parse(a.private_text, "");
  REQUIRE(parsed);
  const std::string b64 = type_and_blob(a.public_line).substr(12);
  CHECK(tpush::util::base64_encode(parsed->public_blob()) == b64);
  CHECK(type_and_blob(a.public_line) != type_and_blob(b.public_line));
  CHECK(a.private_text != b.private_text);
}
