#include <CLI/CLI.hpp>

#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "tpush/commands/cli/subcommands.h"
#include "tpush/commands/forward.h"
#include "tpush/commands/plan/persist_run.h"
#include "tpush/commands/plan/run_context.h"
#include "tpush/commands/plan/targets.h"
#include "tpush/commands/shell.h"
#include "tpush/fanout/forward_job.h"
#include "tpush/output/exit_codes.h"
#include "tpush/util/error.h"

namespace tpush::commands {
namespace {

bool is_port(const std::string& s) {
  return !s.empty() && s.size() <= 5 && s.find_first_not_of("0123456789") == std::string::npos &&
         std::stoi(s) >= 1 && std::stoi(s) <= 65535;
}

std::string usage_hint() { return "(write LPORT, or [BIND:]LPORT:HOST:RPORT as ssh -L does)"; }

// A listening socket on bind:port; UsageError that names the spec when it cannot be had.
int listen_on(const ForwardSpec& spec, int port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  if (getaddrinfo(spec.bind.c_str(), service.c_str(), &hints, &found) != 0 || !found)
    throw UsageError("forward " + spec.text + ": cannot listen on '" + spec.bind +
                     "': not an address of this machine (leave it out for 127.0.0.1)");
  int err = 0;
  int fd = -1;
  for (addrinfo* a = found; a && fd < 0; a = a->ai_next) {
    fd = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    const int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(fd, a->ai_addr, a->ai_addrlen) == 0 && ::listen(fd, 128) == 0) break;
    err = errno;
    ::close(fd);
    fd = -1;
  }
  freeaddrinfo(found);
  if (fd >= 0) return fd;
  const std::string where = spec.bind + ":" + service;
  if (err == EADDRINUSE)
    throw UsageError("forward " + spec.text + ": local port " + service + " is in use on " + spec.bind +
                     " (pick another local port: tpush forward OTHER:" + spec.host + ":" + std::to_string(spec.remote_port) + ")");
  if (err == EACCES)
    throw UsageError("forward " + spec.text + ": local port " + service +
                     " is below 1024, which only root may listen on (pick a port of 1024 or more)");
  throw UsageError("forward " + spec.text + ": cannot listen on " + where + ": " + std::strerror(err));
}

}  // namespace

ForwardSpec parse_forward_spec(const std::string& text) {
  ForwardSpec spec;
  spec.text = text;
  std::vector<std::string> parts;
  std::string rest = text;
  // [BIND:]LPORT:HOST:RPORT, an IPv6 BIND or HOST in brackets.
  while (!rest.empty()) {
    if (rest.front() == '[') {
      const auto close = rest.find(']');
      if (close == std::string::npos) throw UsageError("forward " + text + ": '[' without ']' " + usage_hint());
      parts.push_back(rest.substr(1, close - 1));
      rest.erase(0, close + 1);
      if (!rest.empty() && rest.front() != ':') throw UsageError("forward " + text + ": ':' expected after ']' " + usage_hint());
      if (!rest.empty()) rest.erase(0, 1);
      continue;
    }
    const auto colon = rest.find(':');
    parts.push_back(rest.substr(0, colon));
    if (colon == std::string::npos) break;
    rest.erase(0, colon + 1);
    if (rest.empty()) parts.push_back("");
  }
  if (parts.size() == 1) parts = {parts[0], "localhost", parts[0]};
  if (parts.size() == 3) parts.insert(parts.begin(), "127.0.0.1");
  if (parts.size() != 4 || parts[2].empty()) throw UsageError("forward " + text + ": not a forward " + usage_hint());
  if (!is_port(parts[1])) throw UsageError("forward " + text + ": '" + parts[1] + "' is not a local port (1-65535) " + usage_hint());
  if (!is_port(parts[3])) throw UsageError("forward " + text + ": '" + parts[3] + "' is not a port (1-65535) " + usage_hint());
  spec.bind = parts[0].empty() ? "127.0.0.1" : parts[0] == "*" ? "0.0.0.0" : parts[0];
  spec.local_port = std::stoi(parts[1]);
  spec.host = parts[2];
  spec.remote_port = std::stoi(parts[3]);
  return spec;
}

