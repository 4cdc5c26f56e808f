// tpush: run a command on every worker of a TPU pod (or any host list) at once.
// Everything lives in tpush_core; this file only picks the entry point: a
// command line, or (started by a client, never by a user) a persist master.
#include <string>
#include <vector>

#include "tpush/commands/cli/dispatch.h"
#include "tpush/persist/master.h"

namespace {

int run_in_master(const std::vector<std::string>& args, const tpush::fanout::RunHost& host) {
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  argv.push_back(nullptr);
  return tpush::commands::run_command_line(static_cast<int>(args.size()), argv.data(), &host);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]) == tpush::persist::kMasterFlag)
    return tpush::persist::serve({argv + 2, argv + argc}, run_in_master);
  return tpush::commands::run_command_line(argc, argv);
}
