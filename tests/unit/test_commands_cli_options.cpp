// The command line: global options, where the remote command starts, the
// subcommand rule (its own options win), errors, and the help layout.
#include <doctest/doctest.h>

#include <CLI/CLI.hpp>

#include <sstream>
#include <string>
#include <vector>

#include "test_options_support.h"
#include "tpush/commands/cli/help.h"
#include "tpush/commands/cli/options.h"
#include "tpush/util/error.h"

namespace {

using tpush::UsageError;
using tpush::commands::Options;
using tpush::commands::parse_options;
using tpush::commands::parse_subcommand;
using tpush::commands::SubcommandSpec;
using tpush::test::parse_words;

std::string usage_error(std::vector<std::string> words) {
  try {
    parse_words(std::move(words));
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(no error)";
}

// Captures std::cout while `fn` runs.
template <typename Fn>
std::string captured(Fn fn) {
  std::ostringstream out;
  auto* old = std::cout.rdbuf(out.rdbuf());
  fn();
  std::cout.rdbuf(old);
  return out.str();
}

}  // namespace

TEST_CASE("options: the remote command starts at the first word that is not an option") {
  const Options o = parse_words({"-w", "a,b", "-x", "b", "-u", "30", "grep", "-c", "ERROR", "train.log"});
  CHECK(o.host_exprs == std::vector<std::string>{"a,b"});
  CHECK(o.excludes == std::vector<std::string>{"b"});
  CHECK(o.timeout == 30);
  CHECK(o.subcommand.empty());
  CHECK(o.rest == std::vector<std::string>{"grep", "-c", "ERROR", "train.log"});
}

TEST_CASE("options: one value per -w, so the next word is the command") {
  const Options o = parse_words({"-w", "a", "uptime"});
  CHECK(o.host_exprs == std::vector<std::string>{"a"});
  CHECK(o.rest == std::vector<std::string>{"uptime"});
}

TEST_CASE("options: -t takes comma lists and repeats") {
  const Options o = parse_words({"-t", "a,b", "--tpu", "c", "true"});
  CHECK(o.tpus == std::vector<std::string>{"a", "b", "c"});
}

TEST_CASE("options: -- ends the options, even before a subcommand's name") {
  const Options o = parse_words({"-w", "h", "--", "kill", "1234"});
  CHECK(o.subcommand.empty());
  CHECK(o.rest == std::vector<std::string>{"kill", "1234"});
}

TEST_CASE("options: a subcommand's name is recognised and its words kept for later") {
  const Options o = parse_words({"-w", "h", "logs", "-f", "train.log"});
  CHECK(o.subcommand == "logs");
  CHECK(o.rest == std::vector<std::string>{"-f", "train.log"});
}

TEST_CASE("options: errors name the option and suggest the nearest one") {
  CHECK(usage_error({"--fanuot", "3", "true"}) == "unknown option '--fanuot' (did you mean '--fanout'?)");
  CHECK(usage_error({"--bogus-thing", "true"}) == "unknown option '--bogus-thing' (see tpush --help)");
  CHECK(usage_error({"-p", "0", "true"}).find("--port") != std::string::npos);
  CHECK(usage_error({"--color", "sometimes", "true"}).find("sometimes") != std::string::npos);
  CHECK(usage_error({"--connect-timeout", "x", "true"}).find("connect-timeout") != std::string::npos);
}

TEST_CASE("options: a bad number names its value and the bound it broke") {
  CHECK(usage_error({"-p", "0", "true"}) == "--port: 0 is below 1 (see tpush --help)");
  CHECK(usage_error({"-p", "99999", "true"}) == "--port: 99999 is above 65535 (see tpush --help)");
  CHECK(usage_error({"--connect-timeout", "x", "true"}) ==
        "--connect-timeout: 'x' is not a whole number from 1 to 86400 (see tpush --help)");
  // What CLI11 would have read its own way (a sign, a space, hex, an exponent) or not at all.
  for (const char* odd : {"", " 22", "+22", "-1", "0x16", "2e1", "22.0", "inf", "nan"})
    CHECK(usage_error({"-p", odd, "true"}) ==
          "--port: '" + std::string(odd) + "' is not a whole number from 1 to 65535 (see tpush --help)");
  CHECK(usage_error({"-f", "1000001", "true"}) == "--fanout: 1000001 is above 1000000 (see tpush --help)");
  CHECK(usage_error({"-p", std::string(400, '9'), "true"}) ==
        "--port: " + std::string(400, '9') + " is above 65535 (see tpush --help)");
  // Decimal, as ssh reads them (CLI11 alone read 022 as octal: port 18).
  const Options o = parse_words({"-p", "00022", "-f", "1000000", "-u", "010", "true"});
  CHECK(o.port == 22);
  CHECK(o.fanout == 1000000);
  CHECK(o.timeout == 10);
}

TEST_CASE("options: a subcommand's number with a fraction: kill --grace") {
  double grace = -1;
  SubcommandSpec spec;
  spec.add_own = [&](CLI::App& app) {
    app.add_option("--grace", grace, "")->transform(tpush::commands::number_from(0, 86400, true));
  };
  const auto error = [&](const std::string& value) {
    Options o = parse_words({"kill", "--grace", value, "python"});
    try {
      parse_subcommand(o, spec);
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  CHECK(error("1.5.2").rfind("--grace: '1.5.2' is not a number from 0 to 86400", 0) == 0);
  CHECK(error(".5").rfind("--grace: '.5' is not a number from 0 to 86400", 0) == 0);
  CHECK(error("90000").rfind("--grace: 90000 is above 86400", 0) == 0);
  CHECK(error("0.25") == "(no error)");
  CHECK(grace == doctest::Approx(0.25));
  CHECK(error("010") == "(no error)");
  CHECK(grace == doctest::Approx(10));
  CHECK(error("0") == "(no error)");
  CHECK(grace == doctest::Approx(0));
}

TEST_CASE("options: a subcommand's own options win over global ones of the same name") {
  SUBCASE("logs: -f is --follow, -n is --lines; the fan-out is --fanout") {
    Options o = parse_words({"logs", "-fn", "+5", "--fanout", "3", "-w", "h", "train.log"});
    bool follow = false;
    std::string lines;
    SubcommandSpec spec;
    spec.add_own = [&](CLI::App& app) {
      app.add_flag("-f,--follow", follow, "");
      app.add_option("-n,--lines", lines, "");
    };
    const auto args = parse_subcommand(o, spec);
    REQUIRE(args.has_value());
    CHECK(follow);
    CHECK(lines == "+5");
    CHECK(o.fanout == 3);
    CHECK(o.host_exprs == std::vector<std::string>{"h"});
    CHECK(*args == std::vector<std::string>{"train.log"});
  }
  SUBCASE("kill: --tpu is the flag, -t still names the TPU") {
    Options o = parse_words({"kill", "-t", "mytpu", "--tpu"});
    bool tpu = false;
    SubcommandSpec spec;
    spec.add_own = [&](CLI::App& app) { app.add_flag("--tpu", tpu, ""); };
    const auto args = parse_subcommand(o, spec);
    REQUIRE(args.has_value());
    CHECK(tpu);
    CHECK(o.tpus == std::vector<std::string>{"mytpu"});
    CHECK(args->empty());
  }
  SUBCASE("cp: -p is --preserve, the port is --port") {
    Options o = parse_words({"cp", "-p", "--port", "2222", "a", "/b"});
    bool preserve = false;
    SubcommandSpec spec;
    spec.add_own = [&](CLI::App& app) { app.add_flag("-p,--preserve", preserve, ""); };
    const auto args = parse_subcommand(o, spec);
    REQUIRE(args.has_value());
    CHECK(preserve);
    CHECK(o.port == 2222);
    CHECK(*args == std::vector<std::string>{"a", "/b"});
  }
  SUBCASE("before the subcommand's name, every name is the global one") {
    Options o = parse_words({"-f", "4", "-p", "2200", "logs", "x"});
    CHECK(o.fanout == 4);
    CHECK(o.port == 2200);
  }
}

TEST_CASE("options: a subcommand that takes no arguments refuses one, with its usage") {
  Options o = parse_words({"workers", "extra"});
  SubcommandSpec spec;
  spec.takes_args = false;
  try {
    parse_subcommand(o, spec);
    FAIL("no error");
  } catch (const UsageError& e) {
    CHECK(std::string(e.what()) ==
          "unexpected argument 'extra' for 'tpush workers' (usage: tpush [OPTIONS] workers [--json])");
  }
}

TEST_CASE("options: --help prints one Usage block and every line fits 80 columns") {
  for (const char* sub : {"", "cp", "logs", "kill", "workers"}) {
    CAPTURE(sub);
    const std::string text = captured([&] {
      if (*sub) {
        Options o = parse_words({sub, "--help"});
        CHECK_FALSE(parse_subcommand(o, {}).has_value());
      } else {
        const char* argv[] = {"tpush", "--help"};
        CHECK_FALSE(parse_options(2, argv).has_value());
      }
    });
    std::size_t usage = 0, pos = 0;
    while ((pos = text.find("Usage:", pos)) != std::string::npos) ++usage, ++pos;
    CHECK(usage == 1);
    CHECK(text.find("INT") == std::string::npos);  // no CLI11 type names
    CHECK(text.find("TEXT") == std::string::npos);
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);) {
      CAPTURE(line);
      CHECK(line.size() <= 80);
    }
  }
}

TEST_CASE("help: wrap breaks at spaces and indents the following lines") {
  using tpush::commands::wrap;
  CHECK(wrap("aaa bbb ccc", 7, 0) == "aaa bbb\nccc");
  CHECK(wrap("aaa bbb ccc", 9, 2) == "aaa bbb\n  ccc");
  CHECK(wrap("a\nb", 80, 3) == "a\n   b");
  CHECK(wrap("averyveryverylongword x", 5, 0) == "averyveryverylongword\nx");
}

TEST_CASE("options: repeatable options add up before and after a subcommand's name") {
  Options o = parse_words({"-w", "a", "-v", "-e", "X=1", "workers", "-w", "b", "-v", "-e", "Y=2", "-t", "t1,t2"});
  SubcommandSpec spec;
  spec.takes_args = false;
  REQUIRE(parse_subcommand(o, spec).has_value());
  CHECK(o.host_exprs == std::vector<std::string>{"a", "b"});
  CHECK(o.env == std::vector<std::string>{"X=1", "Y=2"});
  CHECK(o.tpus == std::vector<std::string>{"t1", "t2"});
  CHECK(o.verbose == 2);
}

TEST_CASE("options: -F, -o and -J are kept for the ssh_config reading") {
  const Options o = parse_words({"-F", "none", "-o", "Port=2222", "-o", "User=x", "-J", "a,b@c:2", "true"});
  CHECK(o.ssh_config_file == "none");
  CHECK(o.ssh_options == std::vector<std::string>{"Port=2222", "User=x"});
  CHECK(o.jump == "a,b@c:2");
  CHECK_FALSE(o.connect_timeout.has_value());  // unset: ssh_config or tpush's default decides
}
