// known_hosts parsing and matching with OpenSSH semantics, cross-checked
// against ssh-keygen (fixed keys generated once with ssh-keygen; live
// ssh-keygen runs where the tool is installed).
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tpush/ssh/identity/known_hosts.h"
#include "tpush/ssh/wire.h"
#include "tpush/util/base64.h"
#include "test_support.h"

namespace fs = std::filesystem;
using tpush::ssh::HostKey;
using tpush::ssh::HostKeyStatus;
using tpush::ssh::KnownHosts;
using tpush::test::have_ssh_keygen;
using tpush::test::read_file;
using tpush::test::TempDir;

namespace {

// Public keys from `ssh-keygen -t ... -N ''`, with `ssh-keygen -lf` output.
constexpr const char* kEd25519 =
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAICKXznhWWF9mpubFHeTqWX290I62a/T3Ib+hnFza0Ksc";
constexpr const char* kEd25519Fp = "SHA256:xzFNsmwYXyLAzcTHP1rbUoNOzyz+5yT/F5dCZPp0Kx0";
constexpr const char* kEd25519B =
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIEtHQfbEcmCkJXzGfwpBTxM2XYixKNHNu+Kw16svxo2C";
constexpr const char* kEd25519BFp = "SHA256:n/TnrKb7ag5H4KxeeknrWsmbRDsRMzdqTfVedc8pPkg";
constexpr const char* kEcdsa256 =
    "ecdsa-sha2-nistp256 "
    "AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAIbmlzdHAyNTYAAABBBLR16qxZGocJ6o3fxTFZ7F7MvaDoHPC3Nmg73eFAv"
    "ldym3/jTBPgZeweEp2qC7Nv6rjuuasAqp5OFGQK60NejaM=";
constexpr const char* kEcdsa256Fp = "SHA256:5PlMxnLLvT2VMksuteTjO0CEsU6qV5raXvJYPGkBrZA";
constexpr const char* kEcdsa384 =
    "ecdsa-sha2-nistp384 "
    "AAAAE2VjZHNhLXNoYTItbmlzdHAzODQAAAAIbmlzdHAzODQAAABhBEjxFpl5XoFiHh+vu/rl55fYgsm22PQhHqEZLVGv7"
    "vJFaXhOvXFsCKkdHuepixSjDA1oI/8tqlEPLHUDI+FXXkTCiShTBcWtu+AIfQbgR8BCLd7pH1VNXPJclHmv0+Wmyw==";
constexpr const char* kEcdsa384Fp = "SHA256:p91A4m1EGtnq4f92m6W491Vz4PdD41Mc59EjuKFVNPc";
constexpr const char* kEcdsa521 =
    "ecdsa-sha2-nistp521 "
    "AAAAE2VjZHNhLXNoYTItbmlzdHA1MjEAAAAIbmlzdHA1MjEAAACFBAC2LChD1spvLQVP2/WY4wOT5JgLlnLY7tKVkBqFc"
    "4sZ1xqObCD1gCV61r6x81caDk5YskfmAJzPRaWCbTJ1iSmn2wH6hUU5roXs43sh5vtzQ4LWA2J/s1WxODlUxqo86xNeeeq"
    "gIuFnfA0dJfXkd/MfsCGFMq7a9k+cazroekQXmL82RA==";
constexpr const char* kEcdsa521Fp = "SHA256:+5/ix+b3IpcTctmRndUaUW0nooqtG0ni/US7r6SQRCQ";
constexpr const char* kRsa =
    "ssh-rsa "
    "AAAAB3NzaC1yc2EAAAADAQABAAABgQDs+Pic+mIxh0Y+TcHJsPkaavontSPNnartjDoi8x0shcIl8Nor17FwzdbQ6e51k5"
    "z1WtGl8sKNpAKcGsdqQQ8RYHXMgiDWRXOY905k0IxuT4jbGMKkmz4UvD/nq8BbqvvpMTDGQr+mHoYx4GFGLmQV+f8B4Yg4"
    "PJpG5SpzodokOGXpDy5c4P00m/CFDQX/Cjo5fH8Fz1vWi6w4NQkv4CXNHBk8vt1ugoA1uSasxL8r4Ms/rNjHT3/N7TxdDP"
    "yRgGAPcX/sbQndnMKbrJr1SKB5oSCKcCrTGU7y3XViqfqRYMBykdvw5OTICr1yJyPMS9Z+kx3GTtDGDD6TyZ+RCVMLpGgi"
    "96wENoUYJO+Mq/0LH/T/Oum1a5Wc49y2BiOEcQGyQ70CZMj2DoHl/KQDQGWrAd/r0P4nS0l2D+4jgEumzYtU4LzMPvs09N"
    "rtgK8xGmTJG8ywruO/IYIkrwzGngWrA04r5uUcaOdOQ0hdjlXUY3vp2O81i2f5mlWmjBBDdws=";
constexpr const char* kRsaFp = "SHA256:LoCDOLnrxNV2qiri813bB4Fl9pv0gTQHm7+3mIuiugk";
// A hand-built security-key type (ssh-keygen -lf accepts it as ED25519-SK).
constexpr const char* kSkEd25519 =
    "sk-ssh-ed25519@openssh.com "
    "AAAAGnNrLXNzaC1lZDI1NTE5QG9wZW5zc2guY29tAAAAIAABAgMEBQYHCAkKCwwNDg8QERITFBUWFxgZGhscHR4fAAAABH"
    "NzaDo=";
constexpr const char* kSkEd25519Fp = "SHA256:/p0CbeE3dk2SyW1OXXsThGc12ezDVD8eGw2/vtztDfk";

// `ssh-keygen -H -f` output for "host.example.com <kEd25519>" and
// "[10.0.0.7]:2222 <kEcdsa256>".
constexpr const char* kHashedHostExampleCom = "|1|Zh2VqGNvc8mqT4xfct4tG+5pAaw=|9KR9n3TDdqnonLI/4ACbMA8OupA=";
constexpr const char* kHashed10007Port2222 = "|1|eHXyuDl45CMapouxQ5GKx/8scF4=|MiBrDbQ+EE/rPBE+PvUl/z/yF4Y=";

HostKey key(const char* line) {
  auto k = tpush::ssh::parse_public_key(line);
  REQUIRE(k.has_value());
  return *k;
}


void write_file(const fs::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << text;
  REQUIRE(out.good());
}

// Runs a shell command; returns its exit status and stdout.
int run(const std::string& cmd, std::string& output) {
  auto r = tpush::test::run_shell(cmd);
  output = std::move(r.out);
  return r.status;
}

std::string quote(const fs::path& p) { return "'" + p.string() + "'"; }

std::string line(const std::string& hosts, const char* key_line) { return hosts + " " + key_line + "\n"; }

}  // namespace

