#include "tpush/ssh/session_memory.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#endif

namespace tpush::ssh::session_memory {
namespace {

constexpr std::size_t kMappedFrom = 32 * 1024;

// Before every block; 16 bytes keep the block as aligned as malloc's.
struct alignas(16) Header {
  std::size_t size;    // bytes asked for
  std::size_t mapped;  // bytes mapped (0: from malloc)
};

Header* header_of(void* block) { return reinterpret_cast<Header*>(static_cast<char*>(block) - sizeof(Header)); }

std::size_t page_size() {
  static const std::size_t size = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  return size;
}

// Mappings of finished sessions, kept for the next ones: unmapping one and
// mapping another costs page faults and TLB flushes (~0.5 ms per session in a
// VM), while a kept one holds only the pages its last session wrote.
class Pool {
 public:
  void* take(std::size_t length) {
    std::lock_guard lock(mutex_);
    for (auto it = blocks_.begin(); it != blocks_.end(); ++it) {
      if (static_cast<Header*>(*it)->mapped != length) continue;
      void* p = *it;
      *it = blocks_.back();
      blocks_.pop_back();
      return p;
    }
    return nullptr;
  }
  bool keep(Header* h) {
    std::lock_guard lock(mutex_);
    if (blocks_.size() >= kMaxKept) return false;
    blocks_.push_back(h);
    return true;
  }

 private:
  static constexpr std::size_t kMaxKept = 4096;
  std::mutex mutex_;
  std::vector<void*> blocks_;
};

Pool& pool() {
  static Pool* p = new Pool;  // never destroyed: sessions may be freed during exit
  return *p;
}

}  // namespace

void* allocate(std::size_t size, void**) {
  Header* h;
  if (size >= kMappedFrom) {
    const std::size_t length = (size + sizeof(Header) + page_size() - 1) / page_size() * page_size();
    void* p = pool().take(length);
    if (!p) {
      p = ::mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (p == MAP_FAILED) return nullptr;
#if defined(__SANITIZE_ADDRESS__)
      __lsan_register_root_region(p, length);  // libssh2 keeps heap pointers in it
#endif
    }
    h = static_cast<Header*>(p);
    h->mapped = length;
  } else {
    h = static_cast<Header*>(std::malloc(size + sizeof(Header)));
    if (!h) return nullptr;
    h->mapped = 0;
  }
  h->size = size;
  return h + 1;
}

void release(void* block, void**) {
  if (!block) return;
  Header* h = header_of(block);
  if (h->mapped) {
    if (pool().keep(h)) return;
#if defined(__SANITIZE_ADDRESS__)
    __lsan_unregister_root_region(h, h->mapped);
#endif
    ::munmap(h, h->mapped);
  } else {
    std::free(h);
  }
}

void* reallocate(void* block, std::size_t size, void** abstract) {
  if (!block) return allocate(size, abstract);
  Header* h = header_of(block);
  if (!h->mapped && size < kMappedFrom) {
    auto* grown = static_cast<Header*>(std::realloc(h, size + sizeof(Header)));
    if (!grown) return nullptr;
    grown->size = size;
    return grown + 1;
  }
  void* moved = allocate(size, abstract);
  if (!moved) return nullptr;
  std::memcpy(moved, block, std::min(size, h->size));
  release(block, abstract);
  return moved;
}

std::size_t drop_zero_pages(void* block) {
  Header* h = header_of(block);
  if (!h->mapped) return 0;
  const std::size_t page = page_size();
  auto* base = reinterpret_cast<unsigned char*>(h);
  // Pages never written are not resident; reading them to check for zeros
  // would fault each one in (as the shared zero page), so they are skipped.
  std::vector<unsigned char> resident(h->mapped / page, 1);
  if (::mincore(base, h->mapped, resident.data()) != 0) std::fill(resident.begin(), resident.end(), 1);
  std::size_t dropped = 0;
  // A run of zero pages goes back in one call; the first page holds the header.
  std::size_t run_start = 0, run_length = 0;
  auto flush = [&] {
    if (run_length && ::madvise(base + run_start, run_length, MADV_DONTNEED) == 0) dropped += run_length;
    run_length = 0;
  };
  for (std::size_t off = page; off < h->mapped; off += page) {
    if (!(resident[off / page] & 1)) {
      flush();
      continue;
    }
    const auto* words = reinterpret_cast<const std::uint64_t*>(base + off);
    bool zero = true;
    for (std::size_t i = 0; i < page / sizeof(std::uint64_t) && zero; ++i) zero = words[i] == 0;
    if (!zero) {
      flush();
      continue;
    }
    if (!run_length) run_start = off;
    run_length += page;
  }
  flush();
  return dropped;
}

}  // namespace tpush::ssh::session_memory
