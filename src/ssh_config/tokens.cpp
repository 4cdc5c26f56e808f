#include "tpush/ssh_config/tokens.h"

#include <openssl/evp.h>
#include <pwd.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <vector>

namespace tpush::ssh_config {

namespace {

std::string allowed_list(std::string_view allowed) {
  std::string list;
  for (const char c : allowed) list += std::string("%") + c + ", ";
  return list + "%%";
}

// `${NAME}` at text[i] (text[i] == '$', text[i + 1] == '{'): the name and the
// index after `}`, or an error.
std::string dollar_name(std::string_view text, std::size_t i, std::string& name, std::size_t& after) {
  const std::size_t close = text.find('}', i + 2);
  if (close == std::string_view::npos)
    return "\"" + std::string(text.substr(i)) + "\" has no closing '}'";
  name.assign(text.substr(i + 2, close - i - 2));
  if (name.empty()) return "\"${}\" names no environment variable";
  after = close + 1;
  return "";
}

}  // namespace

void TokenTable::set(char token, std::string value) {
  for (auto& [letter, v] : values_)
    if (letter == token) {
      v = std::move(value);
      return;
    }
  values_.emplace_back(token, std::move(value));
}

const std::string* TokenTable::get(char token) const {
  for (const auto& [letter, v] : values_)
    if (letter == token) return &v;
  return nullptr;
}

std::string expand_tokens(std::string_view text, std::string_view allowed,
                          const TokenTable& tokens, bool dollar, std::string& out) {
  out.clear();
  std::size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    if (dollar && c == '$' && i + 1 < text.size() && text[i + 1] == '{') {
      std::string name;
      if (std::string err = dollar_name(text, i, name, i); !err.empty()) return err;
      const char* value = std::getenv(name.c_str());
      if (value == nullptr) return "environment variable ${" + name + "} is not set";
      out += value;
      continue;
    }
    if (c != '%') {
      out += c;
      ++i;
      continue;
    }
    if (i + 1 >= text.size()) return "'%' at the end; write '%%' for a literal '%'";
    const char token = text[i + 1];
    i += 2;
    if (token == '%') {
      out += '%';
      continue;
    }
    const std::string* value = allowed.find(token) != std::string_view::npos ? tokens.get(token) : nullptr;
    if (value == nullptr)
      return std::string("unknown token %") + token + " (here OpenSSH knows " + allowed_list(allowed) + ")";
    out += *value;
  }
  return "";
}

std::string check_dollar_references(std::string_view text) {
  for (std::size_t i = 0; i + 1 < text.size();) {
    if (text[i] != '$' || text[i + 1] != '{') {
      ++i;
      continue;
    }
    std::string name;
    if (std::string err = dollar_name(text, i, name, i); !err.empty()) return err;
    if (std::getenv(name.c_str()) == nullptr) return "environment variable ${" + name + "} is not set";
  }
  return "";
}

std::string expand_tilde(std::string_view path, std::string_view home, std::string& out) {
  if (path.empty() || path.front() != '~') {
    out.assign(path);
    return "";
  }
  std::string_view rest = path.substr(1);
  std::string user;
  if (!rest.empty() && rest.front() != '/') {
    const std::size_t slash = rest.find('/');
    user.assign(rest.substr(0, slash));
    rest = slash == std::string_view::npos ? std::string_view() : rest.substr(slash);
  }
  while (!rest.empty() && rest.front() == '/') rest.remove_prefix(1);

  std::string dir(home);
  if (!user.empty()) {
    passwd pw{};
    passwd* found = nullptr;
    std::vector<char> buf(16384);
    if (getpwnam_r(user.c_str(), &pw, buf.data(), buf.size(), &found) != 0 || found == nullptr)
      return "no such user \"" + user + "\" for \"" + std::string(path) + "\"";
    dir = found->pw_dir;
  }
  if (dir.empty() || dir.back() != '/') dir += '/';
  out = dir + std::string(rest);
  return "";
}

std::string connection_hash(std::string_view local_host, std::string_view host,
                            std::string_view port, std::string_view user) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  bool ok = ctx != nullptr && EVP_DigestInit_ex(ctx, EVP_sha1(), nullptr) == 1;
  for (const std::string_view part : {local_host, host, port, user})
    ok = ok && EVP_DigestUpdate(ctx, part.data(), part.size()) == 1;
  ok = ok && EVP_DigestFinal_ex(ctx, digest, &len) == 1;
  EVP_MD_CTX_free(ctx);
  if (!ok) return "";
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  for (unsigned int i = 0; i < len; ++i) {
    hex += kHex[digest[i] >> 4];
    hex += kHex[digest[i] & 0xf];
  }
  return hex;
}

LocalHostNames local_host_names() {
  char name[HOST_NAME_MAX + 1] = {};
  if (gethostname(name, sizeof name - 1) != 0) name[0] = '\0';
  LocalHostNames names{name, name};
  names.short_name.resize(names.short_name.find('.') == std::string::npos
                              ? names.short_name.size()
                              : names.short_name.find('.'));
  return names;
}

}  // namespace tpush::ssh_config
