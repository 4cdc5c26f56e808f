#include "tpush/ssh_config/parse.h"

#include <fcntl.h>
#include <glob.h>
#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "tpush/util/pattern.h"
#include "tpush/ssh_config/line.h"
#include "tpush/ssh_config/tokens.h"
#include "tpush/util/string.h"

namespace tpush::ssh_config {

namespace {

constexpr int kMaxIncludeDepth = 16;  // OpenSSH's READCONF_MAX_DEPTH

using util::iequals;

// Debian's rule (its "allow harmless group-writability" patch): the group
// is the user's own when every account with it as primary group is the user
// and its only listed member, if any, is the file's owner.
bool group_is_private(gid_t gid, uid_t user, uid_t owner) {
  std::vector<char> buf(16384);
  group gr{};
  group* found = nullptr;
  if (getgrgid_r(gid, &gr, buf.data(), buf.size(), &found) != 0 || found == nullptr) return false;
  int members = 0;
  bool only_user = true;
  setpwent();
  while (const passwd* pw = getpwent()) {
    if (pw->pw_gid != gid) continue;
    ++members;
    only_user = only_user && pw->pw_uid == user;
  }
  endpwent();
  if (!only_user) return false;
  if (gr.gr_mem != nullptr && gr.gr_mem[0] != nullptr) {
    ++members;
    std::vector<char> pbuf(16384);
    passwd pw{};
    passwd* owner_pw = nullptr;
    if (getpwuid_r(owner, &pw, pbuf.data(), pbuf.size(), &owner_pw) != 0 || owner_pw == nullptr) return false;
    if (std::strcmp(owner_pw->pw_name, gr.gr_mem[0]) != 0 || gr.gr_mem[1] != nullptr) return false;
  }
  return members > 0;
}

// ssh reads a user config file (and any included file) only if nobody else
// could have written it: owned by the user or root, not writable by others,
// writable by its group only when that group is the user's own.
bool secure_permissions(const struct stat& st) {
  const uid_t uid = getuid();
  if (st.st_uid != 0 && st.st_uid != uid) return false;
  if ((st.st_mode & S_IWOTH) != 0) return false;
  if ((st.st_mode & S_IWGRP) != 0 && !group_is_private(st.st_gid, uid, st.st_uid)) return false;
  return true;
}

class Parser {
 public:
  Parser(const SshConfigSources& sources, ParsedConfig& out)
      : sources_(sources), out_(out), home_(sources.home.string()) {
    out_.sources.push_back("-o");
  }

  void option_lines() {
    ConfigDirective start;
    start.kind = ConfigDirective::Kind::file_start;
    out_.directives.push_back(start);
    for (std::size_t i = 0; i < sources_.options.size(); ++i)
      line(sources_.options[i], Where{0, static_cast<int>(i + 1), true, 0, true});
  }

  void top_file(const ConfigFile& file) {
    ConfigDirective start;
    start.kind = ConfigDirective::Kind::file_start;
    out_.directives.push_back(start);
    const std::string path = file.path.string();
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      // ssh skips missing or unreadable default files, but not a -F file.
      if (file.scope == ConfigScope::named)
        error(display_path(path, home_) + ": cannot open: " + std::strerror(errno) +
              " (check the path given with -F)");
      return;
    }
    ::close(fd);
    read(path, file.scope != ConfigScope::system, file.scope == ConfigScope::user, 0);
  }

 private:
  struct Where {
    uint32_t source;  // index in out_.sources; 0 for -o
    int line;
    bool user_scope;
    int depth;
    bool command_line = false;
  };

  std::string where(const Where& w, std::string_view text = {}) const {
    if (w.command_line) return "-o \"" + std::string(text) + "\"";
    return out_.sources[w.source] + ":" + std::to_string(w.line);
  }

  void error(std::string message) { out_.errors.push_back(std::move(message)); }

  // Reads one file (depth 0: a top-level file; more: included).
  void read(const std::string& path, bool user_scope, bool check_permissions, int depth) {
    const std::string shown = display_path(path, home_);
    std::ifstream in(path, std::ios::binary);
    if (!in) return;  // vanished since it was found
    struct stat st {};
    const bool have_stat = ::stat(path.c_str(), &st) == 0;
    if (have_stat && check_permissions && !secure_permissions(st)) {
      error(shown + ": bad owner or permissions: ssh refuses a config file others may write; fix with "
                    "`chmod go-w " + shown + "` (and make it yours)");
      return;
    }
    if (have_stat && S_ISDIR(st.st_mode)) return;  // ssh reads a directory as empty
    out_.sources.push_back(shown);
    const auto source = static_cast<uint32_t>(out_.sources.size() - 1);
    std::string text;
    int number = 0;
    while (std::getline(in, text)) line(text, Where{source, ++number, user_scope, depth});
  }

