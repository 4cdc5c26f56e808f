// The real OpenSSH as the oracle for ssh_config resolution. Every file in
// tests/ssh_config/*.conf names hosts to look up:
//
//   # query: [-l USER] [-p PORT] [-o "Keyword=Value"]... [USER@]HOST
//   # differs: FIELD: why tpush differs here (FIELD as ssh -G names it, or `exit`)
//   # expect-warning: text that one of tpush's load warnings contains
//
// The corpus is copied to a temp dir (`@DIR@` in a file becomes that dir,
// for absolute Includes). For each query `ssh -G -F FILE ...` prints the
// configuration, compared field by field with SshConfig::resolve() plus
// with_openssh_defaults(); then `ssh -v` with a ProxyCommand of `true`
// shows what -G does not: the expanded IdentityFile paths and ProxyCommand.
// Either ssh refusing the configuration must match tpush reporting errors.
// `~` is the passwd entry's home, as ssh has it. Needs OpenSSH 9.2 (Debian
// 12's); elsewhere the test says so and checks nothing.
#include <doctest/doctest.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "test_support.h"
#include "test_tpu_support.h"
#include "tpush/ssh_config/config.h"
#include "tpush/util/shell_quote.h"
#include "tpush/util/string.h"

namespace fs = std::filesystem;
using namespace tpush::ssh_config;
using tpush::util::join;
using tpush::util::shell_quote;
using tpush::util::trimmed;

namespace {

struct Query {
  std::string line;  // as written after "# query:"
  std::string host;
  std::optional<std::string> user;
  std::optional<uint16_t> port;
  std::vector<std::string> options;
};

struct CorpusFile {
  std::string name;
  fs::path path;  // the temp copy
  std::vector<Query> queries;
  std::map<std::string, std::string> differs;  // field -> reason
  std::vector<std::string> expect_warnings;
};

std::vector<std::string> split_words(const std::string& text) {
  std::vector<std::string> words;
  std::string word;
  bool quoted = false, any = false;
  for (const char c : text) {
    if (c == '"') {
      quoted = !quoted;
      any = true;
    } else if (!quoted && (c == ' ' || c == '\t')) {
      if (any) words.push_back(word);
      word.clear();
      any = false;
    } else {
      word += c;
      any = true;
    }
  }
  if (any) words.push_back(word);
  return words;
}

Query parse_query(const std::string& line) {
  Query q;
  q.line = line;
  const std::vector<std::string> words = split_words(line);
  for (std::size_t i = 0; i < words.size(); ++i) {
    if (words[i] == "-l" && i + 1 < words.size()) q.user = words[++i];
    else if (words[i] == "-p" && i + 1 < words.size()) q.port = static_cast<uint16_t>(std::stoi(words[++i]));
    else if (words[i] == "-o" && i + 1 < words.size()) q.options.push_back(words[++i]);
    else q.host = words[i];
  }
  // user@host, as ssh splits it (at the last @): the user is given like -l,
  // unless -l came first.
  if (const std::size_t at = q.host.rfind('@'); at != std::string::npos) {
    if (!q.user) q.user = q.host.substr(0, at);
    q.host = q.host.substr(at + 1);
  }
  return q;
}

// Copies tests/ssh_config to `dir` with @DIR@ replaced; returns the .conf files.
std::vector<CorpusFile> materialize(const fs::path& dir) {
  const fs::path source = tpush::test::source_root() / "tests" / "ssh_config";
  std::vector<CorpusFile> files;
  for (const auto& entry : fs::recursive_directory_iterator(source)) {
    const fs::path target = dir / fs::relative(entry.path(), source);
    if (entry.is_directory()) {
      fs::create_directories(target);
      continue;
    }
    std::string text = tpush::test::read_file(entry.path());
    for (std::size_t at; (at = text.find("@DIR@")) != std::string::npos;) text.replace(at, 5, dir.string());
    fs::create_directories(target.parent_path());
    std::ofstream(target, std::ios::binary) << text;
    fs::permissions(target, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read |
                                fs::perms::others_read);
    if (entry.path().extension() != ".conf" || entry.path().parent_path() != source) continue;
    CorpusFile file{entry.path().filename().string(), target, {}, {}, {}};
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);) {
      if (line.starts_with("# query:")) file.queries.push_back(parse_query(trimmed(line.substr(8))));
      if (line.starts_with("# expect-warning:")) file.expect_warnings.push_back(trimmed(line.substr(17)));
      if (line.starts_with("# differs:")) {
        const std::string rest = trimmed(line.substr(10));
        const std::size_t colon = rest.find(':');
        file.differs[trimmed(rest.substr(0, colon))] = colon == std::string::npos ? "" : trimmed(rest.substr(colon + 1));
      }
    }
    files.push_back(std::move(file));
  }
  std::sort(files.begin(), files.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  return files;
}

