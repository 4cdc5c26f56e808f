#include "tpush/commands/plan/workers.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <map>
#include <stdexcept>
#include <string_view>
#include <type_traits>
#include <nlohmann/json.hpp>

namespace tpush::commands {
namespace {

using nlohmann::json;
using inventory::Worker;
using inventory::WorkerOrigin;

std::string address(const Reach& r) {
  const bool v6 = r.hostname.value.find(':') != std::string::npos;
  return (v6 ? "[" + r.hostname.value + "]" : r.hostname.value) + ":" + std::to_string(r.port.value);
}

const char* mode_name(ssh::HostKeyMode m) {
  switch (m) {
    case ssh::HostKeyMode::yes: return "yes";
    case ssh::HostKeyMode::no: return "no";
    case ssh::HostKeyMode::accept_new: return "accept-new";
  }
  return "?";
}

const char* family_name(int af) { return af == AF_INET ? "inet" : af == AF_INET6 ? "inet6" : "any"; }

const char* via_kind(Reach::Via v) {
  switch (v) {
    case Reach::Via::direct: return "direct";
    case Reach::Via::jump: return "jump";
    case Reach::Via::command: return "command";
  }
  return "?";
}

// JSON written as nlohmann's dump(2) writes it (a worker's object is the
// element of an array, one level in), without building it first: for 100,000
// workers building and dumping a json tree per worker was most of the time.
// Keys must come in the order nlohmann's std::map keeps them (byte order);
// the unit tests check the text against parse + dump(2).
class JsonWriter {
 public:
  explicit JsonWriter(std::string& out, std::size_t depth) : out_(out), depth_(depth) {}

  void begin_object() { open('{'); }
  void end_object() { close('}'); }
  void begin_array() { open('['); }
  void end_array() { close(']'); }

  // The next member's name, then its value.
  void key(std::string_view k) {
    next();
    quoted(k);
    out_ += ": ";
    after_key_ = true;
  }

  void string(std::string_view s) {
    next();
    quoted(s);
  }
  void number(long long n) {
    next();
    char text[24];
    const auto end = std::to_chars(text, text + sizeof text, n).ptr;
    out_.append(text, end);
  }
  void boolean(bool b) {
    next();
    out_ += b ? "true" : "false";
  }
  void null() {
    next();
    out_ += "null";
  }

  // A value written already (by a writer at the depth of this one's open
  // containers, depth()), then more text that goes with it.
  void raw(std::string_view text) {
    next();
    out_ += text;
  }
  void append_raw(std::string_view text) { out_ += text; }
  void append_string(std::string_view s) { quoted(s); }
  std::size_t depth() const { return depth_ + open_; }
  std::size_t size() const { return out_.size(); }

  // "key": "value" and friends.
  void member(std::string_view k, std::string_view v) { key(k), string(v); }
  void member(std::string_view k, const char* v) { key(k), string(v); }
  void member(std::string_view k, const std::string& v) { key(k), string(v); }
  void member(std::string_view k, int n) { key(k), number(n); }
  void member(std::string_view k, bool b) { key(k), boolean(b); }

 private:
  // Before a value or a key: a comma after the previous element, a new line
  // and the indentation, unless this value follows its key.
  void next() {
    if (after_key_) {
      after_key_ = false;
      return;
    }
    if (open_ == 0) return;  // the outermost value
    out_ += empty_[open_ - 1] ? "\n" : ",\n";
    empty_[open_ - 1] = false;
    out_.append(2 * (depth_ + open_), ' ');
  }
  void quoted(std::string_view s) {
    // Printable ASCII is written as it is; anything else (escapes, UTF-8, and
    // invalid UTF-8, which nlohmann refuses) is left to nlohmann.
    static constexpr auto kPlain = [] {
      std::array<bool, 256> plain{};
      for (int c = 0x20; c < 0x7f; ++c) plain[static_cast<std::size_t>(c)] = c != '"' && c != '\\';
      return plain;
    }();
    if (std::all_of(s.begin(), s.end(), [](char c) { return kPlain[static_cast<unsigned char>(c)]; })) {
      out_ += '"';
      out_ += s;
      out_ += '"';
    } else {
      out_ += json(std::string(s)).dump();
    }
  }
  void open(char c) {
    next();
    out_ += c;
    if (open_ == empty_.size()) throw std::logic_error("JsonWriter: nested too deep");
    empty_[open_++] = true;
  }
  void close(char c) {
    const bool was_empty = empty_[--open_];
    if (!was_empty) {
      out_ += '\n';
      out_.append(2 * (depth_ + open_), ' ');
    }
    out_ += c;
  }