TEST_CASE("known_hosts: base64 helpers round-trip and reject bad input") {
  using tpush::util::base64_decode;
  using tpush::util::base64_encode;
  CHECK(base64_encode("") == "");
  CHECK(base64_encode("f") == "Zg==");
  CHECK(base64_encode("fo") == "Zm8=");
  CHECK(base64_encode("foo") == "Zm9v");
  CHECK(base64_encode("foob", false) == "Zm9vYg");
  std::string all;
  for (int i = 0; i < 256; ++i) all += static_cast<char>(i);
  for (size_t len = 0; len < all.size(); len += 7) {
    const std::string bytes = all.substr(0, len);
    CHECK(base64_decode(base64_encode(bytes)) == bytes);
    CHECK(base64_decode(base64_encode(bytes, false)) == bytes);
  }
  CHECK_FALSE(base64_decode("Zm9v!").has_value());
  CHECK_FALSE(base64_decode("Zm9 v").has_value());
  CHECK_FALSE(base64_decode("Z").has_value());
  CHECK_FALSE(base64_decode("Zg=").has_value());
  CHECK_FALSE(base64_decode("Zg===").has_value());
}

TEST_CASE("known_hosts: fingerprints equal ssh-keygen -l") {
  const std::vector<std::pair<const char*, const char*>> keys = {
      {kEd25519, kEd25519Fp}, {kEd25519B, kEd25519BFp}, {kEcdsa256, kEcdsa256Fp},
      {kEcdsa384, kEcdsa384Fp}, {kEcdsa521, kEcdsa521Fp}, {kRsa, kRsaFp},
      {kSkEd25519, kSkEd25519Fp}};
  for (const auto& [text, fp] : keys) {
    CAPTURE(text);
    CHECK(tpush::ssh::fingerprint_sha256(key(text).blob) == fp);
  }

  if (!have_ssh_keygen()) {
    MESSAGE("ssh-keygen not installed; live fingerprint cross-check skipped");
    return;
  }
  TempDir dir;
  for (const auto& [text, fp] : keys) {
    CAPTURE(text);
    write_file(dir / "k.pub", std::string(text) + " comment\n");
    std::string out;
    REQUIRE(run("ssh-keygen -lf " + quote(dir / "k.pub"), out) == 0);
    CHECK(out.find(std::string(" ") + tpush::ssh::fingerprint_sha256(key(text).blob) + " ") !=
          std::string::npos);
  }
}