std::string ssh_args(const CorpusFile& file, const Query& q, const std::vector<std::string>& extra_options) {
  std::string cmd = " -F " + shell_quote(file.path.string());
  if (q.user) cmd += " -l " + shell_quote(*q.user);
  if (q.port) cmd += " -p " + std::to_string(*q.port);
  for (const std::string& o : q.options) cmd += " -o " + shell_quote(o);
  for (const std::string& o : extra_options) cmd += " -o " + shell_quote(o);
  return cmd + " -- " + shell_quote(q.host);
}

// ssh -G's output: keyword -> values (identityfile has several).
std::multimap<std::string, std::string> parse_dump(const std::string& out) {
  std::multimap<std::string, std::string> fields;
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    const std::size_t space = line.find(' ');
    if (space != std::string::npos) fields.emplace(line.substr(0, space), line.substr(space + 1));
  }
  return fields;
}

std::string yes_no(bool b) { return b ? "yes" : "no"; }

// tpush's resolution in ssh -G's words.
std::multimap<std::string, std::string> as_dump(const HostConfig& c) {
  std::multimap<std::string, std::string> f;
  f.emplace("hostname", *c.hostname.value);
  f.emplace("user", *c.user.value);
  f.emplace("port", std::to_string(*c.port.value));
  for (const IdentityFileEntry& id : c.identity_files) f.emplace("identityfile", id.written);
  for (const IdentityFileEntry& cert : c.certificate_files) f.emplace("certificatefile", cert.written);
  f.emplace("identitiesonly", yes_no(*c.identities_only.value));
  if (c.identity_agent.value) f.emplace("identityagent", *c.identity_agent.value);
  if (c.proxy.value && c.proxy.value->kind == ProxySetting::Kind::jump)
    f.emplace("proxyjump", c.proxy.value->jump.display);
  if (c.proxy.value && c.proxy.value->kind == ProxySetting::Kind::command)
    f.emplace("proxycommand", c.proxy.value->command_written);
  f.emplace("connecttimeout", c.connect_timeout.value ? std::to_string(*c.connect_timeout.value) : "none");
  f.emplace("serveraliveinterval", std::to_string(*c.server_alive_interval.value));
  f.emplace("serveralivecountmax", std::to_string(*c.server_alive_count_max.value));
  static const char* const kStrict[] = {"false", "accept-new", "true", "ask"};
  f.emplace("stricthostkeychecking", kStrict[static_cast<int>(*c.strict_host_key_checking.value)]);
  const auto files = [](const std::vector<std::string>& v) { return v.empty() ? std::string("none") : join(v, " "); };
  f.emplace("userknownhostsfile", files(*c.user_known_hosts_files.value));
  f.emplace("globalknownhostsfile", files(*c.global_known_hosts_files.value));
  if (c.host_key_alias.value) f.emplace("hostkeyalias", *c.host_key_alias.value);
  static const char* const kFamily[] = {"any", "inet", "inet6"};
  f.emplace("addressfamily", kFamily[static_cast<int>(*c.address_family.value)]);
  f.emplace("connectionattempts", std::to_string(*c.connection_attempts.value));
  f.emplace("batchmode", yes_no(*c.batch_mode.value));
  f.emplace("forwardagent", *c.forward_agent.value);
  return f;
}

