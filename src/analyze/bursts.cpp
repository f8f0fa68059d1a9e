// Bursts of frees and the phases they end (bursts.hpp).
#include "analyze/bursts.hpp"

#include <algorithm>

namespace lowalloc::analyze {

namespace {

std::uint64_t arena_bytes(std::uint64_t size) { return (size + 15) / 16 * 16; }

}  // namespace

void burst_tracker::on_begin() { *this = burst_tracker(); }

void burst_tracker::compact(std::vector<freed>& burst) {
  std::sort(burst.begin(), burst.end(),
            [](const freed& x, const freed& y) { return x.stack < y.stack; });
  std::size_t out = 0;
  for (std::size_t i = 0; i < burst.size(); ++i) {
    if (out != 0 && burst[out - 1].stack == burst[i].stack) {
      burst[out - 1].blocks += burst[i].blocks;
      burst[out - 1].bytes += burst[i].bytes;
    } else {
      burst[out++] = burst[i];
    }
  }
  burst.resize(out);
}

void burst_tracker::close(thread_state& t) {
  if (t.frees >= min_burst) {
    // Each stack's blocks and bytes in the burst, summed in its own state: no sort.
    ++bursts_;
    in_burst_.clear();
    for (const freed& f : t.burst) {
      closing_.grow_to(std::size_t{f.stack} + 1);
      stack_burst& s = closing_[f.stack];
      if (s.burst != bursts_) {
        s.burst = bursts_;
        s.blocks = 0;
        s.bytes = 0;
        in_burst_.push_back(f.stack);
      }
      s.blocks += f.blocks;
      s.bytes += f.bytes;
    }
    for (const std::uint32_t stack : in_burst_) {
      stack_burst& s = closing_[stack];
      if (s.counts == 0) {
        counts_.emplace_back();
        s.counts = static_cast<std::uint32_t>(counts_.size());
      }
      burst_counts& c = counts_[s.counts - 1];
      c.freed_in_bursts += s.blocks;
      if (stack < phases_of_.size() && phases_of_[stack].phase == t.phase &&
          c.phases.size() < max_phases) {
        const stack_phase& p = phases_of_[stack];
        c.phases.push_back(burst_phase{p.allocations, p.bytes, s.bytes});
      }
    }
    t.phase = ++phases_;
  }
  t.burst.clear();
  t.frees = 0;
  t.compact_at = 4096;
}

void burst_tracker::on_alloc(const alloc_event& e) {
  thread_state& t = thread_of(e.thread);
  if (t.frees != 0) close(t);
  phases_of_.grow_to(std::size_t{e.stack} + 1);
  stack_phase& s = phases_of_[e.stack];
  if (s.phase != t.phase) {
    s.phase = t.phase;
    s.allocations = 0;
    s.bytes = 0;
  }
  if (s.allocations != ~std::uint32_t{0}) ++s.allocations;
  s.bytes += arena_bytes(e.size);
}

void burst_tracker::on_free(const free_event& e) {
  if (!e.matched) return;
  thread_state& t = thread_of(e.thread);
  t.burst.push_back(freed{e.stack, 1, arena_bytes(e.size)});
  ++t.frees;
  if (t.burst.size() >= t.compact_at) {
    compact(t.burst);
    t.compact_at = std::max<std::size_t>(4096, 2 * t.burst.size());
  }
}

void burst_tracker::finish() {
  for (thread_state& t : threads_)
    if (!t.burst.empty()) close(t);
}

}  // namespace lowalloc::analyze
