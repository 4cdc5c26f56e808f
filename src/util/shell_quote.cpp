#include "tpush/util/shell_quote.h"

#include <vector>

namespace tpush::util {

std::string shell_quote(std::string_view value) {
  bool plain = !value.empty();
  for (char c : value) {
    const bool safe = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '_' || c == '-' || c == '.' || c == '/' || c == ',' || c == ':' ||
                      c == '@' || c == '%' || c == '+' || c == '=';
    if (!safe) plain = false;
  }
  if (plain) return std::string(value);
  std::string out = "'";
  for (char c : value) {
    if (c == '\'')
      out += "'\\''";
    else
      out += c;
  }
  return out + "'";
}

namespace {

// The length of the @NAME@ at the start of `text`, or 0.
std::size_t placeholder_at(std::string_view text) {
  if (text.size() < 3 || text[0] != '@') return 0;
  std::size_t i = 1;
  while (i < text.size() && ((text[i] >= 'A' && text[i] <= 'Z') || text[i] == '_')) ++i;
  return i > 1 && i < text.size() && text[i] == '@' ? i + 1 : 0;
}

}  // namespace

std::string fill_in(std::string_view script,
                    std::initializer_list<std::pair<std::string_view, std::string_view>> values) {
  std::string out;
  out.reserve(script.size());
  std::vector<bool> used(values.size());
  for (std::size_t i = 0; i < script.size();) {
    const std::size_t length = placeholder_at(script.substr(i));
    if (length == 0) {
      out += script[i++];
      continue;
    }
    const std::string_view name = script.substr(i, length);
    const auto* given = values.begin();
    while (given != values.end() && given->first != name) ++given;
    if (given == values.end()) throw std::logic_error("script placeholder " + std::string(name) + " not filled in");
    used[static_cast<std::size_t>(given - values.begin())] = true;
    out += given->second;
    i += length;
  }
  for (std::size_t k = 0; k < values.size(); ++k)
    if (!used[k])
      throw std::logic_error("script has no placeholder " + std::string(values.begin()[k].first));
  return out;
}

}  // namespace tpush::util
