#include "tpush/relay/relay_script.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <stdexcept>

#include "tpush/relay/relay_control_sh.h"
#include "tpush/relay/relay_feed_sh.h"
#include "tpush/relay/relay_hop_sh.h"
#include "tpush/relay/relay_write_sh.h"
#include "tpush/util/shell_quote.h"

namespace tpush::relay {
namespace {

void field(std::string& out, std::string_view value) {
  out.append(value);
  out.push_back('\0');
}

// One word of an order line: bytes the script would split on or that no host,
// user or key holds become '_' (such a hop then fails, and tpush feeds the
// worker itself). `key`: "TYPE BASE64", whose one blank is kept.
std::string word(std::string_view value, bool key = false) {
  std::string out(value.empty() ? "_" : value);
  bool blank_kept = false;
  for (char& c : out) {
    const bool plain = std::isalnum(static_cast<unsigned char>(c)) || std::string_view("._:@%+=,/[]-").find(c) != std::string_view::npos;
    if (key && c == ' ' && !blank_kept) {
      blank_kept = true;
      continue;
    }
    if (!plain) c = '_';
  }
  return out;
}

std::string octal(unsigned mode) {
  char buf[16];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, mode & 07777, 8);
  return std::string(buf, end);
}

}  // namespace

std::string relay_control_command(bool preserve, int silence_seconds) {
  return "exec bash -c " + util::shell_quote(relay_control_sh) + " tpush-relay" + (preserve ? " 1 " : " 0 ") +
         std::to_string(silence_seconds);
}

bool plain_directory(std::string_view path) {
  if (path.size() < 2 || path.front() != '/' || path.find("..") != std::string_view::npos) return false;
  return std::all_of(path.begin(), path.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '/' || c == '-';
  });
}

std::string relay_feed_command(const std::string& directory, int attempt) {
  // relay_feed.sh goes in single quotes: it holds none, nor does a plain directory.
  if (!plain_directory(directory)) throw std::invalid_argument("relay directory is not a plain path: " + directory);
  return "exec /bin/sh -c '" +
         util::fill_in(util::one_line(relay_feed_sh), {{"@DIRECTORY@", directory},
                                                       {"@ATTEMPT@", std::to_string(attempt)},
                                                       {"@FEED_CUT@", std::to_string(kFeedCut)},
                                                       {"@WRITE@", util::one_line(relay_write_sh)}}) +
         "'";
}

std::string relay_host_alias(const std::string& id, std::size_t worker) {
  return "tpush-relay-" + id + "-" + std::to_string(worker);
}

std::string relay_hop_script() {
  return util::fill_in(util::one_line(relay_hop_sh), {{"@WRITE@", util::one_line(relay_write_sh)}});
}

std::string relay_setup(const std::vector<ManifestEntry>& manifest) {
  std::string body;
  field(body, relay_hop_script());
  field(body, std::to_string(manifest.size()));
  for (const ManifestEntry& e : manifest) {
    field(body, e.directory ? "d" : "f");
    field(body, octal(e.mode));
    field(body, std::to_string(static_cast<long long>(e.mtime)));
    field(body, std::to_string(e.size));
    field(body, e.sha256);
    field(body, e.path);
  }
  return std::to_string(body.size()) + "\n" + body;
}

std::string relay_go(int attempt, const std::optional<HopTarget>& next) {
  const std::string head = "go " + std::to_string(attempt) + " ";
  if (!next) return head + "-\n";
  return head + word(next->address) + " " + std::to_string(next->port) + " " + word(next->user) + " " +
         word(next->alias) + " " + word(next->host_key, true) + " " + word(next->directory) + " " +
         word(next->identity, true) + "\n";
}

RelayReport parse_relay_report(std::string_view line) {
  RelayReport r;
  const auto word_end = line.find(' ');
  const std::string_view word = line.substr(0, word_end);
  std::string_view rest = word_end == std::string_view::npos ? std::string_view() : line.substr(word_end + 1);
  using K = RelayReport::Kind;
  if (word == "ready") r.kind = K::ready;
  else if (word == "stored") r.kind = K::stored;
  else if (word == "end") r.kind = K::end;
  else if (word == "hop") r.kind = K::hop;
  else if (word == "failed") r.kind = K::failed;
  else if (word == "short") r.kind = K::short_of;
  else if (word == "mismatch") r.kind = K::mismatch;
  else return r;
  if (r.kind == K::failed || r.kind == K::short_of || r.kind == K::mismatch) {
    const auto index_end = rest.find(' ');
    const std::string_view index = rest.substr(0, index_end);
    long value = -1;
    if (index != "-") {
      auto [p, ec] = std::from_chars(index.data(), index.data() + index.size(), value);
      if (ec != std::errc() || p != index.data() + index.size() || value < 0) return RelayReport{};
    }
    r.index = value;
    rest = index_end == std::string_view::npos ? std::string_view() : rest.substr(index_end + 1);
  }
  r.text = std::string(rest);
  return r;
}

}  // namespace tpush::relay
