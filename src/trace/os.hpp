// Small helpers for the recorder, which has no C++ runtime and must not allocate through the
// program's malloc: anonymous memory, whole writes, one-line messages, branch hints.
#ifndef LOWALLOC_SRC_TRACE_OS_HPP
#define LOWALLOC_SRC_TRACE_OS_HPP

#include <sys/mman.h>
#include <sys/resource.h>

#include <cstddef>
#include <cstdint>

#define LOWALLOC_LIKELY(x) __builtin_expect(!!(x), 1)
#define LOWALLOC_UNLIKELY(x) __builtin_expect(!!(x), 0)

#pragma GCC visibility push(hidden)

namespace lowalloc::trace {

// Zero-filled private memory, or nullptr. `populate`: its pages are made at once, for a table
// that is about to be written all over (a hash table growing): page by page, its reads first
// mapped the shared zero page and its writes then faulted again to replace it.
inline void* map_memory(std::size_t bytes, bool populate = false) {
  const int flags = MAP_PRIVATE | MAP_ANONYMOUS | (populate ? MAP_POPULATE : 0);
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, flags, -1, 0);
  return p == MAP_FAILED ? nullptr : p;
}

// Marks [p, p + bytes) (p page-aligned) to read as zero pages in a fork child instead of being
// copied (MADV_WIPEONFORK, Linux 4.14), for the recorder's memory that a child never reads before
// it empties it: a child runs untraced until its first event, or only execs, and a traced child
// starts its blocks, tables and file afresh (lifecycle.cpp, settle_pending_fork). Left shared,
// every page of it that the parent wrote after a fork was copied (copy-on-write), and each fork
// copied the page tables of all of it: a fork of a child that exits at once cost the traced
// parent 149 us of CPU more than untraced, 98 us with this (tests/bench/fork_loop,
// docs/benchmarks.md). A kernel without the call copies the pages as before.
inline constexpr int madv_wipeonfork = 18;
inline void wipe_on_fork(void* p, std::size_t bytes) { madvise(p, bytes, madv_wipeonfork); }

// Zero-filled private memory for a large table that is about to be written all over, or
// nullptr: map_memory(bytes, true), in transparent huge pages where the kernel gives them on
// request (MADV_HUGEPAGE) and the table is at least `huge_from` bytes. Such a table is read at a
// random place on every event that uses it; in 4 KiB pages each of those reads may miss the TLB
// too, and a growing table faulted its pages in one at a time. Not copied into a fork child
// (wipe_on_fork): a child empties every table before it reads one. Freed by munmap(p, bytes), as
// map_memory's.
inline constexpr std::size_t huge_page_bytes = std::size_t{2} << 20;
inline constexpr std::size_t huge_from = 2 * huge_page_bytes;
inline constexpr int madv_populate_write = 23;  // MADV_POPULATE_WRITE, Linux 5.14

// `bytes` of private anonymous memory with protection `prot` at a multiple of 2 MiB, the start a
// huge page needs, or nullptr: one more is mapped, and the aligned part kept.
inline unsigned char* map_aligned(std::size_t bytes, int prot, int flags) {
  void* m =
      mmap(nullptr, bytes + huge_page_bytes, prot, MAP_PRIVATE | MAP_ANONYMOUS | flags, -1, 0);
  if (m == MAP_FAILED) return nullptr;
  auto* p = static_cast<unsigned char*>(m);
  const auto at = reinterpret_cast<std::uintptr_t>(p);
  const std::size_t head = (huge_page_bytes - at % huge_page_bytes) % huge_page_bytes;
  if (head != 0) munmap(p, head);
  munmap(p + head + bytes, huge_page_bytes - head);
  return p + head;
}

inline void* map_table(std::size_t bytes) {
  if (bytes < huge_from || bytes % huge_page_bytes != 0) {
    void* small = map_memory(bytes, true);
    if (small != nullptr) wipe_on_fork(small, bytes);
    return small;
  }
  unsigned char* table = map_aligned(bytes, PROT_READ | PROT_WRITE, 0);
  if (table == nullptr) return nullptr;
  madvise(table, bytes, MADV_HUGEPAGE);
  wipe_on_fork(table, bytes);
  // Made now, as map_memory(bytes, true) does; a kernel without the call faults them in as the
  // table is written.
  madvise(table, bytes, madv_populate_write);
  return table;
}

// Address space for a table that grows where it is: `bytes` (a multiple of the page size) at a
// multiple of 2 MiB, inaccessible until commit_table() makes a part of it usable, or nullptr.
// Not charged as memory until then (MAP_NORESERVE), in huge pages where the kernel gives them on
// request once a committed part spans one, not copied into a fork child. Not taken when the
// process's address space is limited (RLIMIT_AS): the space it holds would be the program's.
// Freed by munmap(p, bytes).
inline void* reserve_table(std::size_t bytes) {
  rlimit limit{};
  if (getrlimit(RLIMIT_AS, &limit) != 0 || limit.rlim_cur != RLIM_INFINITY) return nullptr;
  unsigned char* table = map_aligned(bytes, PROT_NONE, MAP_NORESERVE);
  if (table == nullptr) return nullptr;
  madvise(table, bytes, MADV_HUGEPAGE);
  wipe_on_fork(table, bytes);
  return table;
}

// Makes [p + from, p + to) of a reserved table (page-aligned offsets) readable, writable and
// zero, its pages made now as map_table's are; false when the memory cannot be had.
inline bool commit_table(void* p, std::size_t from, std::size_t to) {
  unsigned char* at = static_cast<unsigned char*>(p) + from;
  if (mprotect(at, to - from, PROT_READ | PROT_WRITE) != 0) return false;
  madvise(at, to - from, madv_populate_write);
  return true;
}

// Writes all of [s, s + n) to fd, retrying after signals; gives up on an error.
void write_all(int fd, const char* s, std::size_t n);

// "lowalloc: " a b c d on stderr, as one line.
void say(const char* a, const char* b = "", const char* c = "", const char* d = "");

// Asks the kernel to make process_barrier() cheap (membarrier's private expedited command). Call
// once at start, and again in a fork child.
void prepare_process_barrier();

// A full memory barrier on every thread of the process, run by the caller alone: a store another
// thread made before it is visible after it, and a store the caller made before it is visible to
// every load another thread makes after it. This lets a hot path order a store and a load with a
// compiler barrier only, the rare side paying for both (membarrier(2); without it, an mprotect
// whose TLB shootdown interrupts every CPU that runs the process).
void process_barrier();

}  // namespace lowalloc::trace

#pragma GCC visibility pop

#endif  // LOWALLOC_SRC_TRACE_OS_HPP
