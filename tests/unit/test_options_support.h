// The options of a tpush command line, for the tests of option parsing and of
// the config file under it.
#pragma once

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "tpush/commands/cli/options.h"

namespace tpush::test {

// The options of `tpush WORDS...`; the words must parse.
inline commands::Options parse_words(std::vector<std::string> words) {
  words.insert(words.begin(), "tpush");
  std::vector<const char*> argv;
  for (const auto& w : words) argv.push_back(w.c_str());
  auto o = commands::parse_options(static_cast<int>(argv.size()), argv.data());
  REQUIRE(o.has_value());
  return *o;
}

}  // namespace tpush::test
