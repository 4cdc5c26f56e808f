// tpush's exit codes, in one place; man/tpush.1 documents them and the mixing rule.
#pragma once

namespace tpush::output::exit_code {

inline constexpr int ok = 0;             // every worker ran the command and it exited 0
inline constexpr int command_failed = 1; // some remote command exited non-zero or was killed
inline constexpr int usage = 2;          // bad option, host expression or input file
inline constexpr int interrupted = 130;  // SIGINT/SIGTERM (128 + SIGINT)
inline constexpr int output_closed = 141;// the reader of stdout went away (128 + SIGPIPE)
inline constexpr int unreachable = 255;  // some worker could not be reached, verified,
                                         // authenticated, or finished (timeout, lost)
inline constexpr int setup_failed = 255; // the run could not start (SetupError): as ssh's 255

}  // namespace tpush::output::exit_code
