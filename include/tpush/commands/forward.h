// `tpush forward SPEC...`: local ports carried to a worker's side until
// Ctrl-C, as `ssh -L` does (fanout/forward_job.h does the carrying).
#pragma once

#include <string>

#include "tpush/commands/cli/options.h"

namespace tpush::commands {

// One SPEC: [BIND:]LPORT:HOST:RPORT, or LPORT alone for the worker's own
// localhost:LPORT. BIND defaults to 127.0.0.1 ('*': every address).
struct ForwardSpec {
  std::string text;  // as written
  std::string bind;
  int local_port = 0;
  std::string host;
  int remote_port = 0;
};

// UsageError naming the spec when it is not one.
ForwardSpec parse_forward_spec(const std::string& text);

int forward_main(Options& o, int signal_fd);

}  // namespace tpush::commands