  std::string& out_;
  std::size_t depth_;
  std::array<bool, 8> empty_{};  // per open container: nothing in it yet
  std::size_t open_ = 0;         // containers open
  bool after_key_ = false;
};

// {"from": ..., "value": ...}
template <typename T>
void sourced(JsonWriter& j, std::string_view name, const Sourced<T>& s) {
  j.key(name);
  j.begin_object();
  j.member("from", s.from);
  j.key("value");
  if constexpr (std::is_same_v<T, std::string>) j.string(s.value);
  else if constexpr (std::is_same_v<T, bool>) j.boolean(s.value);
  else j.number(s.value);
  j.end_object();
}

void sourced_text(JsonWriter& j, std::string_view name, std::string_view value, const std::string& from) {
  j.key(name);
  j.begin_object();
  j.member("from", from);
  j.member("value", value);
  j.end_object();
}

void paths(JsonWriter& j, std::string_view name, const Sourced<std::vector<std::filesystem::path>>& s) {
  j.key(name);
  j.begin_object();
  j.member("from", s.from);
  j.key("value");
  j.begin_array();
  for (const auto& p : s.value) j.string(p.native());
  j.end_array();
  j.end_object();
}

// [{"from": ..., "value": PATH}, ...]: files that add up, each from its own line.
void file_list(JsonWriter& j, const char* name, const std::vector<Sourced<std::filesystem::path>>& files) {
  j.key(name);
  j.begin_array();
  for (const auto& f : files) {
    j.begin_object();
    j.member("from", f.from);
    j.member("value", f.value.native());
    j.end_object();
  }
  j.end_array();
}

// `hostname_at`, when given, is set to where the host name's value (quoted)
// starts and ends in the writer's text.
void reach_json(JsonWriter& j, const Reach& r, std::pair<std::size_t, std::size_t>* hostname_at = nullptr) {
  j.begin_object();
  sourced_text(j, "address_family", family_name(r.address_family.value), r.address_family.from);
  sourced(j, "alive_count", r.alive_count);
  sourced(j, "alive_interval", r.alive_interval);
  if (!r.certificate_files.empty()) file_list(j, "certificate_files", r.certificate_files);
  sourced(j, "connect_timeout", r.connect_timeout);
  sourced(j, "connection_attempts", r.connection_attempts);
  paths(j, "global_known_hosts_files", r.global_known_hosts);
  sourced(j, "host_key_alias", r.host_key_alias);
  sourced_text(j, "host_key_check", mode_name(r.host_key_check.value), r.host_key_check.from);
  j.key("hostname");
  j.begin_object();
  j.member("from", r.hostname.from);
  j.key("value");
  if (hostname_at != nullptr) hostname_at->first = j.size();
  j.string(r.hostname.value);
  if (hostname_at != nullptr) hostname_at->second = j.size();
  j.end_object();
  sourced(j, "identities_only", r.identities_only);
  sourced(j, "identity_agent", r.identity_agent);
  file_list(j, "identity_files", r.identity_files);
  sourced(j, "port", r.port);
  sourced(j, "user", r.user);
  paths(j, "user_known_hosts_files", r.user_known_hosts);
  j.key("via");
  j.begin_object();
  j.member("from", r.via_from);
  if (r.via == Reach::Via::jump) {
    j.key("jump");
    j.begin_array();
    for (const auto& h : r.jump) j.string(h.name);
    j.end_array();
  }
  j.member("kind", via_kind(r.via));
  if (r.via == Reach::Via::command) j.member("proxy_command", r.proxy_command.value);
  if (!r.iap_slice.empty()) j.member("slice", r.iap_slice);  // one IAP tunnel carries it; proxy_command if none can
  j.end_object();
  j.end_object();
}

// The "reach" object of workers whose reaches are copies of one shared reach
// (ReachScratch::copy_of), which differ only in the host name: the text
// around the name is made once, not for each of 100,000 workers.
class SharedReachText {
 public:
  void write(JsonWriter& j, const Reach& r, const void* copy_of) {
    if (copy_of == nullptr) return reach_json(j, r);
    if (copy_of != of_) {
      std::string text;
      JsonWriter whole(text, j.depth());
      std::pair<std::size_t, std::size_t> at;
      reach_json(whole, r, &at);
      before_ = text.substr(0, at.first);
      after_ = text.substr(at.second);
      of_ = copy_of;
    }
    j.raw(before_);
    j.append_string(r.hostname.value);
    j.append_raw(after_);
  }

