// %tokens, ${ENV} and ~ in ssh_config values.
#include <doctest/doctest.h>
#include <pwd.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "tpush/ssh_config/tokens.h"

using namespace tpush::ssh_config;

namespace {
TokenTable sample() {
  TokenTable t;
  t.set('h', "host.example");
  t.set('p', "2222");
  t.set('r', "alice");
  t.set('n', "host");
  return t;
}
}  // namespace

TEST_CASE("ssh_config tokens: %x for the allowed letters, %% for %") {
  std::string out;
  CHECK(expand_tokens("%r@%h:%p (%n) 100%%", "hpnr", sample(), false, out).empty());
  CHECK(out == "alice@host.example:2222 (host) 100%");
  CHECK(expand_tokens("no tokens", "", sample(), false, out).empty());
  CHECK(out == "no tokens");
}

TEST_CASE("ssh_config tokens: errors name the token and what is allowed") {
  std::string out;
  CHECK(expand_tokens("%h.%d", kHostNameTokens, sample(), false, out) ==
        "unknown token %d (here OpenSSH knows %h, %%)");
  CHECK(expand_tokens("%x", "hpnr", sample(), false, out) == "unknown token %x (here OpenSSH knows %h, %p, %n, %r, %%)");
  CHECK(expand_tokens("50%", "h", sample(), false, out) == "'%' at the end; write '%%' for a literal '%'");
  // A letter that is allowed but has no value is unknown too.
  CHECK(expand_tokens("%u", "u", sample(), false, out).starts_with("unknown token %u"));
}

TEST_CASE("ssh_config tokens: ${NAME} only when asked") {
  ::setenv("TPUSH_TOKENS_TEST", "/run/x", 1);
  ::unsetenv("TPUSH_TOKENS_UNSET");
  std::string out;
  CHECK(expand_tokens("${TPUSH_TOKENS_TEST}/%r", "r", sample(), true, out).empty());
  CHECK(out == "/run/x/alice");
  CHECK(expand_tokens("${TPUSH_TOKENS_TEST}", "", sample(), false, out).empty());
  CHECK(out == "${TPUSH_TOKENS_TEST}");
  CHECK(expand_tokens("$TPUSH_TOKENS_TEST", "", sample(), true, out).empty());
  CHECK(out == "$TPUSH_TOKENS_TEST");  // only the ${} form expands
  CHECK(expand_tokens("${TPUSH_TOKENS_UNSET}", "", sample(), true, out) ==
        "environment variable ${TPUSH_TOKENS_UNSET} is not set");
  CHECK(expand_tokens("${OPEN", "", sample(), true, out) == "\"${OPEN\" has no closing '}'");
  CHECK(expand_tokens("${}", "", sample(), true, out) == "\"${}\" names no environment variable");
  CHECK(check_dollar_references("a${TPUSH_TOKENS_TEST}b").empty());
  CHECK(check_dollar_references("${TPUSH_TOKENS_UNSET}") == "environment variable ${TPUSH_TOKENS_UNSET} is not set");
  ::unsetenv("TPUSH_TOKENS_TEST");
}

TEST_CASE("ssh_config tokens: ~ as OpenSSH's tilde_expand") {
  std::string out;
  CHECK(expand_tilde("~/.ssh/id", "/home/u", out).empty());
  CHECK(out == "/home/u/.ssh/id");
  CHECK(expand_tilde("~", "/home/u", out).empty());
  CHECK(out == "/home/u/");
  CHECK(expand_tilde("~//x", "/home/u/", out).empty());
  CHECK(out == "/home/u/x");
  CHECK(expand_tilde("/abs/~x", "/home/u", out).empty());
  CHECK(out == "/abs/~x");
  CHECK(expand_tilde("rel", "/home/u", out).empty());
  CHECK(out == "rel");
  const passwd* root = getpwnam("root");
  REQUIRE(root != nullptr);
  CHECK(expand_tilde("~root/x", "/home/u", out).empty());
  CHECK(out == std::string(root->pw_dir) + (std::string(root->pw_dir).ends_with("/") ? "" : "/") + "x");
  CHECK(expand_tilde("~no-such-user-tpush/x", "/home/u", out) ==
        "no such user \"no-such-user-tpush\" for \"~no-such-user-tpush/x\"");
}

TEST_CASE("ssh_config tokens: %C is the SHA-1 of %l%h%p%r") {
  // sha1("vmhost.example22alice"), as `printf %s ... | sha1sum` prints it.
  CHECK(connection_hash("vm", "host.example", "22", "alice") == "c51c0a9e6ee98d3317f7271231cbc234da31656d");
  const LocalHostNames names = local_host_names();
  CHECK_FALSE(names.full.empty());
  CHECK(names.full.starts_with(names.short_name));
  CHECK(names.short_name.find('.') == std::string::npos);
}
