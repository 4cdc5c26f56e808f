// One relayed copy (tpush cp --relay): what every worker's job shares. It
// holds the manifest and the stream (the files' bytes,
// read once, in manifest order), and turns what the workers report into the
// chain's orders (relay_chain.h), which it hands to their jobs.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tpush/relay/relay_chain.h"
#include "tpush/relay/relay_script.h"
#include "tpush/ssh/identity/credentials.h"
#include "tpush/ssh/exec_channel.h"
#include "tpush/util/shared_bytes.h"

namespace tpush::relay {

class RelayJob;

// One file's bytes for the stream; null for a directory.
struct RelayItem {
  ManifestEntry entry;
  std::shared_ptr<const util::SharedBytes> bytes;
};

class RelayTransfer {
 public:
  // Computes each file's SHA-256 (one read of each file). `labels`: the workers', in order (for -v). `groups`: each worker's group
  // (a chain per group, see RelayChain); empty: one group.
  RelayTransfer(std::vector<RelayItem> items, std::vector<std::string> labels, bool preserve,
                std::vector<std::size_t> groups = {});
  RelayTransfer(const RelayTransfer&) = delete;
  RelayTransfer& operator=(const RelayTransfer&) = delete;

  const std::string& id() const { return id_; }
  const std::string& control_command() const { return control_command_; }
  const std::string& setup() const { return setup_; }
  const ssh::InputSource& stream() const { return stream_; }
  std::uint64_t stream_size() const { return stream_.size(); }

  // A worker's job, once its control script is set up: how the other workers
  // reach it (host_key "TYPE BASE64", as tpush verified it; alias filled in
  // here), its host key blob, and the identity tpush logged in to it with: a
  // hop to it is a login with that identity, to that key (ssh/agent_server.h).
  void attach(std::size_t worker, RelayJob* job, HopTarget where, std::string host_key, ssh::LoginIdentity login);
  // The job ended, whether it ever attached or not (every worker's job must
  // say so once: the chain waits for each). `mid_attempt`: it may have been
  // passing bytes on.
  void detach(std::size_t worker, bool mid_attempt);

  // What the worker's control script said.
  void ready(std::size_t worker);
  void stored(std::size_t worker) { chain_.stored(worker); dispatch(); }
  void broken(std::size_t worker) { chain_.broken(worker); dispatch(); }
  void hop_failed(std::size_t worker) { chain_.hop_failed(worker); dispatch(); }
  // tpush's feed of `attempt` sent nothing: the attempt had ended, or bytes
  // from a lost sender had arrived and it cut that sender off (`cut`); the
  // worker's copy then ends short and is re-chained.
  void not_fed(std::size_t worker, int attempt, bool cut);
  // Its own store failed after its attempt ended.
  void failed(std::size_t worker) { chain_.out(worker, false); dispatch(); }

  const RelayChain& chain() const { return chain_; }
  const std::string& label(std::size_t worker) const { return labels_[worker]; }
  // How the worker's copy came: "from tpush", "from LABEL", and the attempt
  // when not the first ("from tpush, attempt 2").
  std::string how(std::size_t worker) const;
  // How many times tpush sent the bytes itself (the first worker's feed, and
  // any a broken link called for).
  std::size_t sends() const { return sends_; }
  // The worker's job ends ok with its copy stored; relayed(): how many of
  // those got the bytes from another worker.
  void delivered(std::size_t worker) {
    if (chain_.sender(worker)) ++relayed_;
  }
  std::size_t relayed() const { return relayed_; }
  // The path of manifest entry `index` on the workers; an index no entry has
  // (a worker's report is untrusted) reads "entry INDEX".
  std::string path(std::size_t index) const {
    return index < paths_.size() ? paths_[index] : "entry " + std::to_string(index);
  }

 private:
  // The files' bytes back to back, each job at its own offset.
  class Stream final : public ssh::InputSource {
   public:
    void add(std::shared_ptr<const util::SharedBytes> bytes);
    std::string_view peek(std::uint64_t offset) const override;
    bool at_end(std::uint64_t offset) const override { return offset >= size_; }
    std::uint64_t size() const { return size_; }

   private:
    std::vector<std::shared_ptr<const util::SharedBytes>> parts_;
    std::vector<std::uint64_t> starts_;
    std::uint64_t size_ = 0;
  };

  void dispatch();  // hands the chain's orders to the jobs
  void describe(const std::vector<RelayChain::Order>& orders) const;  // for -v

  std::string id_;
  std::vector<std::string> labels_;
  std::string control_command_;
  std::string setup_;
  Stream stream_;
  RelayChain chain_;
  std::vector<RelayJob*> jobs_;
  std::vector<HopTarget> targets_;
  struct Reach {
    std::string host_key;
    ssh::LoginIdentity login;
  };
  std::vector<Reach> reach_;
  std::vector<std::string> paths_;
  std::size_t sends_ = 0;
  std::size_t relayed_ = 0;
};

}  // namespace tpush::relay