TEST_CASE("known_hosts: parse_public_key") {
  const HostKey ed = key(kEd25519);
  CHECK(ed.type == "ssh-ed25519");
  CHECK(ed.blob.size() == 51);  // string "ssh-ed25519" + string(32 bytes)
  CHECK(tpush::ssh::wire::blob_type(ed.blob) == "ssh-ed25519");
  CHECK(key(kRsa).type == "ssh-rsa");
  CHECK(key(kEcdsa521).type == "ecdsa-sha2-nistp521");
  CHECK(key(kSkEd25519).type == "sk-ssh-ed25519@openssh.com");

  // comment and surrounding blanks are fine
  CHECK(tpush::ssh::parse_public_key(std::string("  ") + kEd25519 + "  root@box  \n").has_value());
  CHECK(tpush::ssh::parse_public_key(std::string(kEd25519) + "\tcomment with spaces") ==
        std::optional<HostKey>(ed));

  const std::string ed_b64 = std::string(kEd25519).substr(12);
  // the label must agree with the blob
  CHECK_FALSE(tpush::ssh::parse_public_key("ssh-rsa " + ed_b64).has_value());
  CHECK_FALSE(tpush::ssh::parse_public_key("ecdsa-sha2-nistp384 " +
                                           std::string(kEcdsa256).substr(20)).has_value());
  // truncated or damaged data
  CHECK_FALSE(tpush::ssh::parse_public_key("ssh-ed25519 " + ed_b64.substr(0, 40)).has_value());
  CHECK_FALSE(tpush::ssh::parse_public_key("ssh-ed25519 " + ed_b64 + "#").has_value());
  CHECK_FALSE(tpush::ssh::parse_public_key("ssh-ed25519").has_value());
  CHECK_FALSE(tpush::ssh::parse_public_key("").has_value());
  CHECK_FALSE(tpush::ssh::parse_public_key("1024 35 1234567").has_value());
}

TEST_CASE("known_hosts: hashed entries written by ssh-keygen -H match") {
  TempDir dir;
  write_file(dir / "kh", std::string(kHashedHostExampleCom) + " " + kEd25519 + "\n" +
                             kHashed10007Port2222 + " " + kEcdsa256 + "\n");
  KnownHosts kh;
  kh.load(dir / "kh");
  CHECK(kh.warnings().empty());
  CHECK(kh.check("host.example.com", 22, key(kEd25519)).status == HostKeyStatus::match);
  CHECK(kh.check("HOST.Example.COM", 22, key(kEd25519)).status == HostKeyStatus::match);
  CHECK(kh.check("host.example.com", 2222, key(kEd25519)).status == HostKeyStatus::unknown);
  CHECK(kh.check("other.example.com", 22, key(kEd25519)).status == HostKeyStatus::unknown);
  CHECK(kh.check("10.0.0.7", 2222, key(kEcdsa256)).status == HostKeyStatus::match);
  CHECK(kh.check("10.0.0.7", 22, key(kEcdsa256)).status == HostKeyStatus::unknown);
  const auto changed = kh.check("host.example.com", 22, key(kEd25519B));
  CHECK(changed.status == HostKeyStatus::mismatch);
  CHECK(changed.line == 1);

  if (!have_ssh_keygen()) {
    MESSAGE("ssh-keygen not installed; live ssh-keygen -H check skipped");
    return;
  }
  // Hash a fresh file now (new random salts) and check it still matches.
  write_file(dir / "live", line("alpha.lan,10.9.8.7", kRsa) + line("[beta.lan]:2200", kEd25519B));
  std::string out;
  REQUIRE(run("ssh-keygen -q -H -f " + quote(dir / "live") + " 2>&1", out) == 0);
  const std::string hashed = read_file(dir / "live");
  REQUIRE(hashed.find("alpha.lan") == std::string::npos);
  REQUIRE(hashed.rfind("|1|", 0) == 0);
  KnownHosts live;
  live.load(dir / "live");
  CHECK(live.warnings().empty());
  CHECK(live.check("alpha.lan", 22, key(kRsa)).status == HostKeyStatus::match);
  CHECK(live.check("10.9.8.7", 22, key(kRsa)).status == HostKeyStatus::match);
  CHECK(live.check("beta.lan", 2200, key(kEd25519B)).status == HostKeyStatus::match);
  CHECK(live.check("beta.lan", 22, key(kEd25519B)).status == HostKeyStatus::unknown);
}