  void line(const std::string& text, const Where& w) {
    ConfigLine parsed;
    const std::string split_error = split_config_line(text, parsed);
    if (parsed.keyword.empty()) return;
    const bool bad_quotes = !split_error.empty() && !split_error.starts_with("no argument");
    if (!split_error.empty() && !bad_quotes) return error(where(w, text) + ": " + split_error);
    const KeywordInfo* kw = find_keyword(parsed.keyword);
    if (kw == nullptr && !unknown_may_be_ignored(parsed.keyword))
      return error(where(w, text) + ": " + unknown_keyword_message(parsed.keyword));
    if (bad_quotes) return error(where(w, text) + ": " + split_error + "; close the quote");
    if (kw == nullptr) {
      ConfigDirective d = directive(ConfigDirective::Kind::unknown, w);
      d.value.text = parsed.keyword;
      out_.directives.push_back(std::move(d));
      return;
    }
    const bool structure = kw->key == ConfigKey::host || kw->key == ConfigKey::match || kw->key == ConfigKey::include;
    if (structure && w.command_line) {
      error(where(w, text) + ": " + std::string(kw->name) + " cannot be given with -o; put it in a config file");
      return;
    }
    switch (kw->key) {
      case ConfigKey::host: return host(parsed, w, text);
      case ConfigKey::match: return match(parsed, w, text);
      case ConfigKey::include: return include(parsed, w, text);
      default: break;
    }
    ConfigDirective d = directive(ConfigDirective::Kind::set, w);
    d.key = kw->key;
    if (std::string err = check_value(*kw, parsed, d.value); !err.empty()) {
      error(where(w, text) + ": " + err);
      return;
    }
    if (kw->key == ConfigKey::unsupported) {
      out_.warnings.push_back(where(w, text) + ": " + std::string(kw->name) +
                              " is no longer supported by OpenSSH, which ignores it; remove the line");
      return;
    }
    if (kw->key == ConfigKey::other) return;
    if (kw->key == ConfigKey::proxy_jump && w.command_line)
      for (const JumpHop& hop : d.value.jump.hops)
        if (!valid_command_line_host(hop.host) || (!hop.user.empty() && !valid_command_line_user(hop.user)))
          return error(where(w, text) + ": ProxyJump: \"" + (hop.user.empty() ? "" : hop.user + "@") + hop.host +
                       "\" has characters ssh refuses on its command line (shell metacharacters, blanks)");
    if (kw->key == ConfigKey::ignore_unknown) ignore_unknown_seen_.push_back(d.value.text);
    if (kw->key == ConfigKey::canonicalize_hostname && d.value.number != 0)
      out_.warnings.push_back(where(w, text) + ": CanonicalizeHostname " + parsed.args[0] +
                              " is not supported by tpush: host names are used as written, "
                              "without the DNS lookup and second pass ssh would do");
    out_.directives.push_back(std::move(d));
  }

  ConfigDirective directive(ConfigDirective::Kind kind, const Where& w) const {
    ConfigDirective d;
    d.kind = kind;
    d.source = w.source;
    d.line = w.line;
    d.user_scope = w.user_scope;
    return d;
  }

  // An unknown keyword is an error for every host unless an IgnoreUnknown
  // met so far could cover it; then each host decides (the IgnoreUnknown
  // that applies to it may differ).
  bool unknown_may_be_ignored(const std::string& keyword) const {
    for (const std::string& list : ignore_unknown_seen_)
      if (util::pattern_list_match(keyword, list, true) == util::PatternListMatch::positive) return true;
    return false;
  }

  void host(const ConfigLine& parsed, const Where& w, const std::string& text) {
    for (const std::string& p : parsed.args)
      if (p.empty()) return error(where(w, text) + ": Host: empty pattern; remove the \"\"");
    ConfigDirective d = directive(ConfigDirective::Kind::host, w);
    d.patterns = parsed.args;
    out_.directives.push_back(std::move(d));
  }

  void match(const ConfigLine& parsed, const Where& w, const std::string& text);
  void include(const ConfigLine& parsed, const Where& w, const std::string& text);

