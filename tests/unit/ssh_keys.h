// Keys for the unit tests that sign: made by ssh-keygen in a scratch directory,
// read back the way a .pub file holds them, and the userauth request libssh2
// hands a sign callback.
#pragma once

#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <sstream>
#include <string>

#include "test_support.h"
#include "tpush/ssh/wire.h"
#include "tpush/util/base64.h"

namespace tpush::test {

// A scratch directory where ssh-keygen writes keys (and signs certificates).
struct KeyDir : TempDir {
  // Runs `ssh-keygen -q ARGS`, failing the test when it fails.
  static void keygen(const std::string& args) {
    const std::string cmd = "ssh-keygen -q " + args + " </dev/null >/dev/null 2>&1";
    REQUIRE_MESSAGE(std::system(cmd.c_str()) == 0, cmd);
  }
  // Writes DIR/name and DIR/name.pub with `args` ("-t ed25519 -N ''").
  std::filesystem::path generate(const std::string& name, const std::string& args) const {
    const std::filesystem::path key = *this / name;
    keygen(args + " -C test -f '" + key.string() + "'");
    return key;
  }
};

constexpr std::time_t kJan1_2020 = 1577836800;  // 2020-01-01 00:00:00 UTC, for -V 20200101Z:...

// A scratch directory with a certificate authority ("ca"): keys, and certificates of them.
struct CertDir : KeyDir {
  CertDir() { generate("ca", "-t ed25519 -N ''"); }

  std::filesystem::path key(const std::string& name, const std::string& type = "ed25519") const {
    return generate(name, "-t " + type + " -N ''");
  }
  // ssh-keygen -s: KEY-cert.pub. `options` e.g. "-n alice,bob -V 20200101Z:20200102Z", "-h -n host".
  std::filesystem::path sign(const std::filesystem::path& key, const std::string& options = "-n root") const {
    keygen("-s '" + (*this / "ca").string() + "' -I the-id " + options + " '" + key.string() + ".pub'");
    return key.string() + "-cert.pub";
  }
};

// The base64 field of a public key file ("type base64 comment": a .pub or a
// -cert.pub), decoded.
inline std::string public_key_blob(const std::filesystem::path& file) {
  std::istringstream in(read_file(file));
  std::string type, b64;
  in >> type >> b64;
  auto blob = util::base64_decode(b64);
  REQUIRE(blob);
  return *blob;
}

// A publickey userauth request for root, as libssh2 hands it to the sign callback.
inline std::string userauth_request(const std::string& algorithm, const std::string& blob) {
  using namespace ssh::wire;
  std::string d;
  put_string(d, std::string(32, 'S'));  // session id
  d.push_back(50);                      // SSH_MSG_USERAUTH_REQUEST
  put_string(d, "root");
  put_string(d, "ssh-connection");
  put_string(d, "publickey");
  d.push_back(1);
  put_string(d, algorithm);
  put_string(d, blob);
  return d;
}

}  // namespace tpush::test