int forward_main(Options& o, int signal_fd) {
  bool each = false;
  std::optional<std::string> on;
  SubcommandSpec spec;
  spec.without_sudo = "a forward runs no command on the worker (drop --sudo)";
  spec.description =
      "forward local ports to one worker's side until Ctrl-C, as ssh -L does: LPORT alone is the worker's own "
      "localhost:LPORT (tpush -t mytpu forward 6006 for TensorBoard); [BIND:]LPORT:HOST:RPORT reaches HOST:RPORT "
      "from the worker. The worker is the first, or the one --on names; with --each, every worker, on local "
      "ports LPORT, LPORT+1, ... in worker order.";
  spec.add_own = [&](CLI::App& app) {
    app.add_flag("--each", each, "Forward from every worker, to consecutive local ports");
    app.add_option("--on", on, "The worker to forward to: its label (w3, s1w0) or host")->option_text("LABEL");
  };
  const auto args = parse_subcommand(o, spec);
  if (!args) return output::exit_code::ok;
  if (args->empty())
    throw UsageError("'tpush forward' needs at least one SPEC (usage: " + usage_of("forward") + "; e.g. tpush forward 6006)");
  if (each && on) throw UsageError("tpush forward: --each and --on both say which workers; give one of them");
  std::vector<ForwardSpec> specs;
  for (const auto& a : *args) specs.push_back(parse_forward_spec(a));
  // Through a persist master, the forward rides its kept sessions (the master binds the ports).
  if (auto code = hand_to_master(o, signal_fd)) return *code;

  Targets t = resolve_targets(o, signal_fd);
  std::vector<inventory::Worker> chosen;
  if (each) {
    chosen = std::move(t.workers);
  } else {
    chosen.push_back(std::move(t.workers[pick_worker(t.workers, on, "tpush forward --on " + on.value_or(""))]));
  }
  // Every port is bound before anything connects: a port in use stops the run at once.
  std::vector<std::vector<fanout::ForwardTarget>> targets(chosen.size());
  try {
    for (std::size_t w = 0; w < chosen.size(); ++w) {
      for (const auto& s : specs) {
        const int port = s.local_port + static_cast<int>(w);
        if (port > 65535) throw UsageError("forward " + s.text + ": --each runs past port 65535 (start lower)");
        fanout::ForwardTarget target;
        target.listen_fd = listen_on(s, port);
        target.text = s.bind + ":" + std::to_string(port);
        target.host = s.host;
        target.port = s.remote_port;
        targets[w].push_back(std::move(target));
      }
    }
  } catch (...) {
    for (auto& ts : targets)
      for (auto& target : ts) ::close(target.listen_fd);
    throw;
  }

  RunContext ctx(o, std::move(chosen), signal_fd);
  ctx.on_events([] {});  // no status line: the forward runs until Ctrl-C
  auto make_job = [&](std::size_t i) -> std::unique_ptr<fanout::Job> {
    return std::make_unique<fanout::ForwardJob>(i, ctx.endpoint(i), ctx.settings(), ctx.deadlines(i),
                                                std::move(targets[i]), ctx.labels()[i], *ctx.reactor(), ctx.output());
  };
  const fanout::RunOutcome run = ctx.run(ctx.everyone(), make_job);
  ctx.writer().drain_and_stop();
  int code = output::exit_code::ok;
  for (std::size_t i = 0; i < run.results.size(); ++i) {
    const auto& r = run.results[i];
    if (r.outcome == fanout::Outcome::ok) continue;
    std::fprintf(stderr, "tpush: %s: %s\n", ctx.labels()[i].c_str(), r.reason.c_str());
    code = r.outcome == fanout::Outcome::interrupted ? output::exit_code::interrupted : output::exit_code::unreachable;
  }
  return code;
}

}  // namespace tpush::commands