  const SshConfigSources& sources_;
  ParsedConfig& out_;
  std::string home_;
  std::vector<std::string> ignore_unknown_seen_;
};

void Parser::match(const ConfigLine& parsed, const Where& w, const std::string& text) {
  const std::string at = where(w, text) + ": Match: ";
  ConfigDirective d = directive(ConfigDirective::Kind::match, w);
  std::vector<std::string> unsupported;
  MatchWords words(parsed.rest);
  int attributes = 0;
  bool unbalanced = false;
  while (true) {
    std::optional<std::string> word = words.next(unbalanced);
    if (!word || word->empty()) break;
    if (word->front() == '#') {
      words.finish();
      break;
    }
    const bool negated = word->front() == '!';
    const std::string name = negated ? word->substr(1) : *word;
    if (iequals(name, "all")) {
      const std::optional<std::string> after = words.next(unbalanced);
      if (attributes > 1 || (after && !after->empty() && after->front() != '#'))
        return error(at + "\"all\" cannot be combined with other criteria; remove it or them");
      if (after && !after->empty()) words.finish();
      d.criteria.push_back(MatchCriterion{MatchCriterion::Type::all, negated, ""});
      break;
    }
    ++attributes;
    if (iequals(name, "canonical") || iequals(name, "final")) {
      unsupported.push_back(*word);
      continue;
    }
    std::optional<MatchCriterion::Type> type;  // none: exec, or newer than OpenSSH 9.2
    if (iequals(name, "host")) type = MatchCriterion::Type::host;
    else if (iequals(name, "originalhost")) type = MatchCriterion::Type::original_host;
    else if (iequals(name, "user")) type = MatchCriterion::Type::user;
    else if (iequals(name, "localuser")) type = MatchCriterion::Type::local_user;
    const std::optional<std::string> arg = words.next(unbalanced);
    if (!arg || arg->empty() || arg->front() == '#')
      return error(at + "\"" + name + "\" needs " +
                   (type ? "a pattern, e.g. \"Match " + name + " example*\"" : std::string("an argument")));
    if (!type) {
      unsupported.push_back(*word + " " + *arg);
      continue;
    }
    d.criteria.push_back(MatchCriterion{*type, negated, *arg});
  }
  if (attributes == 0 && d.criteria.empty())
    return error(at + "no criteria; use e.g. \"Match host pattern\" or \"Match all\"");
  if (const std::optional<std::string_view> rest = words.rest(); rest && !rest->empty())
    return error(at + "extra text \"" + std::string(*rest) + "\" at the end of the line");
  if (!unsupported.empty()) {
    std::string list;
    for (const std::string& u : unsupported) list += (list.empty() ? "" : ", ") + u;
    out_.warnings.push_back(where(w, text) + ": Match " + list +
                            ": not supported by tpush (it runs no commands and does no canonicalization; "
                            "criteria newer than OpenSSH 9.2 are unknown); this block never applies");
    d.never = true;
  }
  out_.directives.push_back(std::move(d));
}

void Parser::include(const ConfigLine& parsed, const Where& w, const std::string& text) {
  const std::string at = where(w, text) + ": Include: ";
  for (const std::string& arg : parsed.args) {
    if (arg.empty()) return error(at + "empty path; remove the \"\"");
    if (arg.front() == '~' && !w.user_scope)
      return error(at + "\"" + arg + "\": ~ is not allowed in the system config; use an absolute path");
    std::string pattern = arg;
    if (arg.front() != '/' && arg.front() != '~')
      pattern = w.user_scope ? "~/.ssh/" + arg : sources_.system_dir.string() + "/" + arg;
    std::string expanded;
    if (std::string err = expand_tilde(pattern, home_, expanded); !err.empty()) return error(at + err);
    glob_t gl{};
    const int r = ::glob(expanded.c_str(), 0, nullptr, &gl);
    if (r == GLOB_NOMATCH) {
      globfree(&gl);
      continue;
    }
    if (r != 0) {
      globfree(&gl);
      return error(at + "cannot expand \"" + expanded + "\"");
    }
    std::vector<std::string> paths(gl.gl_pathv, gl.gl_pathv + gl.gl_pathc);
    globfree(&gl);
    for (const std::string& path : paths) {
      if (w.depth + 1 > kMaxIncludeDepth)
        return error(at + "more than " + std::to_string(kMaxIncludeDepth) +
                     " levels of Include (does a file include itself?) at \"" + display_path(path, home_) + "\"");
      const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
      if (fd < 0) {
        if (errno != ENOENT)
          error(at + "cannot open \"" + display_path(path, home_) + "\": " + std::strerror(errno));
        continue;
      }
      ::close(fd);
      out_.directives.push_back(directive(ConfigDirective::Kind::include_start, w));
      read(path, w.user_scope, /*check_permissions=*/true, w.depth + 1);
      out_.directives.push_back(directive(ConfigDirective::Kind::include_end, w));
    }
  }
}

}  // namespace

std::string display_path(const std::string& path, const std::string& home) {
  if (home.empty() || home == "/") return path;
  std::string prefix = home;
  if (prefix.back() != '/') prefix += '/';
  if (path.starts_with(prefix)) return "~/" + path.substr(prefix.size());
  return path;
}

ParsedConfig parse_ssh_config(const SshConfigSources& sources) {
  ParsedConfig out;
  Parser parser(sources, out);
  parser.option_lines();
  for (const ConfigFile& file : sources.files) parser.top_file(file);
  return out;
}

}  // namespace tpush::ssh_config
