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
// The atomic holds the ticks above `order_bits` bits of *order*: a FREE that carries an address
// adds 1 to it (stamp_free), and a new tick starts it again from 0. Events of one tick then have
// an order too where the reader needs one (docs/trace-format.md, "Timestamps"): an allocation that
// read order k came after every free that returned less than k, and before every free that
// returned k or more. (2^20 such frees in one tick, 10 per nanosecond, would carry into the
// ticks: time would move on by a tick, and the order would still hold.)
inline constexpr unsigned order_bits = 20;
inline constexpr std::uint64_t order_mask = (std::uint64_t{1} << order_bits) - 1;
extern std::atomic<std::uint64_t> shared_clock;

inline std::uint64_t stamp_ticks(std::uint64_t stamp) { return stamp >> order_bits; }
inline std::uint32_t stamp_order(std::uint64_t stamp) {
  return static_cast<std::uint32_t>(stamp & order_mask);
}

// A fresh clock reading, published (every 8th event of a thread, records that open a block, END):
// the whole stamp, ticks and order.
inline std::uint64_t stamp_now_full() {
  std::uint64_t now = read_clock() << order_bits;
  std::uint64_t cur = shared_clock.load(std::memory_order_relaxed);
  while (now > cur) {
    if (shared_clock.compare_exchange_weak(cur, now, std::memory_order_relaxed)) return now;
  }
  return cur;
}

// The ticks of a fresh clock reading, published.
inline std::uint64_t stamp_now() { return stamp_ticks(stamp_now_full()); }

// The largest stamp published so far, without reading the clock (most events: reading the TSC
// costs 20 ns on this machine's virtual CPU, a third of the recorder's own cost per event).
inline std::uint64_t stamp_shared() { return shared_clock.load(std::memory_order_relaxed); }

// The stamp of a FREE that carries an address, taken before the memory goes back: the order it
// returns is its own, no other free's.
inline std::uint64_t stamp_free() { return shared_clock.fetch_add(1, std::memory_order_relaxed); }

}  // namespace lowalloc::trace

#pragma GCC visibility pop

#endif  // LOWALLOC_SRC_TRACE_CLOCK_HPP