const char* const kCompared[] = {
    "hostname", "user", "port", "identityfile", "certificatefile", "identitiesonly", "identityagent", "proxyjump",
    "proxycommand", "connecttimeout", "serveraliveinterval", "serveralivecountmax",
    "stricthostkeychecking", "userknownhostsfile", "globalknownhostsfile", "hostkeyalias",
    "addressfamily", "connectionattempts", "batchmode", "forwardagent"};

std::string values(const std::multimap<std::string, std::string>& m, const std::string& key) {
  std::vector<std::string> v;
  for (auto [it, end] = m.equal_range(key); it != end; ++it) v.push_back(it->second);
  return v.empty() ? "(absent)" : join(v, " | ");
}

// ssh -G prints GlobalKnownHostsFile before its ~ is expanded; ssh expands it later.
std::string expand_home(const std::string& words, const std::string& home) {
  std::string out;
  for (std::string w : split_words(words)) {
    if (w == "~" || w.starts_with("~/")) w = home + "/" + w.substr(std::min<std::size_t>(w.size(), 2));
    out += (out.empty() ? "" : " ") + w;
  }
  return out;
}

// What ssh -v shows: the identity files it tried (without the -cert twins)
// and the proxy command it ran; `reached_login` once it got that far.
struct Verbose {
  std::vector<std::string> identity_files;
  std::optional<std::string> proxy_command;
  bool reached_login = false;
};
Verbose parse_verbose(const std::string& out) {
  Verbose v;
  std::istringstream lines(out);
  constexpr std::string_view kId = "debug1: identity file ", kProxy = "debug1: Executing proxy command: exec ";
  for (std::string line; std::getline(lines, line);) {
    if (line.ends_with('\r')) line.pop_back();  // ssh ends its log lines with \r\n
    if (line.starts_with(kId)) {
      std::string path = line.substr(kId.size());
      path = path.substr(0, path.rfind(" type "));
      if (!v.identity_files.empty() && path == v.identity_files.back() + "-cert") continue;
      v.identity_files.push_back(path);
    } else if (line.starts_with(kProxy)) {
      v.proxy_command = line.substr(kProxy.size());
    } else if (line.starts_with("debug1: Local version string") ||
               line.find("kex_exchange_identification") != std::string::npos ||
               line.starts_with("banner exchange:")) {
      v.reached_login = true;  // past the identity files: the proxy `true` has already gone
    }
  }
  return v;
}

struct Job {
  std::string command;
  tpush::test::ShellRun result{0, {}};
};

// Runs the commands on a few threads (each is a short ssh run).
void run_all(std::vector<Job>& jobs) {
  std::size_t next = 0;
  std::mutex m;
  std::vector<std::thread> pool;
  for (int t = 0; t < 4; ++t)
    pool.emplace_back([&] {
      while (true) {
        std::size_t i;
        {
          std::lock_guard lock(m);
          if (next == jobs.size()) return;
          i = next++;
        }
        FILE* f = ::popen(jobs[i].command.c_str(), "r");
        std::string out;
        char buf[4096];
        for (std::size_t n; f && (n = std::fread(buf, 1, sizeof buf, f)) > 0;) out.append(buf, n);
        const int status = f ? ::pclose(f) : -1;
        jobs[i].result = {WIFEXITED(status) ? WEXITSTATUS(status) : -1, std::move(out)};
      }
    });
  for (std::thread& t : pool) t.join();
}

bool have_openssh_92() {
  const tpush::test::ShellRun r = tpush::test::run_shell("ssh -V 2>&1");
  return r.status == 0 && r.out.find("OpenSSH_9.2") != std::string::npos;
}

}  // namespace

