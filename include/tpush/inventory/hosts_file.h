// Hosts files as pdsh reads them: one host list (host_list.h) per line, `#`
// comments, and `#include FILE` in the first column. What is particular to a
// file lives here: reading it, checking each whole line is text, naming
// FILE:LINE in errors, where an included file is, and refusing a file that
// includes itself. The lists on its lines are expanded by host_list.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tpush::inventory {

// The whole of `file` (a hosts file, a groups file); failures are a UsageError
// "cannot read KIND 'FILE': <system reason>".
std::string read_list_file(const std::filesystem::path& file, std::string_view kind);

// Whether `line` is pdsh's `#include FILE` (in the first column).
bool is_include_line(std::string_view line);

// The file an `#include FILE` line names: a name that is not absolute and does
// not start with ./ or ../ is relative to `base`. Not exactly one name is a
// UsageError.
std::filesystem::path include_target(std::string_view line, const std::filesystem::path& base);

// `line` without its comment: from a '#' at the start of the line or of an item
// (after a blank or a comma). Inside a name it is part of it (gpu-#4), as nodeset
// and pdsh -w keep it: a name cut short at a '#' would run on another host.
std::string_view without_comment(std::string_view line);

// Hands each line of `text`, the hosts file `source`, to `add_line`, once the
// line is checked to be text (check_host_text: a NUL anywhere, even in a
// comment; elsewhere what is not a comment). A UsageError from the check or
// from `add_line` comes out as "SOURCE:LINE: <message>".
void for_each_hosts_line(std::string_view text, std::string_view source,
                         const std::function<void(std::string_view line)>& add_line);

// The hosts files being read, each inside the one before (through ^FILE or
// #include), so that a file including itself is refused rather than read forever.
class HostsFileChain {
 public:
  // `file` is being read now; a UsageError naming the cycle when it was already.
  void enter(const std::filesystem::path& file);
  // The file entered last is read.
  void leave() { chain_.pop_back(); }

 private:
  std::vector<std::pair<std::filesystem::path, std::filesystem::path>> chain_;  // as named, canonical
};

}  // namespace tpush::inventory
