#include "tpush/commands/run.h"

#include <spdlog/spdlog.h>

#include "tpush/commands/plan/run_context.h"
#include "tpush/commands/sudo_command_sh.h"
#include "tpush/fanout/command_job.h"
#include "tpush/fanout/input_feed.h"
#include "tpush/fanout/sudo_password.h"
#include "tpush/ssh/remote_group.h"
#include "tpush/util/error.h"
#include "tpush/util/shell_quote.h"

#include <unistd.h>

#include <cctype>
#include <optional>
#include <cstdlib>

namespace tpush::commands {

EnvList resolve_env(const std::vector<std::string>& specs) {
  EnvList env;
  for (const auto& spec : specs) {
    const auto eq = spec.find('=');
    const std::string name = spec.substr(0, eq);
    bool valid = !name.empty() && !std::isdigit(static_cast<unsigned char>(name[0]));
    for (char c : name) valid = valid && (std::isalnum(static_cast<unsigned char>(c)) || c == '_');
    if (!valid)
      throw UsageError("bad -e '" + name + "': a variable name is letters, digits and _ (write -e NAME=VALUE)");
    if (eq != std::string::npos) {
      env.emplace_back(name, spec.substr(eq + 1));
      continue;
    }
    const char* value = std::getenv(name.c_str());
    if (!value)
      throw UsageError("-e " + name + ": " + name + " is not set here (export it, or write -e " + name + "=VALUE)");
    env.emplace_back(name, value);
  }
  return env;
}

std::string remote_command_line(const std::string& command, const inventory::Worker& worker,
                                std::size_t index, std::size_t count, const RemoteSetup& setup,
                                bool mask) {
  EnvList env = {{"TPUSH_WORKER", std::to_string(index)}, {"TPUSH_NUM_WORKERS", std::to_string(count)}};
  auto set = [&env](const std::string& name, const std::string& value) {
    for (auto& e : env)
      if (e.first == name) return void(e.second = value);
    env.emplace_back(name, value);
  };
  for (const auto& [name, value] : worker.env) set(name, value);
  std::string line = "export";
  for (const auto& [name, value] : env) line += " " + name + "=" + util::shell_quote(value);
  if (!setup.env.empty()) {
    line += "; export";
    for (const auto& [name, value] : setup.env)
      line += " " + name + "=" + (mask ? std::string("'********'") : util::shell_quote(value));
  }
  if (!setup.cd.empty()) line += "; cd " + util::shell_quote(setup.cd) + " || exit 1";
  return line + "; " + command;
}

std::string with_sudo(const std::string& line, const std::string& prompt, const std::string& mark) {
  return util::fill_in(util::one_line(sudo_command_sh), {{"@PROMPT@", util::shell_quote(prompt)},
                                                         {"@MARK@", util::shell_quote(mark)},
                                                         {"@COMMAND@", util::shell_quote(line)}});
}

int run_on_workers(const Options& o, std::vector<inventory::Worker> workers, const RunPlan& plan) {
  RunContext ctx(o, std::move(workers), plan.signal_fd);
  const std::size_t count = ctx.workers().size();
  // --sudo: the run's own prompt and mark, which no worker can guess.
  std::optional<fanout::SudoPassword> sudo;
  if (o.sudo) {
    const std::string nonce = ssh::nonce();
    sudo.emplace(ctx.logins(), ctx.can_ask(), [&ctx](const std::string& prompt) { return ctx.ask_secret(prompt); },
                 "[tpush:sudo:" + nonce + "] ", "tpush:sudo-ran:" + nonce);
  }
  const auto line_for = [&](std::size_t i, bool mask) {
    const std::string line = remote_command_line(plan.command, ctx.workers()[i], i, count, plan.setup, mask);
    return sudo ? with_sudo(line, sudo->prompt(), sudo->mark()) : line;
  };
  if (count) spdlog::debug("remote command for {}: {}", ctx.workers().front().label, line_for(0, true));
  std::optional<fanout::InputFeed> input;
  if (plan.forward_stdin) input.emplace(STDIN_FILENO);
  const ssh::ExecChannel::Settings channel{plan.tty, input ? &*input : nullptr};
  auto make_job = [&](std::size_t i) -> std::unique_ptr<fanout::Job> {
    return std::make_unique<fanout::CommandJob>(i, ctx.endpoint(i), ctx.settings(), line_for(i, false), channel,
                                                ctx.deadlines(i), ctx.output(), sudo ? &*sudo : nullptr);
  };
  fanout::RunOutcome run = ctx.run(ctx.everyone(), make_job, input ? &*input : nullptr);
  ctx.retry_moved(run, plan.refresh, make_job);
  if (plan.results) *plan.results = run.results;
  return ctx.finish(run);
}

}  // namespace tpush::commands
