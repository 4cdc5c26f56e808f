// Everything the command line can say, parsed but not yet acted on.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tpush::commands {

struct Options {
  // where
  std::vector<std::string> host_exprs;  // -w
  std::vector<std::string> excludes;    // -x
  std::vector<std::string> host_files;  // -H
  std::vector<std::string> tpus;        // -t
  std::vector<std::string> queued_resources;
  std::string zone, project, worker_selection = "all";
  bool internal_ip = false, refresh = false, fetch_host_keys = false;
  int gcloud_timeout = 60;
  // how
  std::string user;                     // -l
  uint16_t port = 0;                    // -p
  std::vector<std::string> identities;  // -i
  std::size_t fanout = 0;               // -f, 0 = default
  int connect_timeout = 10;
  std::optional<int> timeout;           // -u
  int alive_interval = 5;
  std::string host_key_check = "accept-new";
  // output
  std::string label = "host";
  bool no_prefix = false, quiet = false, summary_always = false;
  int verbose = 0;
  std::string color = "auto";
  // a subcommand ("workers") and its own flags
  std::string subcommand;
  bool json = false;
  // the remote command (or just the subcommand's name)
  std::vector<std::string> rest;
};

// Parses argv. Returns nullopt when it already printed what was asked
// (--help, --version). Throws UsageError for anything malformed.
std::optional<Options> parse_options(int argc, const char* const* argv);

// Limit on concurrent sessions when -f is not given.
inline constexpr std::size_t default_fanout_limit = 1024;

}  // namespace tpush::commands
