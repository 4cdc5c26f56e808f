#include "tpush/commands/cli/interactive.h"

#include <sys/wait.h>
#include <poll.h>
#include <unistd.h>

#include <clocale>
#include <csignal>
#include <cstdio>
#include <optional>

#include "tpush/commands/cli/prompt_line.h"
#include "tpush/commands/run.h"
#include "tpush/fanout/run_host.h"
#include "tpush/inventory/inventory.h"
#include "tpush/inventory/node_set.h"
#include "tpush/output/exit_codes.h"
#include "tpush/ssh/kept_sessions.h"
#include "tpush/util/child_process.h"
#include "tpush/util/error.h"
#include "tpush/util/line_editor.h"
#include "tpush/util/signals.h"
#include "tpush/util/string.h"

namespace tpush::commands {
namespace {

using Clock = std::chrono::steady_clock;

enum class Shown { streamed, gathered, leader };

// The prompt's name for the workers: the TPUs, else the host lists as typed.
std::string name_of(const Options& o) {
  std::vector<std::string> parts = o.tpus;
  parts.insert(parts.end(), o.queued_resources.begin(), o.queued_resources.end());
  if (parts.empty()) parts = o.host_exprs;
  for (const auto& f : o.host_files) parts.push_back(f == "-" ? "stdin" : f);
  std::string name = util::join(parts, ",");
  constexpr std::size_t kLongest = 32;
  return name.empty() || name.size() > kLongest ? "tpush" : name;
}

// TPUSH_WORKER and TPUSH_NUM_WORKERS as in a run on every worker, kept when
// a line runs on fewer of them.
void pin_indexes(std::vector<inventory::Worker>& workers, std::size_t first) {
  for (std::size_t i = first; i < workers.size(); ++i) {
    auto& env = workers[i].env;
    auto has = [&env](const char* name) {
      for (const auto& e : env)
        if (e.first == name) return true;
      return false;
    };
    if (!has("TPUSH_WORKER")) env.emplace_back("TPUSH_WORKER", std::to_string(i));
    if (!has("TPUSH_NUM_WORKERS")) env.emplace_back("TPUSH_NUM_WORKERS", std::to_string(workers.size()));
  }
}

class Prompt {
 public:
  Prompt(const Options& o, Targets targets, int signal_fd);
  ~Prompt() { pool_.clear(); }
  int loop();

 private:
  void run(const std::string& command);
  void local(const std::string& command);
  // false: the line was a quit
  bool obey(const PromptLine& p);
  void choose(const std::string& expr, PromptLine::Kind how);
  void say(const std::string& line) const { std::fprintf(stderr, "tpush: %s\n", line.c_str()); }
  std::string prompt() const;
  std::vector<std::string> chosen_labels() const;
  // Reads what signals came meanwhile (a Ctrl-C as a line ended, or one a
  // local command had); true when one of them was a hang-up or TERM.
  bool drain_signals();

