#include "tpush/relay/relay_transfer.h"

#include <openssl/evp.h>

#include <algorithm>
#include <map>

#include <spdlog/spdlog.h>

#include "tpush/relay/relay_job.h"
#include "tpush/ssh/remote_group.h"

namespace tpush::relay {
namespace {

std::string sha256_hex(const util::SharedBytes& bytes) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(bytes.data(), bytes.size(), md, &len, EVP_sha256(), nullptr);
  static constexpr char hex[] = "0123456789abcdef";
  std::string out;
  for (unsigned i = 0; i < len; ++i) {
    out += hex[md[i] >> 4];
    out += hex[md[i] & 15];
  }
  return out;
}

}  // namespace

void RelayTransfer::Stream::add(std::shared_ptr<const util::SharedBytes> bytes) {
  if (!bytes || bytes->size() == 0) return;
  starts_.push_back(size_);
  size_ += bytes->size();
  parts_.push_back(std::move(bytes));
}

std::string_view RelayTransfer::Stream::peek(std::uint64_t offset) const {
  if (offset >= size_) return {};
  const auto it = std::upper_bound(starts_.begin(), starts_.end(), offset);
  const std::size_t i = static_cast<std::size_t>(it - starts_.begin()) - 1;
  const std::uint64_t within = offset - starts_[i];
  return std::string_view(parts_[i]->data() + within, parts_[i]->size() - within);
}

RelayTransfer::RelayTransfer(std::vector<RelayItem> items, std::vector<std::string> labels, bool preserve,
                             std::vector<std::size_t> groups)
    : id_(ssh::nonce()),
      labels_(std::move(labels)),
      chain_(groups.empty() ? RelayChain(labels_.size()) : RelayChain(std::move(groups))),
      jobs_(labels_.size(), nullptr),
      targets_(labels_.size()),
      reach_(labels_.size()) {
  std::vector<ManifestEntry> manifest;
  for (RelayItem& item : items) {
    if (!item.entry.directory) {
      item.entry.size = item.bytes->size();
      item.entry.sha256 = sha256_hex(*item.bytes);
      stream_.add(item.bytes);
    }
    paths_.push_back(item.entry.path);
    manifest.push_back(item.entry);
  }
  control_command_ = ssh::with_group_report(relay_control_command(preserve), ssh::HangUpWatch::per_command);
  setup_ = relay_setup(manifest);
}

void RelayTransfer::attach(std::size_t worker, RelayJob* job, HopTarget where, std::string host_key,
                           ssh::LoginIdentity login) {
  where.alias = relay_host_alias(id_, worker);
  jobs_[worker] = job;
  targets_[worker] = std::move(where);
  reach_[worker] = {std::move(host_key), std::move(login)};
}

void RelayTransfer::detach(std::size_t worker, bool mid_attempt) {
  jobs_[worker] = nullptr;
  chain_.out(worker, mid_attempt);
  dispatch();
}

void RelayTransfer::ready(std::size_t worker) {
  chain_.ready(worker);
  dispatch();
}

void RelayTransfer::dispatch() {
  const std::vector<RelayChain::Order> orders = chain_.take_orders();
  describe(orders);
  for (const RelayChain::Order& o : orders) {
    RelayJob* job = jobs_[o.worker];
    if (!job) continue;
    if (o.go && o.next)
      job->plan_hop({labels_[*o.next], reach_[*o.next].host_key, targets_[*o.next].user, reach_[*o.next].login});
    if (o.go) job->order(relay_go(o.attempt, o.next ? std::optional(targets_[*o.next]) : std::nullopt));
    if (o.feed) {
      job->feed(o.attempt);
      ++sends_;
    }
  }
  // Every script ends when the last worker is done: a worker may still be
  // needed for a new chain until then.
  if (chain_.settled())
    for (RelayJob* job : jobs_)
      if (job) job->quit();
}

void RelayTransfer::not_fed(std::size_t worker, int attempt, bool cut) {
  --sends_;
  if (cut)
    spdlog::info("{}: relay: bytes from the worker before it had arrived: attempt {} ends there, and it gets them "
                 "again in a new chain",
                 labels_[worker], attempt);
  else
    spdlog::debug("{}: relay: attempt {} had ended before tpush could feed it", labels_[worker], attempt);
}

std::string RelayTransfer::how(std::size_t worker) const {
  const auto sender = chain_.sender(worker);
  std::string s = "from " + (sender ? labels_[*sender] : std::string("tpush"));
  if (chain_.attempt(worker) > 1) s += ", attempt " + std::to_string(chain_.attempt(worker));
  return s;
}

void RelayTransfer::describe(const std::vector<RelayChain::Order>& orders) const {
  std::map<std::size_t, const RelayChain::Order*> by_worker;
  for (const auto& o : orders)
    if (o.go) by_worker[o.worker] = &o;
  for (const auto& o : orders) {
    const std::string& who = labels_[o.worker];
    if (!o.go) {
      spdlog::info("{}: relay: its sender failed: tpush sends it the bytes itself (attempt {}), unless some had "
                   "arrived",
                   who, o.attempt);
      continue;
    }
    if (!o.feed) continue;  // described from the head of its chain
    std::string chain = "tpush -> " + who;
    std::size_t length = 1;
    for (auto next = o.next; next; ++length) {
      chain += " -> " + labels_[*next];
      const auto it = by_worker.find(*next);
      next = it == by_worker.end() ? std::nullopt : it->second->next;
    }
    spdlog::info("relay: attempt {}: {} worker{}: {}", o.attempt, length, length == 1 ? "" : "s", chain);
  }
}

}  // namespace tpush::relay
