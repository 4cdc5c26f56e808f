#include "tpush/util/shell_quote.h"

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

}  // namespace tpush::util