 private:
  const void* of_ = nullptr;
  std::string before_, after_;
};

// One worker's object, its keys in byte order.
void worker_json(JsonWriter& j, const Worker& w, const Reach& r, const WorkerOrigin* g,
                 SharedReachText& reach_text, const void* copy_of) {
  const auto null_if_empty = [&](std::string_view k, const std::string& v) {
    j.key(k);
    if (v.empty()) j.null();
    else j.string(v);
  };
  j.begin_object();
  j.key("env");
  j.begin_object();
  std::map<std::string_view, std::string_view> env;  // as a json object keeps them: sorted, the last one of a name
  for (const auto& [k, v] : w.env) env[k] = v;
  for (const auto& [k, v] : env) j.member(k, v);
  j.end_object();
  if (g != nullptr) {
    null_if_empty("external_ip", g->external_ip);
    j.member("fetched_at", g->fetched_at);
  }
  j.member("host", w.target.host);
  j.key("host_key_aliases");
  j.begin_array();
  for (const auto& a : w.host_key_aliases) j.string(a);
  j.end_array();
  if (g != nullptr) {
    null_if_empty("instance", g->instance);
    j.member("internal_ip", g->internal_ip);
  }
  j.member("label", w.label);
  if (g != nullptr) {
    j.member("node_id", g->node_id);
    j.member("num_workers", g->num_workers);
    j.member("oslogin", g->oslogin);
  }
  j.key("pinned_host_key");
  if (w.pinned_host_key) j.string(*w.pinned_host_key);
  else j.null();
  j.key("port");
  j.number(r.port.value);
  if (g != nullptr) {
    j.member("project", g->project);
    null_if_empty("queued_resource", g->queued_resource);
  }
  j.key("reach");
  reach_text.write(j, r, copy_of);
  if (g != nullptr) {
    j.key("slice");
    if (g->slice < 0) j.null();
    else j.number(g->slice);
  }
  j.member("source", g == nullptr ? "host list" : g->from_cache ? "cache" : "gcloud");
  if (g != nullptr) j.member("tpu", g->tpu);
  j.member("user", r.user.value);
  if (g != nullptr) {
    j.member("worker", g->worker);
    j.member("zone", g->zone);
  }
  j.end_object();
}

// The origin in parentheses, when there is one to show.
std::string with_from(const std::string& value, const std::string& from) {
  return from.empty() ? value : value + " (" + from + ")";
}

std::string details_text(const Reach& r) {
  std::string keys;
  for (const auto& f : r.identity_files) keys += (keys.empty() ? "" : ", ") + with_from(f.value.string(), f.from);
  const std::string agent = r.identity_agent.value == "none" ? "none"
                            : r.identity_agent.value.empty() ? "$SSH_AUTH_SOCK"
                                                             : r.identity_agent.value;
  std::string known;
  for (const auto& f : r.user_known_hosts.value) known += (known.empty() ? "" : " ") + f.string();
  std::string out;
  out += "    host " + with_from(r.hostname.value, r.hostname.from) + ", port " +
         with_from(std::to_string(r.port.value), r.port.from) + ", user " + with_from(r.user.value, r.user.from) + "\n";
  for (const auto& f : r.certificate_files) keys += (keys.empty() ? "" : ", ") + with_from(f.value.string(), f.from);
  out += "    keys " + (keys.empty() ? std::string("none") : keys) + "; agent " +
         with_from(agent, r.identity_agent.from) + (r.identities_only.value ? "; IdentitiesOnly" : "") + "\n";
  out += "    via " + (r.via == Reach::Via::direct ? std::string("direct") : with_from(r.via_text(), r.via_from)) +
         "; connect timeout " + with_from(std::to_string(r.connect_timeout.value) + "s", r.connect_timeout.from) +
         ", keepalive " + with_from(std::to_string(r.alive_interval.value) + "s", r.alive_interval.from) + " x " +
         with_from(std::to_string(r.alive_count.value), r.alive_count.from) + "\n";
  out += "    host keys " + with_from(mode_name(r.host_key_check.value), r.host_key_check.from) + " in " +
         with_from(known.empty() ? "none" : known, r.user_known_hosts.from) +
         (r.host_key_alias.value.empty() ? "" : ", as " + with_from(r.host_key_alias.value, r.host_key_alias.from)) +
         "\n";
  return out;
}

std::string source_text(const WorkerOrigin* o) {
  if (o == nullptr) return "host list";
  std::string where = o->project + "/" + o->zone + "/" + o->tpu;
  if (!o->queued_resource.empty()) {
    where = "queued resource " + o->queued_resource + " slice " + std::to_string(o->slice) + ", " + where;
  }
  return (o->from_cache ? "cache " : "gcloud ") + where;
}

}  // namespace

namespace {

// Worker i's reach: a reference to the caller's, or planned into `scratch`.
using ReachAt = std::function<const Reach&(std::size_t, ReachScratch& scratch)>;

// Text goes out in pieces of about this size.
constexpr std::size_t kChunk = 64 * 1024;

void print_json(const std::vector<Worker>& workers, const ReachAt& reach_at,
                const std::function<const WorkerOrigin*(std::size_t)>& origin, std::ostream& out) {
  // Streamed, one worker at a time, as nlohmann's dump(2) of the whole array
  // would print it: a million workers need no million JSON objects at once.
  if (workers.empty()) {
    out << "[]\n";
    return;
  }
  out << "[\n";
  // Written in pieces of whole workers; when planning a worker fails, those
  // before it are out, as when each was written on its own.
  std::string text;
  ReachScratch scratch;
  SharedReachText reach_text;
  for (std::size_t i = 0; i < workers.size(); ++i) {
    const std::size_t whole = text.size();
    try {
      JsonWriter j(text, 1);
      text += "  ";
      const Reach& r = reach_at(i, scratch);
      worker_json(j, workers[i], r, origin(i), reach_text, &r == &scratch.reach ? scratch.copy_of : nullptr);
    } catch (...) {
      out.write(text.data(), static_cast<std::streamsize>(whole));
      throw;
    }
    text += i + 1 < workers.size() ? ",\n" : "\n";
    if (text.size() >= kChunk) {
      out << text;
      text.clear();
    }
  }
  out << text << "]\n";
}

void print_text(const std::vector<Worker>& workers, const ReachAt& reach_at,
                const std::function<const WorkerOrigin*(std::size_t)>& origin, bool details, std::ostream& out) {
  // Every worker is planned before anything is printed: the columns' widths
  // need all of them. Their cells are kept end to end in one string (a
  // string per cell was 160 bytes a worker before a character of it).
  constexpr std::size_t kColumns = 5;
  bool any_via = false;  // the "via" column only when some worker is reached through something
  std::string cells, detail_texts;
  std::vector<std::size_t> cell_end, detail_end;  // where each cell (each worker's details) ends
  cell_end.reserve(workers.size() * kColumns);
  if (details) detail_end.reserve(workers.size());
  std::array<std::size_t, kColumns> width{};
  ReachScratch scratch;
  for (std::size_t i = 0; i < workers.size(); ++i) {
    const Reach& r = reach_at(i, scratch);
    any_via = any_via || r.via != Reach::Via::direct;
    if (details) {
      detail_texts += details_text(r);
      detail_end.push_back(detail_texts.size());
    }
    const auto cell = [&](std::size_t c, std::string_view text) {
      cells += text;
      cell_end.push_back(cells.size());
      width[c] = std::max(width[c], text.size());
    };
    cell(0, workers[i].label);
    cell(1, address(r));
    cell(2, r.user.value);
    cell(3, r.via == Reach::Via::direct ? "direct" : "via " + r.via_text());
    cell(4, source_text(origin(i)));
  }
  std::string text;
  std::size_t at = 0;  // in cells
  for (std::size_t i = 0; i < workers.size(); ++i) {
    for (std::size_t c = 0; c < kColumns; ++c) {
      const std::size_t end = cell_end[i * kColumns + c], size = end - at;
      if (c != 3 || any_via) {
        text.append(cells, at, size);
        if (c + 1 < kColumns) text.append(width[c] - size + 2, ' ');
      }
      at = end;
    }
    text += '\n';
    if (details) {
      const std::size_t from = i == 0 ? 0 : detail_end[i - 1];
      text.append(detail_texts, from, detail_end[i] - from);
    }
    if (text.size() >= kChunk) {
      out << text;
      text.clear();
    }
  }
  out << text;
}

int print(const std::vector<Worker>& workers, const ReachAt& reach_at, const inventory::TpuResolution* tpu,
          bool as_json, bool details, std::ostream& out) {
  const auto origin = [&](std::size_t i) -> const WorkerOrigin* {
    return tpu != nullptr && i < tpu->origins.size() ? &tpu->origins[i] : nullptr;
  };
  if (as_json) print_json(workers, reach_at, origin, out);
  else print_text(workers, reach_at, origin, details, out);
  return 0;
}

}  // namespace

int print_workers(const std::vector<Worker>& workers, const std::vector<Reach>& reaches,
                  const inventory::TpuResolution* tpu, bool as_json, bool details, std::ostream& out) {
  return print(
      workers, [&](std::size_t i, ReachScratch&) -> const Reach& { return reaches[i]; }, tpu, as_json, details, out);
}

int print_workers(const std::vector<Worker>& workers, const std::function<void(std::size_t, ReachScratch&)>& plan,
                  const inventory::TpuResolution* tpu, bool as_json, bool details, std::ostream& out) {
  const auto reach_at = [&](std::size_t i, ReachScratch& scratch) -> const Reach& {
    plan(i, scratch);
    return scratch.reach;
  };
  return print(workers, reach_at, tpu, as_json, details, out);
}

}  // namespace tpush::commands
