// ProxyCommand lines: run directly when they need no shell, else as ssh does (ssh/proxy_command).
#include <doctest/doctest.h>

#include <cstdlib>

#include "tpush/ssh/way/proxy_command.h"

using tpush::ssh::ProxyCommand;
using tpush::ssh::proxy_stderr_summary;

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

TEST_CASE("proxy command: its reason is gcloud's ERROR line, not the traceback after it") {
  // gcloud compute start-iap-tunnel --listen-on-stdin that cannot connect (it exits 0).
  const std::string gcloud =
      "WARNING: \n\nTo increase the performance of the tunnel, consider installing NumPy.\n\n"
      "ERROR: [0] Error during local connection to [stdin]: Error while connecting [4033: 'not authorized'].\n"
      "Traceback (most recent call last):\n"
      "  File \"/usr/lib/google-cloud-sdk/lib/googlecloudsdk/command_lib/compute/iap_tunnel.py\", line 843, in Run\n"
      "    websocket_conn = self._InitiateConnection(\n"
      "googlecloudsdk.api_lib.compute.iap_tunnel_websocket.ConnectionCreationError: Error while connecting [4033: "
      "'not authorized'].\n";
  CHECK(proxy_stderr_summary(gcloud) ==
        "ERROR: [0] Error during local connection to [stdin]: Error while connecting [4033: 'not authorized'].");
  // Any other proxy: its last line that says something, made printable.
  CHECK(proxy_stderr_summary("channel 0: open failed: connect failed: Connection refused\n"
                             "stdio forwarding failed\r\n\n") == "stdio forwarding failed");
  CHECK(proxy_stderr_summary("bad \x1b[31mthing\n") == "bad \\x1b[31mthing");
  CHECK(proxy_stderr_summary("") == "");
  CHECK(proxy_stderr_summary(std::string(400, 'x')) == std::string(300, 'x') + "...");
}
