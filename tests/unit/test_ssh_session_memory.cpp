// The libssh2 allocator: blocks keep their contents through reallocation, and
// dropping zero pages frees exactly the all-zero pages of a big block while
// every byte still reads the same.
#include <doctest/doctest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "tpush/ssh/session_memory.h"

namespace sm = tpush::ssh::session_memory;

namespace {

// Resident pages among the whole pages of [p, p + size).
std::size_t resident_pages(const void* p, std::size_t size) {
  const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
  const auto begin = (reinterpret_cast<std::uintptr_t>(p) + page - 1) / page * page;
  const auto end = (reinterpret_cast<std::uintptr_t>(p) + size) / page * page;
  std::vector<unsigned char> vec((end - begin) / page);
  REQUIRE(::mincore(reinterpret_cast<void*>(begin), end - begin, vec.data()) == 0);
  std::size_t n = 0;
  for (unsigned char v : vec) n += v & 1;
  return n;
}

}  // namespace

TEST_CASE("zero pages of a big block go back to the kernel, its bytes do not change") {
  const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  const std::size_t size = 80 * 1024;  // like libssh2's session struct
  auto* p = static_cast<unsigned char*>(sm::allocate(size, nullptr));
  REQUIRE(p);
  std::memset(p, 0, size);  // as libssh2 does
  p[10] = 1;                                          // first page
  p[size / 2] = 2;                                    // one page in the middle
  p[size - 1] = 3;                                    // last byte
  const std::size_t before = resident_pages(p, size);
  CHECK(before >= size / page - 1);

  const std::size_t dropped = sm::drop_zero_pages(p);
  CHECK(dropped > 0);
  CHECK(dropped % page == 0);
  CHECK(dropped <= size - 3 * page + page);           // the three written pages stay
  CHECK(resident_pages(p, size) <= before - dropped / page);
  CHECK(p[10] == 1);
  CHECK(p[size / 2] == 2);
  CHECK(p[size - 1] == 3);
  std::size_t nonzero = 0;
  for (std::size_t i = 0; i < size; ++i) nonzero += p[i] != 0;
  CHECK(nonzero == 3);

  sm::release(p, nullptr);
}

TEST_CASE("pages of a fresh big block that nobody wrote stay out of memory, also when zero pages are dropped") {
  const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  const std::size_t size = 200 * 1024;  // a size no other test frees, so a fresh mapping
  auto* p = static_cast<unsigned char*>(sm::allocate(size, nullptr));
  REQUIRE(p);
  CHECK(resident_pages(p, size) == 0);  // the header is on the page before p's first whole page
  p[3 * page] = 7;
  CHECK(resident_pages(p, size) == 1);
  CHECK(sm::drop_zero_pages(p) == 0);
  CHECK(resident_pages(p, size) == 1);  // checking for zeros did not read the others in
  CHECK(p[3 * page] == 7);
  sm::release(p, nullptr);
}

TEST_CASE("small blocks are malloc's and have nothing to drop, realloc keeps contents across sizes") {
  auto* small = static_cast<char*>(sm::allocate(100, nullptr));
  REQUIRE(small);
  std::memset(small, 0, 100);
  CHECK(sm::drop_zero_pages(small) == 0);
  std::memcpy(small, "hello", 5);
  auto* big = static_cast<char*>(sm::reallocate(small, 64 * 1024, nullptr));  // becomes mapped
  REQUIRE(big);
  CHECK(std::memcmp(big, "hello", 5) == 0);
  auto* back = static_cast<char*>(sm::reallocate(big, 10, nullptr));  // back to malloc
  REQUIRE(back);
  CHECK(std::memcmp(back, "hello", 5) == 0);
  sm::release(back, nullptr);
  sm::release(nullptr, nullptr);  // like free(NULL)
}

TEST_CASE("a freed big block is reused for the next one of its size") {
  void* a = sm::allocate(80 * 1024, nullptr);
  REQUIRE(a);
  sm::release(a, nullptr);
  void* b = sm::allocate(80 * 1024, nullptr);
  CHECK(b == a);
  sm::release(b, nullptr);
}
