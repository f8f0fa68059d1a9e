// The trace's clock: coarse ticks of the TSC (or of CLOCK_MONOTONIC without an invariant TSC),
// and the stamps events carry, kept causal across threads through one shared atomic. Inline:
// every event takes a stamp.
#ifndef LOWALLOC_SRC_TRACE_CLOCK_HPP
#define LOWALLOC_SRC_TRACE_CLOCK_HPP

#include "trace/os.hpp"

#include <atomic>
#include <cstdint>
#include <ctime>

#pragma GCC visibility push(hidden)

namespace lowalloc::trace {

extern bool use_tsc;  // set at start: cpu_has_invariant_tsc()

bool cpu_has_invariant_tsc();

inline std::uint64_t monotonic_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000u +
         static_cast<std::uint64_t>(ts.tv_nsec);
}

// A FREE is stamped before the memory goes back (the fence keeps later instructions from
// starting first); an ALLOC after the allocator returned (the fence waits for it). See the
// "Timestamps" section of docs/trace-format.md.
// Ticks are coarse on purpose (2^18 TSC ticks, about 65-130 us; 131 us without the TSC): most
// events then carry a time delta of 0, which compresses to almost nothing.
inline constexpr unsigned tsc_shift = 18;
inline constexpr unsigned ns_shift = 17;

inline std::uint64_t read_clock() {
  if (LOWALLOC_LIKELY(use_tsc)) return __builtin_ia32_rdtsc() >> tsc_shift;
  return monotonic_ns() >> ns_shift;
}

// Stamps must respect causality across threads: an allocation's stamp <= the stamp of the free
// that releases it (wherever that runs) <= the stamp of the next allocation of that address. All
// stamps come from one atomic, the largest clock reading published so far; by the coherence of a
// single atomic object, a stamp read after (in happens-before) another is never smaller. So no
// fences are needed, and a free can reuse the shared value without reading the clock.
//
// Below the ticks, the events that another thread's events of the same tick may name have an
// *order* (docs/trace-format.md, "Timestamps"): a process-wide count of the FREEs that carry an
// address. Such a FREE adds 1 to it before the memory goes back, and its order is the count it
// found; an allocation's order is the count read after the allocator returned (any read until
// the hook returns will do: no other thread has the address before). So an allocation of order a
// released by a FREE of order f has a <= f, and one that received the address a FREE of order f
// released has f < a. The count shares the clock's cache line: an event that reads one reads the
// other.
struct alignas(64) shared_stamps {
  std::atomic<std::uint64_t> clock{0};  // ticks
  std::atomic<std::uint64_t> frees{0};  // FREEs with an address so far
};
extern shared_stamps stamps;

// A fresh clock reading, published (every 8th event of a thread, records that open a block, END).
inline std::uint64_t stamp_now() {
  std::uint64_t now = read_clock();
  std::uint64_t cur = stamps.clock.load(std::memory_order_relaxed);
  while (now > cur) {
    if (stamps.clock.compare_exchange_weak(cur, now, std::memory_order_relaxed)) return now;
  }
  return cur;
}

// The largest stamp published so far, without reading the clock (most events: reading the TSC
// costs 20 ns on this machine's virtual CPU, a third of the recorder's own cost per event).
inline std::uint64_t stamp_shared() { return stamps.clock.load(std::memory_order_relaxed); }

// An allocation's order: the FREEs with an address so far.
inline std::uint64_t order_now() { return stamps.frees.load(std::memory_order_relaxed); }

// A FREE's order, taken before the memory goes back: its own, no other FREE's.
inline std::uint64_t order_free() { return stamps.frees.fetch_add(1, std::memory_order_relaxed); }

}  // namespace lowalloc::trace

#pragma GCC visibility pop

#endif  // LOWALLOC_SRC_TRACE_CLOCK_HPP
