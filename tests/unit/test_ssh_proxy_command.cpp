// ProxyCommand lines: run directly when they need no shell, else as ssh does (ssh/proxy_command).
#include <doctest/doctest.h>

#include <cstdlib>

#include "tpush/ssh/proxy_command.h"

using tpush::ssh::ProxyCommand;

TEST_CASE("proxy command: plain words run directly, shell syntax goes to $SHELL -c 'exec ...'") {
  CHECK(ProxyCommand::from_line("nc -q0 10.0.0.2 22").argv == std::vector<std::string>{"nc", "-q0", "10.0.0.2", "22"});
  ::setenv("SHELL", "/bin/bash", 1);
  for (const char* line : {"ssh -W '[10.0.0.2]:22' b", "nc $H 22", "a | b", "a > /dev/null", "exec nc h p; x"}) {
    CAPTURE(line);
    const auto c = ProxyCommand::from_line(line);
    REQUIRE(c.argv.size() == 3);
    CHECK(c.argv[0] == "/bin/bash");
    CHECK(c.argv[1] == "-c");
    CHECK(c.argv[2] == std::string("exec ") + line);
  }
  CHECK(ProxyCommand::from_line("x").shown == "x");
}