TEST_CASE("known_hosts: [host]:port and plain host entries are distinct") {
  TempDir dir;
  write_file(dir / "kh", line("myhost", kEd25519) + line("[myhost]:2222", kEcdsa256) +
                             line("[*.pool]:2200", kRsa) + line("[::1]:2222,::1", kEd25519B));
  KnownHosts kh;
  kh.load(dir / "kh");
  REQUIRE(kh.warnings().empty());

  CHECK(kh.check("myhost", 22, key(kEd25519)).status == HostKeyStatus::match);
  CHECK(kh.check("myhost", 0, key(kEd25519)).status == HostKeyStatus::match);
  // no fallback from [myhost]:2222 to the plain entry (libssh2 would match)
  CHECK(kh.check("myhost", 2222, key(kEd25519)).status == HostKeyStatus::unknown);
  CHECK(kh.check("myhost", 2223, key(kEd25519)).status == HostKeyStatus::unknown);
  CHECK(kh.check("myhost", 2222, key(kEcdsa256)).status == HostKeyStatus::match);
  CHECK(kh.check("myhost", 22, key(kEcdsa256)).status == HostKeyStatus::unknown);
  CHECK(kh.known_types("myhost", 22) == std::vector<std::string>{"ssh-ed25519"});
  CHECK(kh.known_types("myhost", 2222) == std::vector<std::string>{"ecdsa-sha2-nistp256"});

  CHECK(kh.check("w1.pool", 2200, key(kRsa)).status == HostKeyStatus::match);
  CHECK(kh.check("w1.pool", 22, key(kRsa)).status == HostKeyStatus::unknown);
  CHECK(kh.check("::1", 2222, key(kEd25519B)).status == HostKeyStatus::match);
  CHECK(kh.check("::1", 22, key(kEd25519B)).status == HostKeyStatus::match);
  CHECK(tpush::ssh::known_hosts_name("Host.LAN", 22) == "host.lan");
  CHECK(tpush::ssh::known_hosts_name("::1", 2222) == "[::1]:2222");
}

TEST_CASE("known_hosts: wildcards and negation") {
  TempDir dir;
  write_file(dir / "kh", line("*.example.com,!bad.example.com", kEd25519) +
                             line("web?.LAN", kEcdsa256) + line("!lonely", kRsa) +
                             line("10.0.*.1?", kEd25519B));
  KnownHosts kh;
  kh.load(dir / "kh");
  REQUIRE(kh.warnings().empty());

  CHECK(kh.check("good.example.com", 22, key(kEd25519)).status == HostKeyStatus::match);
  CHECK(kh.check("a.b.example.com", 22, key(kEd25519)).status == HostKeyStatus::match);
  CHECK(kh.check("example.com", 22, key(kEd25519)).status == HostKeyStatus::unknown);
  // the negated name excludes the line although *.example.com matches
  CHECK(kh.check("bad.example.com", 22, key(kEd25519)).status == HostKeyStatus::unknown);
  CHECK(kh.check("bad.example.com", 22, key(kEd25519B)).status == HostKeyStatus::unknown);
  CHECK(kh.known_types("bad.example.com", 22).empty());

  CHECK(kh.check("web1.lan", 22, key(kEcdsa256)).status == HostKeyStatus::match);
  CHECK(kh.check("WEB2.lan", 22, key(kEcdsa256)).status == HostKeyStatus::match);
  CHECK(kh.check("web10.lan", 22, key(kEcdsa256)).status == HostKeyStatus::unknown);
  CHECK(kh.check("web.lan", 22, key(kEcdsa256)).status == HostKeyStatus::unknown);

  // a line with only a negation matches nothing
  CHECK(kh.check("lonely", 22, key(kRsa)).status == HostKeyStatus::unknown);
  CHECK(kh.check("anyone", 22, key(kRsa)).status == HostKeyStatus::unknown);

  CHECK(kh.check("10.0.3.12", 22, key(kEd25519B)).status == HostKeyStatus::match);
  CHECK(kh.check("10.0.3.1", 22, key(kEd25519B)).status == HostKeyStatus::unknown);
  CHECK(kh.check("10.0.3.123", 22, key(kEd25519B)).status == HostKeyStatus::unknown);
  // the port form is not matched by a plain pattern
  CHECK(kh.check("10.0.3.12", 2222, key(kEd25519B)).status == HostKeyStatus::unknown);
}

