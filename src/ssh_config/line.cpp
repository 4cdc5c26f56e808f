#include "tpush/ssh_config/line.h"

#include "tpush/util/string.h"

namespace tpush::ssh_config {

namespace {

constexpr std::string_view kBlanks = " \t\r\n";

bool is_blank(char c) { return kBlanks.find(c) != std::string_view::npos; }

std::size_t skip_blanks(const std::string& s, std::size_t pos) {
  while (pos < s.size() && is_blank(s[pos])) ++pos;
  return pos;
}

// argv_split with comments: false on an unterminated quote.
bool split_arguments(std::string_view s, std::vector<std::string>& out) {
  out.clear();
  std::size_t i = 0;
  while (i < s.size()) {
    if (s[i] == ' ' || s[i] == '\t') {
      ++i;
      continue;
    }
    if (s[i] == '#') break;
    std::string arg;
    char quote = 0;
    for (; i < s.size(); ++i) {
      const char c = s[i];
      if (c == '\\') {
        const char n = i + 1 < s.size() ? s[i + 1] : '\0';
        if (n == '\'' || n == '"' || n == '\\' || (quote == 0 && n == ' ')) ++i;
        arg += s[i];
      } else if (quote == 0 && (c == ' ' || c == '\t')) {
        break;
      } else if (quote == 0 && (c == '"' || c == '\'')) {
        quote = c;
      } else if (quote != 0 && c == quote) {
        quote = 0;
      } else {
        arg += c;
      }
    }
    if (quote != 0) return false;
    out.push_back(std::move(arg));
  }
  return true;
}

}  // namespace

std::optional<std::string> MatchWords::next(bool& unbalanced) {
  unbalanced = false;
  if (done_) return std::nullopt;
  const std::size_t start = pos_;
  const std::size_t stop = text_.find_first_of(" \t\r\n\"=", pos_);
  if (stop == std::string::npos) {
    done_ = true;
    return text_.substr(start);
  }
  if (text_[stop] == '"') {
    text_.erase(stop, 1);
    const std::size_t close = text_.find('"', stop);
    if (close == std::string::npos) {
      unbalanced = true;
      done_ = true;
      return std::nullopt;
    }
    std::string word = text_.substr(start, close - start);
    pos_ = skip_blanks(text_, close + 1);
    return word;
  }
  const bool was_equals = text_[stop] == '=';
  std::string word = text_.substr(start, stop - start);
  pos_ = skip_blanks(text_, stop + 1);
  // One `=` may separate words, with blanks on either side.
  if (!was_equals && pos_ < text_.size() && text_[pos_] == '=') pos_ = skip_blanks(text_, pos_ + 1);
  return word;
}

std::optional<std::string_view> MatchWords::rest() const {
  if (done_) return std::nullopt;
  return std::string_view(text_).substr(pos_);
}

std::string split_config_line(std::string_view line, ConfigLine& out) {
  out = ConfigLine{};
  // Trailing blanks (and a form feed) go; OpenSSH never strips the first character.
  std::size_t len = line.size();
  while (len > 1 && (is_blank(line[len - 1]) || line[len - 1] == '\f')) --len;
  line = line.substr(0, len);

  MatchWords words(line);
  bool unbalanced = false;
  std::optional<std::string> keyword = words.next(unbalanced);
  if (keyword && keyword->empty()) keyword = words.next(unbalanced);  // leading blanks
  if (!keyword || keyword->empty() || keyword->front() == '#') return "";
  *keyword = util::ascii_lowercase(*keyword);

  std::string_view rest = words.rest().value_or(std::string_view());
  while (!rest.empty() && is_blank(rest.front())) rest.remove_prefix(1);
  out.keyword = std::move(*keyword);
  if (rest.empty()) return "no argument after keyword \"" + out.keyword + "\"";
  out.rest = std::string(rest);
  if (!split_arguments(rest, out.args)) return "unbalanced quotes";
  return "";
}

}  // namespace tpush::ssh_config
