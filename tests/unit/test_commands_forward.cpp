// `tpush forward SPEC...`: what a SPEC says, as ssh -L reads it.
#include <doctest/doctest.h>

#include <string>

#include "test_support.h"
#include "tpush/commands/forward.h"
#include "tpush/util/error.h"

namespace {

using tpush::commands::parse_forward_spec;

// The usage error a SPEC gets.
std::string refusal_of(const std::string& spec) {
  return tpush::test::error_of<tpush::UsageError>([&] { parse_forward_spec(spec); });
}

}  // namespace

TEST_CASE("forward: LPORT alone is the worker's own localhost:LPORT, on 127.0.0.1 here") {
  const auto s = parse_forward_spec("6006");
  CHECK(s.bind == "127.0.0.1");
  CHECK(s.local_port == 6006);
  CHECK(s.host == "localhost");
  CHECK(s.remote_port == 6006);
}

TEST_CASE("forward: [BIND:]LPORT:HOST:RPORT, with IPv6 addresses in brackets and * for every address") {
  auto s = parse_forward_spec("8888:10.1.2.3:8889");
  CHECK(s.bind == "127.0.0.1");
  CHECK(s.local_port == 8888);
  CHECK(s.host == "10.1.2.3");
  CHECK(s.remote_port == 8889);
  s = parse_forward_spec("*:8080:web:80");
  CHECK(s.bind == "0.0.0.0");
  CHECK(s.host == "web");
  s = parse_forward_spec("[::1]:9000:[fe80::1]:90");
  CHECK(s.bind == "::1");
  CHECK(s.local_port == 9000);
  CHECK(s.host == "fe80::1");
  CHECK(s.remote_port == 90);
  s = parse_forward_spec(":7000:db:5432");
  CHECK(s.bind == "127.0.0.1");
}

TEST_CASE("forward: what is not a SPEC is a usage error naming it") {
  CHECK(refusal_of("http") == "forward http: 'http' is not a local port (1-65535) (write LPORT, or "
                            "[BIND:]LPORT:HOST:RPORT as ssh -L does)");
  CHECK(refusal_of("70000") == "forward 70000: '70000' is not a local port (1-65535) (write LPORT, or "
                             "[BIND:]LPORT:HOST:RPORT as ssh -L does)");
  CHECK(refusal_of("1:2") == "forward 1:2: not a forward (write LPORT, or [BIND:]LPORT:HOST:RPORT as ssh -L does)");
  CHECK(refusal_of("8080::80") == "forward 8080::80: not a forward (write LPORT, or [BIND:]LPORT:HOST:RPORT as ssh "
                                "-L does)");
  CHECK(refusal_of("[::1:80:h:1") == "forward [::1:80:h:1: '[' without ']' (write LPORT, or [BIND:]LPORT:HOST:RPORT "
                                   "as ssh -L does)");
}
