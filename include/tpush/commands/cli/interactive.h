// `tpush -t mytpu` with no command, at a terminal: a prompt naming the
// workers (`mytpu[64]> `). Each line runs on them as a normal run would, over
// sessions kept open between lines (an in-process ssh::KeptSessions, as a
// persist master keeps them), so a line costs one round trip, not a login;
// then a one-line summary. The prompt's own commands (prompt_line.h) change
// who runs the next line and how its output is shown.
#pragma once

#include "tpush/commands/cli/options.h"
#include "tpush/commands/plan/targets.h"

namespace tpush::commands {

// No command given, and stdin is a terminal: the prompt is what was asked for.
bool wants_prompt(const Options& o);

// Reads lines until quit, Ctrl-D, a hang-up or TERM; returns the exit code of
// the last line run (0 when none ran).
int interactive_main(const Options& o, Targets targets, int signal_fd);

}  // namespace tpush::commands
