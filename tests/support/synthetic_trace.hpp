// A synthetic trace of any size, for the report's scale: ALLOCATIONS allocations of one thread
// from STACKS distinct stacks, blocks of 1,000. Nine in ten are freed at once (FREE_LOCAL:
// temporary); the tenth takes a slot of a ring of LIVE blocks and is freed, by address, when the
// slot comes round again; the ring's last blocks leak. Written block by block, so the writer's
// memory does not grow with the trace. Used by tests/bench/synthetic_trace.cpp and the analyzer's
// memory tests. Not part of lowalloc's API.
#ifndef LOWALLOC_TESTS_SUPPORT_SYNTHETIC_TRACE_HPP
#define LOWALLOC_TESTS_SUPPORT_SYNTHETIC_TRACE_HPP

#include "support/trace_writer.hpp"

#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

namespace lowalloc_test {

/// Writes the trace to `out`; false if a write failed. stacks and live are at least 1.
inline bool write_synthetic_trace(std::FILE* out, std::uint64_t allocations, std::uint64_t stacks,
                                  std::uint64_t live) {
  constexpr std::uint64_t per_block = 1000;
  trace_writer w;
  // Appends what the writer has so far to `out` and empties it.
  auto drain = [&w, out] {
    std::string& bytes = w.file();
    const bool ok = std::fwrite(bytes.data(), 1, bytes.size(), out) == bytes.size();
    bytes.clear();
    return ok;
  };
  std::uint64_t t = 1;
  w.block(1, t).thread(1);
  for (std::uint64_t s = 1; s <= stacks; ++s)
    w.stack(s, {0x401000 + s % 97 * 16, 0x502000 + s * 32, 0x603000 + s / 7 * 48, 0x704000});
  w.end_block();
  bool ok = drain();

  std::vector<std::uint64_t> ring(live, 0);  // the address in each slot, 0: empty
  std::uint64_t next_slot = 0;
  std::uint64_t next_addr = 0x10000000;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> kept;  // the block's (ordinal, address)
  for (std::uint64_t i = 0; i < allocations && ok;) {
    w.block(1, ++t);
    kept.clear();
    for (std::uint64_t ordinal = 0; ordinal < per_block && i < allocations; ++ordinal, ++i) {
      const std::uint64_t size = 16 + i % 61 * 8;
      if (i % 10 != 9) {
        w.alloc_untracked(++t, size, i % stacks + 1);
        w.free_local(++t, 0);
        continue;
      }
      std::uint64_t& slot = ring[next_slot++ % live];
      if (slot != 0) w.free_address(++t, slot);
      slot = next_addr;
      next_addr += 64;
      w.alloc_untracked(++t, size, i % stacks + 1);
      kept.emplace_back(ordinal, slot);
    }
    if (!kept.empty()) w.addresses(kept);
    w.end_block(false);
    ok = drain();
  }
  ++t;
  w.block(1, t).end(t).end_block(false);
  return drain() && ok;
}

}  // namespace lowalloc_test

#endif
