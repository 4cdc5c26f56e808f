// The allocator tpush gives libssh2 for its sessions.
//
// libssh2 1.11 keeps a session in one 81.5 KB struct (two 35,000-byte packet
// buffers, an 8 KB banner buffer, ...). Stock libssh2 zeroes all of it, so
// every session costs 80 KB of resident memory although a command's session
// writes a few pages of it; the libssh2 tpush builds is patched to leave the
// three buffers unzeroed (scripts/patches/). With this allocator, blocks of
// 32 KB and more get a fresh mapping of their own (kept for reuse when
// freed), so pages nobody writes are never resident, and `drop_zero_pages`
// hands the written pages of such a block that are still all zeros back to
// the kernel (for a stock libssh2): reading them gives the same zeros, and
// only pages libssh2 writes again come back. Each page that comes back costs
// a page fault, so Connection does it only for sessions that have lived a
// while. Smaller blocks are malloc's.
#pragma once

#include <cstddef>

namespace tpush::ssh::session_memory {

// libssh2's LIBSSH2_ALLOC_FUNC, LIBSSH2_FREE_FUNC and LIBSSH2_REALLOC_FUNC.
void* allocate(std::size_t size, void** abstract);
void release(void* block, void** abstract);
void* reallocate(void* block, std::size_t size, void** abstract);

// Returns the resident whole pages of `block` (from `allocate`) that hold only
// zero bytes to the kernel; returns how many bytes that freed (0 for a small
// block). Pages that are not resident are left alone, unread.
std::size_t drop_zero_pages(void* block);

}  // namespace tpush::ssh::session_memory
