// Counters, temporary, leaks and peak over the merged event stream. The peak is process-wide:
// each stack's share of it is its live bytes at the moment of the last new maximum, refreshed
// lazily (an epoch per peak) so that a new maximum costs O(1) and not a pass over every stack.
#include "analyze/accounting.hpp"

#include <algorithm>
#include <utility>

namespace lowalloc::analyze {

static_assert(histogram::buckets <= 320, "buckets_per_stack must cover the histogram");

void accounting::on_process(const process_info& p) {
  if (have_process) return;  // a file's first PROCESS record is its process
  process = p;
  have_process = true;
}

void accounting::on_end(std::uint32_t, bool exec, std::string_view path) {
  complete = true;
  if (exec) exec_path = std::string(path);
}

// Each file of a fork child repeats its parent's: kept once.
void accounting::on_shadowed(const shadowed_functions& f) {
  for (const shadowed_functions& s : shadowed)
    if (s.module == f.module && s.functions == f.functions) return;
  shadowed.push_back(f);
}

void accounting::on_stack(std::uint32_t stack) {
  stacks_.grow_to(std::size_t{stack} + 1);
  state_.grow_to(std::size_t{stack} + 1);
}

void accounting::on_alloc(const alloc_event& e) {
  counters& c = stacks_[e.stack].totals;
  stack_state& r = state_[e.stack];
  ++totals.allocations;
  totals.bytes_allocated += e.size;
  ++allocations_by_kind[e.kind];
  const std::size_t bucket = histogram::bucket_of(e.size);
  ++sizes.counts[bucket];
  ++c.allocations;
  c.bytes_allocated += e.size;
  if (r.run_bucket != bucket || r.run_length == ~std::uint32_t{0}) {
    count_run(e.stack, r);
    r.run_bucket = static_cast<std::uint32_t>(bucket);
  }
  ++r.run_length;
  if (e.lost) {
    ++lost_events;
    return;
  }
  touch(c, r);
  c.leaked_bytes += e.size;
  ++c.leaked_allocations;
  c.max_live_bytes = std::max(c.max_live_bytes, c.leaked_bytes);
  live_bytes_ += e.size;
  ++live_count_;
  if (live_bytes_ > totals.peak_bytes) {
    totals.peak_bytes = live_bytes_;
    totals.peak_allocations = live_count_;
    ++epoch_;
  }
}

void accounting::on_free(const free_event& e) {
  if (!e.matched) {
    ++unmatched_frees;
    return;
  }
  release(e.stack, e.size);
  counters& c = stacks_[e.stack].totals;
  ++c.frees;
  ++totals.frees;
  if (e.temporary) {
    ++c.temporary;
    ++totals.temporary;
  }
}

void accounting::on_forgotten(const forgotten_event& e) {
  ++frees_not_seen;
  release(e.stack, e.size);
}

void accounting::finish() {
  totals.leaked_allocations = live_count_;
  totals.leaked_bytes = live_bytes_;
  totals.max_live_bytes = totals.peak_bytes;
  for (std::size_t i = 0; i < stacks_.size(); ++i)
    touch(stacks_[i].totals, state_[i]);  // its share of the last peak
}

}  // namespace lowalloc::analyze