TEST_CASE("ssh_config oracle: tpush resolves every corpus query as OpenSSH 9.2 does") {
  if (!have_openssh_92()) {
    // Where OpenSSH 9.2 is expected (CI, on Debian 12), its absence is a failure;
    // elsewhere a skip that CTest reports as one.
    const char* ci = std::getenv("CI");
    const bool in_ci = ci && *ci && std::string(ci) != "0" && std::string(ci) != "false";
    if (in_ci) FAIL("CI is set and OpenSSH 9.2 is missing (`ssh -V`): the oracle cannot run; install openssh-client");
    std::printf("tpush test skipped: needs OpenSSH 9.2 (`ssh -V`), the version the corpus was checked against\n");
    return;
  }
  const passwd* pw = getpwuid(getuid());
  REQUIRE(pw != nullptr);
  const std::string home = pw->pw_dir, local_user = pw->pw_name;

  tpush::test::TempDir dir;
  ::setenv("TPUSH_ORACLE_DIR", dir.path().c_str(), 1);
  // `Match exec` runs its command with $SHELL: make that a shell whoever runs this.
  const char* shell = std::getenv("SHELL");
  const std::string saved_shell = shell ? shell : "";
  ::setenv("SHELL", "/bin/sh", 1);
  ::unsetenv("TPUSH_ORACLE_UNSET");
  const std::vector<CorpusFile> corpus = materialize(dir.path());
  std::size_t query_count = 0;
  for (const CorpusFile& f : corpus) query_count += f.queries.size();
  MESSAGE("corpus: " << corpus.size() << " files, " << query_count << " queries");
  CHECK(corpus.size() >= 40);

  struct Case {
    const CorpusFile* file;
    const Query* query;
    SshConfig config;
    HostConfig resolved;
    bool own_proxy;  // ssh -v runs the corpus's ProxyCommand (a `true ...`)
    std::size_t dump_job, verbose_job;
  };
  constexpr std::size_t kNoJob = static_cast<std::size_t>(-1);
  std::vector<Case> cases;
  std::vector<Job> jobs;
  for (const CorpusFile& file : corpus) {
    CHECK_MESSAGE(!file.queries.empty(), file.name << " has no `# query:` line");
    for (const Query& q : file.queries) {
      SshConfigSources sources{q.options, {ConfigFile{file.path, ConfigScope::named}}, home, local_user};
      SshConfig config = SshConfig::load(sources);
      HostQuery query{q.host, q.user, q.port};
      HostConfig resolved = config.with_openssh_defaults(config.resolve(query));
      // ssh -v must not run a real proxy: unless tpush found a ProxyCommand
      // starting with `true`, it gets one (a -o comes first, so it wins).
      const bool own_proxy = resolved.proxy.value && resolved.proxy.value->kind == ProxySetting::Kind::command &&
                             resolved.proxy.value->command_written.starts_with("true");
      const std::vector<std::string> extra =
          own_proxy ? std::vector<std::string>{} : std::vector<std::string>{"ProxyCommand=true"};
      // ssh -v only where it shows something -G does not: written
      // IdentityFiles, a ProxyCommand, or an error tpush expects at connect.
      const bool verbose = own_proxy || !resolved.errors.empty() ||
                           std::any_of(resolved.identity_files.begin(), resolved.identity_files.end(),
                                       [](const IdentityFileEntry& id) {
                                         return id.origin.kind != ConfigOrigin::Kind::openssh_default;
                                       });
      jobs.push_back({"ssh -G" + ssh_args(file, q, {}) + " 2>&1 </dev/null"});
      if (verbose) jobs.push_back({"ssh -v" + ssh_args(file, q, extra) + " true 2>&1 </dev/null"});
      cases.push_back({&file, &q, std::move(config), std::move(resolved), own_proxy,
                       jobs.size() - (verbose ? 2 : 1), verbose ? jobs.size() - 1 : kNoJob});
    }
  }
  run_all(jobs);

  for (const Case& c : cases) {
    const CorpusFile& file = *c.file;
    CAPTURE(file.name);
    CAPTURE(c.query->line);
    const tpush::test::ShellRun& dump = jobs[c.dump_job].result;
    std::vector<std::string> errors = c.config.errors();
    errors.insert(errors.end(), c.resolved.errors.begin(), c.resolved.errors.end());
    const std::string tpush_errors = join(errors, "\n");
    CAPTURE(tpush_errors);
    for (const std::string& w : file.expect_warnings)
      CHECK_MESSAGE(std::any_of(c.config.warnings().begin(), c.config.warnings().end(),
                                [&](const std::string& have) { return have.find(w) != std::string::npos; }),
                    "expected a warning containing: " << w << "\nwarnings: " << join(c.config.warnings(), "\n"));

    const bool ssh_refuses = dump.status != 0;
    if (file.differs.count("exit")) {
      CHECK_MESSAGE(ssh_refuses != !errors.empty(), "documented exit difference no longer differs");
      continue;
    }
    if (ssh_refuses) {
      CHECK_MESSAGE(!errors.empty(), "ssh -G refused the configuration but tpush did not:\n" << dump.out);
      continue;
    }
    CHECK_MESSAGE(c.config.errors().empty(), "tpush refused what ssh -G accepts:\n" << tpush_errors);
    if (!c.config.errors().empty()) continue;

    // Field by field, as ssh -G prints them.
    std::multimap<std::string, std::string> theirs = parse_dump(dump.out);
    const std::multimap<std::string, std::string> ours = as_dump(c.resolved);
    if (theirs.count("globalknownhostsfile")) {
      auto it = theirs.find("globalknownhostsfile");
      it->second = expand_home(it->second, home);
    }
    for (const std::string field : kCompared) {
      const std::string mine = values(ours, field), real = values(theirs, field);
      if (file.differs.count(field)) {
        CHECK_MESSAGE(mine != real, field << ": documented difference (" << file.differs.at(field)
                                          << ") no longer differs: " << mine);
        continue;
      }
      CHECK_MESSAGE(mine == real, field << ": tpush \"" << mine << "\", ssh \"" << real << "\"");
    }

    // Expansions ssh does only when it connects.
    if (c.verbose_job == kNoJob) continue;
    const std::string& verbose = jobs[c.verbose_job].result.out;
    const Verbose v = parse_verbose(verbose);
    if (!c.resolved.errors.empty()) {
      CHECK_MESSAGE(!v.reached_login, "tpush reports errors ssh does not hit when connecting:\n" << verbose);
      continue;
    }
    CHECK_MESSAGE(v.reached_login, "ssh -v stopped early, tpush saw no problem:\n" << verbose);
    if (file.differs.count("identityfile")) continue;
    std::vector<std::string> expanded;
    for (const IdentityFileEntry& id : c.resolved.identity_files)
      if (!id.path.empty()) expanded.push_back(id.path);
    CHECK_MESSAGE(join(expanded, " | ") == join(v.identity_files, " | "),
                  "expanded IdentityFile: tpush \"" << join(expanded, " | ") << "\", ssh \""
                                                    << join(v.identity_files, " | ") << "\"");
    if (c.own_proxy && !file.differs.count("proxycommand"))
      CHECK_MESSAGE(v.proxy_command.value_or("(none)") == c.resolved.proxy.value->command,
                    "expanded ProxyCommand: tpush \"" << c.resolved.proxy.value->command << "\", ssh \""
                                                      << v.proxy_command.value_or("(none)") << "\"");
  }
  ::unsetenv("TPUSH_ORACLE_DIR");
  if (shell) ::setenv("SHELL", saved_shell.c_str(), 1);
  else ::unsetenv("SHELL");
}