TEST_CASE("known_hosts: @revoked keys are refused for every host") {
  TempDir dir;
  write_file(dir / "kh", line("# header", "") + line("web1,web2", kEd25519) + line("web1", kRsa) +
                             line("@revoked other.host", kEd25519) +
                             line("@revoked *", kRsa));
  KnownHosts kh;
  kh.load(dir / "kh");
  REQUIRE(kh.warnings().empty());

  // revoked wins over a matching plain line, whatever host the @revoked line names
  const auto r = kh.check("web1", 22, key(kEd25519));
  CHECK(r.status == HostKeyStatus::revoked);
  CHECK(r.line == 4);
  CHECK(r.file == (dir / "kh").string());
  CHECK(kh.check("web2", 2222, key(kEd25519)).status == HostKeyStatus::revoked);
  CHECK(kh.check("nowhere", 22, key(kRsa)).status == HostKeyStatus::revoked);
  // another key for the host is unaffected
  CHECK(kh.check("web2", 22, key(kEd25519B)).status == HostKeyStatus::mismatch);
  // revoked lines do not count as recorded types
  CHECK(kh.known_types("other.host", 22).empty());
  CHECK(kh.known_types("web1", 22) == std::vector<std::string>{"ssh-ed25519", "ssh-rsa"});
}

TEST_CASE("known_hosts: @cert-authority lines never match a plain key") {
  TempDir dir;
  write_file(dir / "kh", line("@cert-authority *.example.com", kEd25519) +
                             line("@cert-authority plain.example.com", kEcdsa256));
  KnownHosts kh;
  kh.load(dir / "kh");
  REQUIRE(kh.warnings().empty());
  CHECK(kh.check("a.example.com", 22, key(kEd25519)).status == HostKeyStatus::unknown);
  const auto c = kh.check("plain.example.com", 22, key(kEcdsa384));
  CHECK(c.status == HostKeyStatus::unknown);
  CHECK(c.expected_type.empty());
  CHECK(kh.known_types("a.example.com", 22).empty());
}

TEST_CASE("known_hosts: bad lines are skipped with a warning and loading goes on") {
  TempDir dir;
  const std::string ed_b64 = std::string(kEd25519).substr(12);
  write_file(dir / "kh",
             line("first", kEd25519) +                          // 1
                 "this is not a known_hosts line\n"             // 2
                 "broken ssh-ed25519 AAAA$$$notbase64\n"        // 3
                 "@bogus host " + std::string(kEd25519) + "\n"  // 4
                 "liar ssh-rsa " + ed_b64 + "\n"                // 5
                 "|1|short|hash " + kEd25519 + "\n"             // 6
                 "onlyhost\n"                                   // 7
                 "ancient 1024 35 123456789\n"                  // 8
                 "\n"                                           // 9
                 "   # indented comment\n"                      // 10
                 "crlf " + kEcdsa256 + "\r\n"                   // 11
                 "@revoked\n"                                   // 12
                 + line("  \tlast", kRsa).substr(0, line("  \tlast", kRsa).size() - 1));  // 13, no newline
  KnownHosts kh;
  kh.load(dir / "kh");
  const auto& w = kh.warnings();
  REQUIRE(w.size() == 8);
  const std::string f = (dir / "kh").string();
  CHECK(w[0].rfind(f + ":2: ", 0) == 0);
  CHECK(w[1].rfind(f + ":3: ", 0) == 0);
  CHECK(w[1].find("base64") != std::string::npos);
  CHECK(w[2].rfind(f + ":4: ", 0) == 0);
  CHECK(w[2].find("@bogus") != std::string::npos);
  CHECK(w[3].rfind(f + ":5: ", 0) == 0);
  CHECK(w[4].rfind(f + ":6: ", 0) == 0);
  CHECK(w[5].rfind(f + ":7: ", 0) == 0);
  CHECK(w[6].rfind(f + ":8: ", 0) == 0);
  CHECK(w[7].rfind(f + ":12: ", 0) == 0);

  CHECK(kh.check("first", 22, key(kEd25519)).status == HostKeyStatus::match);
  CHECK(kh.check("crlf", 22, key(kEcdsa256)).status == HostKeyStatus::match);
  const auto last = kh.check("last", 22, key(kRsa));
  CHECK(last.status == HostKeyStatus::match);
  CHECK(last.line == 13);
  // skipped lines contribute nothing
  CHECK(kh.check("broken", 22, key(kEd25519B)).status == HostKeyStatus::unknown);
  CHECK(kh.check("liar", 22, key(kEd25519)).status == HostKeyStatus::unknown);
}

