#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdlib>

int main(int argc, char** argv) {
  // Hermetic: the command line tests must not read the config file of whoever
  // runs them (test_commands_cli_config_file.cpp sets its own).
  ::setenv("TPUSH_CONFIG", "none", 1);
  // Nor the agent of whoever runs them: keys and certificates come from files here.
  ::unsetenv("SSH_AUTH_SOCK");
  doctest::Context context(argc, argv);
  return context.run();
}
