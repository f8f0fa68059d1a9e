// Groups of allocations freed together: an analysis of the event stream for the `arena` advice.
// A thread that frees many blocks with no allocation between (a request's objects, a tree, a
// container of strings going out of scope) ends a phase; the blocks each stack allocated on that
// thread since the thread's previous such burst are what an arena for the phase would have held.
// Per stack: how many of its blocks were freed in bursts, and for each phase that ended with one
// of them, the blocks and bytes it had allocated in the phase and the bytes it freed in the
// burst. docs/advise.md ("arena") is the specification.
#ifndef LOWALLOC_SRC_ANALYZE_BURSTS_HPP
#define LOWALLOC_SRC_ANALYZE_BURSTS_HPP

#include "analyze/events.hpp"
#include "analyze/flat_map.hpp"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace lowalloc::analyze {

/// One phase of one stack: what it allocated between two bursts of its thread, and what of that
/// the second burst freed.
struct burst_phase {
  std::uint64_t allocations = 0;
  std::uint64_t bytes = 0;        // each block rounded up to 16 bytes, as an arena hands them out
  std::uint64_t burst_bytes = 0;  // of them, freed in the burst (rounded the same way)
};

/// What the bursts of a stack's blocks were.
struct burst_counts {
  std::uint64_t freed_in_bursts = 0;  // its blocks freed in a burst
  std::vector<burst_phase> phases;    // the phases that ended with a burst freeing its blocks
};

/// The sink: give it to analyze_file() with the others, then call finish().
class burst_tracker final : public event_sink {
 public:
  /// Frees in a row, with no allocation by the thread between, that make a burst.
  static constexpr std::size_t min_burst = 16;
  /// A stack keeps at most this many phases (the first ones); its counts go on.
  static constexpr std::size_t max_phases = 1u << 16;

  void on_begin() override;
  void on_alloc(const alloc_event& e) override;
  void on_free(const free_event& e) override;

  /// Once the merge is done: the bursts still open at the end of each thread are closed.
  void finish();

  /// The counts of a stack (the merge's numbering); nullptr when none of its blocks was freed in
  /// a burst.
  const burst_counts* of(std::uint32_t stack) const noexcept {
    return stack < closing_.size() && closing_[stack].counts != 0
               ? &counts_[closing_[stack].counts - 1]
               : nullptr;
  }

 private:
  // Touched at every allocation: small, so that the stacks' states share cache lines.
  struct stack_phase {
    std::uint32_t phase = 0;        // the thread phase the counts are for; 0: none yet
    std::uint32_t allocations = 0;  // (saturates)
    std::uint64_t bytes = 0;
  };
  // Touched when a burst is closed.
  struct stack_burst {
    std::uint32_t burst = 0;   // the burst `blocks` and `bytes` are for; 0: none
    std::uint32_t counts = 0;  // 1 + its index into counts_; 0: none yet
    std::uint64_t blocks = 0;
    std::uint64_t bytes = 0;
  };
  struct freed {
    std::uint32_t stack = 0;
    std::uint32_t blocks = 0;
    std::uint64_t bytes = 0;  // rounded up to 16
  };
  struct thread_state {
    std::uint32_t phase = 0;
    std::uint64_t frees = 0;        // in `burst`
    std::vector<freed> burst;       // frees since the thread's latest allocation
    std::size_t compact_at = 4096;  // when `burst` is compacted next
  };

  thread_state& thread_of(std::uint32_t thread) {
    if (thread >= threads_.size()) threads_.resize(std::size_t{thread} + 1);
    thread_state& t = threads_[thread];
    if (t.phase == 0) t.phase = ++phases_;
    return t;
  }
  /// A long burst's frees, one entry per stack: a program that frees millions of blocks at its
  /// end keeps a few per stack, not one per block.
  static void compact(std::vector<freed>& burst);
  /// The thread's frees since its latest allocation end; a burst if there are enough of them.
  void close(thread_state& t);

  detail::grow_array<stack_phase> phases_of_;  // per stack: its counts in its latest phase
  detail::grow_array<stack_burst> closing_;    // per stack: its part of the latest burst
  std::vector<burst_counts> counts_;
  std::vector<thread_state> threads_;
  std::vector<std::uint32_t> in_burst_;  // the distinct stacks of the burst being closed
  std::uint32_t phases_ = 0;             // the latest phase's number, over all threads
  std::uint32_t bursts_ = 0;             // the latest burst's number
};

}  // namespace lowalloc::analyze

#endif