TEST_CASE("known_hosts: missing file, directory, several files") {
  TempDir dir;
  KnownHosts kh;
  kh.load(dir / "does-not-exist");
  kh.load(dir / "no-dir" / "known_hosts");
  CHECK(kh.warnings().empty());
  kh.load(dir / "");
  CHECK(kh.warnings().size() == 1);

  write_file(dir / "a", line("h1", kEd25519));
  write_file(dir / "b", "# b\n" + line("h2", kEcdsa256) + line("h1", kEd25519B));
  KnownHosts two;
  two.load(dir / "a");
  two.load(dir / "b");
  CHECK(two.check("h2", 22, key(kEcdsa256)).status == HostKeyStatus::match);
  CHECK(two.check("h1", 22, key(kEd25519B)).status == HostKeyStatus::match);
  const auto c = two.check("h1", 22, key(kEd25519B));
  CHECK(c.file == (dir / "b").string());
  CHECK(c.line == 3);
}

TEST_CASE("known_hosts: mismatch reports the file, line and expected fingerprint") {
  TempDir dir;
  write_file(dir / "kh", "# comment\n" + line("other", kEd25519B) + line("web1,web2", kEd25519) +
                             line("web1", kRsa) + line("web1", kEd25519B));
  KnownHosts kh;
  kh.load(dir / "kh");
  REQUIRE(kh.warnings().empty());

  const auto c = kh.check("web2", 22, key(kEd25519B));
  CHECK(c.status == HostKeyStatus::mismatch);
  CHECK(c.file == (dir / "kh").string());
  CHECK(c.line == 3);
  CHECK(c.expected_type == "ssh-ed25519");
  CHECK(c.expected_fingerprint == kEd25519Fp);

  // with several recorded keys of the type, the first line is reported
  HostKey third{"ssh-ed25519", std::string("\0\0\0\x0bssh-ed25519\0\0\0\x20", 19) + std::string(32, 'A')};
  const auto first = kh.check("web1", 22, third);
  CHECK(first.status == HostKeyStatus::mismatch);
  CHECK(first.line == 3);
  CHECK(first.expected_fingerprint == kEd25519Fp);

  // a later line with the same key still makes it a match, as in OpenSSH
  const auto m = kh.check("web1", 22, key(kEd25519B));
  CHECK(m.status == HostKeyStatus::match);
  CHECK(m.line == 5);

  // RSA offered with a signature-algorithm name is still "ssh-rsa"
  HostKey rsa = key(kRsa);
  rsa.type = "rsa-sha2-512";
  CHECK(kh.check("web1", 22, rsa).status == HostKeyStatus::match);
}

TEST_CASE("known_hosts: a host known only under other key types is unknown") {
  TempDir dir;
  write_file(dir / "kh", line("web1", kRsa) + line("web1", kEcdsa256) + line("web1", kRsa));
  KnownHosts kh;
  kh.load(dir / "kh");
  REQUIRE(kh.warnings().empty());

  const auto c = kh.check("web1", 22, key(kEd25519));
  CHECK(c.status == HostKeyStatus::unknown);
  // the first other-type key is reported, for OpenSSH's "keys of different type" hint
  CHECK(c.expected_type == "ssh-rsa");
  CHECK(c.expected_fingerprint == kRsaFp);
  CHECK(c.line == 1);
  // another ECDSA curve is another type name
  CHECK(kh.check("web1", 22, key(kEcdsa384)).status == HostKeyStatus::unknown);
  CHECK(kh.known_types("web1", 22) == std::vector<std::string>{"ssh-rsa", "ecdsa-sha2-nistp256"});

  const auto none = kh.check("web9", 22, key(kEd25519));
  CHECK(none.status == HostKeyStatus::unknown);
  CHECK(none.expected_type.empty());
  CHECK(none.file.empty());
  CHECK(none.line == 0);
  CHECK(kh.known_types("web9", 22).empty());

  // security-key types are opaque but compared like any other
  write_file(dir / "sk", line("sk-host", kSkEd25519));
  KnownHosts sk;
  sk.load(dir / "sk");
  CHECK(sk.warnings().empty());
  CHECK(sk.check("sk-host", 22, key(kSkEd25519)).status == HostKeyStatus::match);
  CHECK(sk.check("sk-host", 22, key(kEd25519)).status == HostKeyStatus::unknown);
}

