// tpush: run a command on every worker of a TPU pod (or any host list) at once.
// Everything lives in tpush_core; this file only turns errors into exit codes.
#include <cstdio>
#include <exception>

#include "tpush/commands/dispatch.h"
#include "tpush/output/exit_codes.h"
#include "tpush/util/error.h"

int main(int argc, char** argv) {
  try {
    return tpush::commands::dispatch(argc, argv);
  } catch (const tpush::NothingToDo& e) {
    std::fprintf(stderr, "tpush: %s\n", e.what());
    return tpush::exit_code::ok;
  } catch (const tpush::Interrupted& e) {
    std::fprintf(stderr, "tpush: interrupted: %s\n", e.what());
    return tpush::exit_code::interrupted;
  } catch (const tpush::UsageError& e) {
    std::fprintf(stderr, "tpush: error: %s\n", e.what());
    return tpush::exit_code::usage;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tpush: error: %s\n", e.what());
    return tpush::exit_code::unreachable;
  }
}