  const Options& options_;
  std::vector<inventory::Worker> workers_;  // every worker named so far
  std::vector<char> chosen_;                // per worker: the next line runs there
  std::function<std::vector<inventory::Worker>()> refresh_;
  RemoteSetup setup_;
  int signal_fd_;
  std::string name_;
  Shown shown_ = Shown::streamed;
  std::optional<std::string> leader_;
  bool diff_ = false;
  std::vector<std::string> not_ok_;  // the last line's workers that did not succeed
  int last_code_ = output::exit_code::ok;
  bool ended_ = false;  // a hang-up or TERM came while a line or a local command ran
  ssh::KeptSessions pool_;
  util::LineEditor editor_;
};

Prompt::Prompt(const Options& o, Targets targets, int signal_fd)
    : options_(o),
      workers_(std::move(targets.workers)),
      chosen_(workers_.size(), 1),
      refresh_(tpu_refresher(o, targets, signal_fd)),
      setup_{resolve_env(o.env), o.cd},
      signal_fd_(signal_fd),
      name_(name_of(o)),
      shown_(o.gather ? Shown::gathered : o.leader ? Shown::leader : Shown::streamed),
      leader_(o.leader),
      diff_(o.diff),
      editor_(STDIN_FILENO, isatty(STDOUT_FILENO) ? stdout : stderr, util::LineEditor::default_history_file(),
              signal_fd) {
  pin_indexes(workers_, 0);
}

std::string Prompt::prompt() const {
  std::size_t n = 0;
  for (char c : chosen_) n += c;
  const std::string size = n == workers_.size() ? std::to_string(n) : std::to_string(n) + "/" + std::to_string(workers_.size());
  return name_ + "[" + size + "]> ";
}

std::vector<std::string> Prompt::chosen_labels() const {
  std::vector<std::string> labels;
  for (std::size_t i = 0; i < workers_.size(); ++i)
    if (chosen_[i]) labels.push_back(workers_[i].label);
  return labels;
}

int Prompt::loop() {
  std::fprintf(stderr, "tpush: %zu workers; each line runs on all of them (:help lists the prompt's own commands; "
               "Ctrl-D leaves)\n", workers_.size());
  const std::function<void()> idle = [this] { pool_.tick(Clock::now()); };
  for (;;) {
    const auto read = editor_.read(prompt(), idle);
    if (read.kind == util::LineEditor::Read::Kind::end) break;
    if (read.kind == util::LineEditor::Read::Kind::interrupted) continue;
    const PromptLine p = parse_prompt_line(read.text);
    if (p.kind == PromptLine::Kind::nothing) continue;
    editor_.remember(read.text);
    try {
      if (!obey(p) || ended_) break;
    } catch (const UsageError& e) {
      say("error: " + std::string(e.what()));
    } catch (const SetupError& e) {
      say("error: " + std::string(e.what()));
    }
  }
  std::fputc('\n', stderr);
  return last_code_;
}

bool Prompt::obey(const PromptLine& p) {
  using Kind = PromptLine::Kind;
  switch (p.kind) {
    case Kind::nothing: break;
    case Kind::run: run(p.arg); break;
    case Kind::quit: return false;
    case Kind::help: std::fputs(prompt_help().c_str(), stderr); break;
    case Kind::workers: {
      const auto labels = chosen_labels();
      std::printf("%s (%zu)\n", labels.empty() ? "(none)" : inventory::fold_node_set(labels).c_str(), labels.size());
      std::fflush(stdout);
      break;
    }
    case Kind::add:
    case Kind::drop:
    case Kind::only: choose(p.arg, p.kind); break;
    case Kind::all: std::fill(chosen_.begin(), chosen_.end(), 1); break;
    case Kind::failed: {
      if (not_ok_.empty()) throw UsageError(":failed: every worker of the last line succeeded (or none ran yet)");
      for (std::size_t i = 0; i < workers_.size(); ++i)
        chosen_[i] = std::find(not_ok_.begin(), not_ok_.end(), workers_[i].label) != not_ok_.end();
      break;
    }
    case Kind::gather:
      shown_ = p.arg.empty() && shown_ == Shown::gathered ? Shown::streamed : Shown::gathered;
      say(shown_ == Shown::gathered ? "output gathered (as -b)" : "output streamed");
      break;
    case Kind::stream: shown_ = Shown::streamed; say("output streamed"); break;
    case Kind::leader:
      shown_ = Shown::leader;
      leader_ = p.arg.empty() ? std::string(kFirstWorker) : p.arg;
      say("leader output: " + (p.arg.empty() ? std::string("the first worker") : p.arg) + " streamed, the others where they differ");
      break;
    case Kind::diff:
      diff_ = !diff_;
      say(diff_ ? "diffs against the most common output (--diff)" : "no diffs");
      break;
    case Kind::local: local(p.arg); break;
    case Kind::unknown: throw UsageError("':" + p.arg + "' is not a prompt command (:help lists them)");
  }
  return true;
}

// :add, :drop, :only. Names the workers of this session match by label; a new
// host joins (as -w would add it).
void Prompt::choose(const std::string& expr, PromptLine::Kind how) {
  using Kind = PromptLine::Kind;
  if (util::trim(expr).empty())
    throw UsageError("which workers? write a host list after it (e.g. :drop w[4-7], +node12)");
  // Matched by label as written; a new host is labelled as -w would (with
  // --label index: the next w<i>).
  std::vector<inventory::Worker> named = inventory::workers_from_host_lists({expr}, {}, {});
  if (how == Kind::only) std::fill(chosen_.begin(), chosen_.end(), 0);
  std::vector<std::string> unknown;
  const std::size_t before = workers_.size();
  for (auto& w : named) {
    auto it = std::find_if(workers_.begin(), workers_.end(), [&](const auto& k) { return k.label == w.label; });
    if (it != workers_.end()) {
      chosen_[static_cast<std::size_t>(it - workers_.begin())] = how != Kind::drop;
    } else if (how == Kind::drop) {
      unknown.push_back(w.label);
    } else {
      if (options_.label == "index") w.label = "w" + std::to_string(workers_.size());
      workers_.push_back(std::move(w));
      chosen_.push_back(1);
    }
  }
  pin_indexes(workers_, before);
  if (!unknown.empty())
    say("not among these workers, so not dropped: " + inventory::fold_node_set(unknown) + " (:workers lists them)");
  const auto labels = chosen_labels();
  say("the next lines run on " + (labels.empty() ? std::string("no worker (:all brings them back)")
                                                  : inventory::fold_node_set(labels) + " (" + std::to_string(labels.size()) + ")"));
}

void Prompt::run(const std::string& command) {
  std::vector<inventory::Worker> workers;
  for (std::size_t i = 0; i < workers_.size(); ++i)
    if (chosen_[i]) workers.push_back(workers_[i]);
  if (workers.empty()) throw UsageError("no workers to run on (:all brings them back, :add names more)");
  Options o = options_;
  o.rest = {command};
  o.gather = shown_ == Shown::gathered;
  o.leader = shown_ == Shown::leader ? leader_ : std::nullopt;
  o.diff = diff_;
  o.brief_summary = true;
  fanout::RunHost host{&pool_, {}, 0};
  o.run_host = &host;
  RunPlan plan;
  plan.command = command;
  plan.setup = setup_;
  plan.tty = o.tty;
  plan.signal_fd = signal_fd_;
  plan.refresh = refresh_;
  std::vector<fanout::WorkerResult> results;
  plan.results = &results;
  const std::vector<std::string> labels = chosen_labels();  // the order of `workers`, and of `results`
  last_code_ = run_on_workers(o, std::move(workers), plan);
  not_ok_.clear();
  for (std::size_t i = 0; i < results.size() && i < labels.size(); ++i)
    if (results[i].outcome != fanout::Outcome::ok) not_ok_.push_back(labels[i]);
  drain_signals();  // a second Ctrl-C that came as the line ended
}

// !CMD: in a shell here, in tpush's process group, so Ctrl-C reaches it as it
// would at the user's own shell.
void Prompt::local(const std::string& command) {
  if (command.empty()) throw UsageError("! needs a command to run here (e.g. !ls)");
  util::ChildSpec spec;
  spec.program = "/bin/sh";
  spec.args = {"-c", command};
  spec.stdin_fd = spec.stdout_fd = spec.stderr_fd = util::kInherit;
  spec.own_group = false;
  util::Child child = util::Child::spawn(spec);
  const int status = child.wait();
  drain_signals();  // its Ctrl-C reached tpush too
  if (status != 0) say("!" + command + ": " + util::describe_wait_status(status));
}

bool Prompt::drain_signals() {
  const auto pending = util::drain_signals(signal_fd_);
  if (pending.terminate || pending.hang_up) ended_ = true;
  return ended_;
}

}  // namespace

bool wants_prompt(const Options& o) { return o.rest.empty() && o.subcommand.empty() && isatty(STDIN_FILENO) == 1; }

int interactive_main(const Options& o, Targets targets, int signal_fd) {
  std::setlocale(LC_CTYPE, "");  // libedit edits and shows characters as the terminal's locale says
  Prompt prompt(o, std::move(targets), signal_fd);
  return prompt.loop();
}

}  // namespace tpush::commands