TEST_CASE("known_hosts: aliases are checked under the same port rule") {
  TempDir dir;
  write_file(dir / "google_compute_known_hosts",
             line("tpu.1234567890-0", kEcdsa256) + line("[tpu.1234567890-1]:2222", kEd25519) +
                 line("tpu.*,!tpu.99-0", kRsa));
  KnownHosts kh;
  kh.load(dir / "google_compute_known_hosts");
  REQUIRE(kh.warnings().empty());

  const std::vector<std::string> w0 = {"tpu.1234567890-0"};
  const std::vector<std::string> w1 = {"tpu.1234567890-1"};
  CHECK(kh.check("10.130.0.5", 22, key(kEcdsa256), w0).status == HostKeyStatus::match);
  CHECK(kh.check("10.130.0.5", 22, key(kEcdsa256)).status == HostKeyStatus::unknown);
  CHECK(kh.check("10.130.0.5", 2222, key(kEcdsa256), w0).status == HostKeyStatus::unknown);
  CHECK(kh.check("10.130.0.6", 2222, key(kEd25519), w1).status == HostKeyStatus::match);
  CHECK(kh.check("10.130.0.6", 22, key(kEd25519), w1).status == HostKeyStatus::unknown);

  // the mismatch of an alias is reported like the host's own
  write_file(dir / "own", line("10.130.0.5", kEd25519B));
  kh.load(dir / "own");
  const auto c = kh.check("10.130.0.5", 22, key(kEd25519), w0);
  CHECK(c.status == HostKeyStatus::mismatch);
  CHECK(c.file == (dir / "own").string());
  CHECK(kh.known_types("10.130.0.5", 22, w0) ==
        std::vector<std::string>{"ecdsa-sha2-nistp256", "ssh-rsa", "ssh-ed25519"});

  // negation applies per name: tpu.99-0 is excluded, another alias is not
  const std::vector<std::string> excluded = {"tpu.99-0"};
  const std::vector<std::string> both = {"tpu.99-0", "tpu.98-0"};
  CHECK(kh.check("x", 22, key(kRsa), excluded).status == HostKeyStatus::unknown);
  CHECK(kh.check("x", 22, key(kRsa), both).status == HostKeyStatus::match);
}

TEST_CASE("known_hosts: add() is seen by later checks") {
  KnownHosts kh;
  CHECK(kh.check("new.host", 2222, key(kEd25519)).status == HostKeyStatus::unknown);
  kh.add("New.Host", 2222, key(kEd25519));
  const auto c = kh.check("new.host", 2222, key(kEd25519));
  CHECK(c.status == HostKeyStatus::match);
  CHECK(c.file.empty());
  CHECK(kh.check("new.host", 22, key(kEd25519)).status == HostKeyStatus::unknown);
  CHECK(kh.check("new.host", 2222, key(kEd25519B)).status == HostKeyStatus::mismatch);
  CHECK(kh.known_types("new.host", 2222) == std::vector<std::string>{"ssh-ed25519"});
  // an added name is literal, never a pattern
  kh.add("*", 22, key(kRsa));
  CHECK(kh.check("anything", 22, key(kRsa)).status == HostKeyStatus::unknown);

  // As a connection asks: known_types() before the handshake, then (accept-new
  // having recorded the key of another connection meanwhile) check() after it.
  CHECK(kh.known_types("late.host", 22).empty());
  kh.add("late.host", 22, key(kEcdsa256));
  CHECK(kh.check("late.host", 22, key(kEcdsa256)).status == HostKeyStatus::match);
}

TEST_CASE("known_hosts: check() after known_types() gives the same answers, every time") {
  TempDir dir;
  write_file(dir / "one", line("plain.lan", kRsa));
  write_file(dir / "two", std::string(kHashedHostExampleCom) + " " + kEd25519 + "\n");
  KnownHosts kh;
  kh.load(dir / "one");
  kh.load(dir / "two");
  for (int round = 0; round < 2; ++round) {
    CHECK(kh.known_types("host.example.com", 22) == std::vector<std::string>{"ssh-ed25519"});
    const auto changed = kh.check("host.example.com", 22, key(kEd25519B));
    CHECK(changed.status == HostKeyStatus::mismatch);
    CHECK(changed.file == (dir / "two").string());
    CHECK(changed.line == 1);
    CHECK(kh.check("host.example.com", 22, key(kEd25519)).status == HostKeyStatus::match);
    const auto plain = kh.check("plain.lan", 22, key(kRsa));
    CHECK(plain.status == HostKeyStatus::match);
    CHECK(plain.file == (dir / "one").string());
  }
}

