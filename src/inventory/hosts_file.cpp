#include "tpush/inventory/hosts_file.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <system_error>

#include "tpush/inventory/host_pattern.h"
#include "tpush/util/error.h"

namespace tpush::inventory {
namespace {

namespace fs = std::filesystem;
using std::string_view;

}  // namespace

std::string read_list_file(const fs::path& file, string_view kind) {
  const auto fail_read = [&](int err) {
    throw UsageError("cannot read " + std::string(kind) + " " + quote_for_message(file.string()) + ": " +
                     std::strerror(err));
  };
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> in(std::fopen(file.c_str(), "rb"), &std::fclose);
  if (!in) fail_read(errno);
  std::string text;
  char buffer[16384];
  std::size_t got = 0;
  while ((got = std::fread(buffer, 1, sizeof buffer, in.get())) > 0) text.append(buffer, got);
  if (std::ferror(in.get())) fail_read(errno != 0 ? errno : EIO);
  return text;
}

bool is_include_line(string_view line) {
  return line.starts_with("#include") && (line.size() == 8 || is_list_blank(line[8]));
}

fs::path include_target(string_view line, const fs::path& base) {
  const string_view name = trim_blanks(line.substr(8));
  if (name.empty() || std::any_of(name.begin(), name.end(), is_list_blank)) {
    fail_host_list(line, "#include takes one file name (write #include FILE)");
  }
  fs::path file{std::string(name)};
  if (!file.is_absolute() && !name.starts_with("./") && !name.starts_with("../")) file = base / file;
  return file;
}

string_view without_comment(string_view line) {
  for (std::size_t i = 0; i < line.size(); ++i) {
    if (line[i] == '#' && (i == 0 || is_list_blank(line[i - 1]) || line[i - 1] == ',')) return line.substr(0, i);
  }
  return line;
}

void for_each_hosts_line(string_view text, string_view source, const std::function<void(string_view line)>& add_line) {
  std::size_t line_no = 0;
  while (!text.empty()) {
    ++line_no;
    const auto nl = text.find('\n');
    const string_view line = text.substr(0, nl);
    text.remove_prefix(nl == string_view::npos ? text.size() : nl + 1);
    try {
      // A NUL anywhere, even in a comment, says this is not a text file.
      if (line.find('\0') != string_view::npos) check_host_text(line, source);
      if (!is_include_line(line)) check_host_text(without_comment(line), source);
      add_line(line);
    } catch (const UsageError& e) {
      throw UsageError(escape_for_message(source) + ":" + std::to_string(line_no) + ": " + e.what());
    }
  }
}

void HostsFileChain::enter(const fs::path& file) {
  std::error_code ec;
  fs::path identity = fs::weakly_canonical(file, ec);
  if (ec) identity = file;
  for (std::size_t i = 0; i < chain_.size(); ++i) {
    if (chain_[i].second != identity) continue;
    std::string cycle;
    for (std::size_t j = i; j < chain_.size(); ++j) cycle += chain_[j].first.string() + " -> ";
    throw UsageError("hosts file " + quote_for_message(file.string()) + " includes itself (" +
                     escape_for_message(cycle + file.string()) + ")");
  }
  chain_.emplace_back(file, identity);
}

}  // namespace tpush::inventory
