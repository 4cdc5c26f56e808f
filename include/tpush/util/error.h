// The two error tiers. A worker's failure is a value (see fanout/result.h);
// only problems that stop the whole run are exceptions, these four, and they
// all end up in the one catch of commands/dispatch.cpp (run_command_line),
// which prints "tpush: error: <what>" and returns the exit code. The
// interactive prompt catches a line's UsageError and SetupError the same way
// and reads the next line. Code below catches them only to turn one into a
// worker's result or a better message.
#pragma once

#include <stdexcept>
#include <string>

namespace tpush {

// Bad command line or input file: exit code 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The environment cannot support the run (no gcloud, unreadable key, ...):
// exit code 255, before any worker was contacted.
class SetupError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Ctrl-C arrived during setup (e.g. while gcloud ran): exit code 130.
class Interrupted : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Nothing needs doing (--failed after a run where every worker succeeded):
// main prints "tpush: <what>" and exits 0.
class NothingToDo : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace tpush