TEST_CASE("known_hosts: append_known_host writes hashed lines OpenSSH reads") {
  TempDir dir;
  const fs::path file = dir / "home/.ssh/known_hosts";
  REQUIRE(tpush::ssh::append_known_host(file, "127.0.0.1", 2222, key(kEd25519)) == "");
  REQUIRE(tpush::ssh::append_known_host(file, "Web1.LAN", 22, key(kRsa)) == "");

  struct stat st{};
  REQUIRE(::stat(file.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  REQUIRE(::stat(file.parent_path().c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0700);

  const std::string text = read_file(file);
  CHECK(text.find("127.0.0.1") == std::string::npos);
  CHECK(text.find("web1") == std::string::npos);
  CHECK(text.rfind("|1|", 0) == 0);
  CHECK(text.find(std::string(" ") + kEd25519 + "\n") != std::string::npos);

  KnownHosts kh;
  kh.load(file);
  CHECK(kh.warnings().empty());
  CHECK(kh.check("127.0.0.1", 2222, key(kEd25519)).status == HostKeyStatus::match);
  CHECK(kh.check("127.0.0.1", 22, key(kEd25519)).status == HostKeyStatus::unknown);
  CHECK(kh.check("web1.lan", 22, key(kRsa)).status == HostKeyStatus::match);

  // a file whose last line lacks its newline is not glued onto
  write_file(dir / "nonl", line("old", kEcdsa256).substr(0, line("old", kEcdsa256).size() - 1));
  REQUIRE(tpush::ssh::append_known_host(dir / "nonl", "new", 22, key(kEd25519B)) == "");
  KnownHosts nonl;
  nonl.load(dir / "nonl");
  CHECK(nonl.warnings().empty());
  CHECK(nonl.check("old", 22, key(kEcdsa256)).status == HostKeyStatus::match);
  CHECK(nonl.check("new", 22, key(kEd25519B)).status == HostKeyStatus::match);

  // errors come back as messages, never exceptions
  write_file(dir / "plain", "x");
  const std::string err = tpush::ssh::append_known_host(dir / "plain" / "known_hosts", "h", 22, key(kRsa));
  CHECK(err.find("plain") != std::string::npos);
  CHECK(tpush::ssh::append_known_host(dir / "kh2", "h", 22, HostKey{}) != "");

  if (!have_ssh_keygen()) {
    MESSAGE("ssh-keygen not installed; ssh-keygen -F cross-check skipped");
    return;
  }
  std::string out;
  CHECK(run("ssh-keygen -F '[127.0.0.1]:2222' -f " + quote(file), out) == 0);
  CHECK(out.find("found: line 1") != std::string::npos);
  CHECK(out.find(kEd25519) != std::string::npos);
  CHECK(run("ssh-keygen -F web1.lan -f " + quote(file), out) == 0);
  CHECK(out.find("found: line 2") != std::string::npos);
  CHECK(run("ssh-keygen -F 127.0.0.1 -f " + quote(file), out) == 1);
}

TEST_CASE("known_hosts: concurrent appends do not interleave") {
  TempDir dir;
  const fs::path file = dir / "known_hosts";
  constexpr int kThreads = 8, kPerThread = 40;
  std::vector<std::thread> threads;
  std::vector<std::string> errors(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        std::string e = tpush::ssh::append_known_host(
            file, "w" + std::to_string(t) + "-" + std::to_string(i), 22, key(kRsa));
        if (!e.empty()) errors[t] = e;
      }
    });
  }
  for (auto& th : threads) th.join();
  for (const auto& e : errors) CHECK(e == "");

  KnownHosts kh;
  kh.load(file);
  CHECK(kh.warnings().empty());
  for (int t = 0; t < kThreads; ++t)
    for (int i : {0, kPerThread - 1})
      CHECK(kh.check("w" + std::to_string(t) + "-" + std::to_string(i), 22, key(kRsa)).status ==
            HostKeyStatus::match);
  const std::string text = read_file(file);
  CHECK(std::count(text.begin(), text.end(), '\n') == kThreads * kPerThread);
}
