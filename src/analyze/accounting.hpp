// The accounting of a trace, one analysis over the event stream: the totals and per-stack
// counters (allocations, bytes, frees, temporary, leaked, live at the peak), the size histograms
// and the summary (process, threads, lost events, how the trace ended). docs/tracer.md ("What the
// numbers mean") is the specification.
#ifndef LOWALLOC_SRC_ANALYZE_ACCOUNTING_HPP
#define LOWALLOC_SRC_ANALYZE_ACCOUNTING_HPP

#include "analyze/events.hpp"
#include "analyze/flat_map.hpp"
#include "analyze/model.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace lowalloc::analyze {

class accounting final : public event_sink {
 public:
  /// Per stack (the merge's numbering), what the accounting keeps besides the stack's counters.
  struct stack_state {
    std::uint64_t epoch = 0;
    // The stack's latest allocations when they fell in one size bucket, not yet counted in the
    // sizes: most stacks allocate one size over and over, and a run costs no table lookup.
    std::uint32_t run_bucket = 0;
    std::uint32_t run_length = 0;
  };

  void on_process(const process_info& p) override;
  void on_lost(std::uint64_t count) override { lost_events += count; }
  void on_end(std::uint32_t thread, bool exec, std::string_view exec_path) override;
  void on_crash(std::uint32_t, const crash_info& c) override { crash = c; }
  void on_stopped(std::uint32_t, std::string_view reason) override {
    stopped = std::string(reason);
  }
  void on_shadowed(const shadowed_functions& f) override;
  void on_stack(std::uint32_t stack) override;
  void on_alloc(const alloc_event& e) override;
  void on_free(const free_event& e) override;
  void on_forgotten(const forgotten_event& e) override;

  /// Once the merge is done: leaks and each stack's live bytes at the peak.
  void finish();

  /// The stacks, numbered as the merge numbers them, with their counters (stack::totals; the
  /// other fields value-initialized). While the merge runs, the leak counters hold what is live,
  /// and peak_bytes and peak_allocations what was live at the latest peak if the stack's epoch
  /// is current; after finish(), all four are final. The analysis takes them over, after
  /// finish() (no copy of 10^6 stacks' counters); the sizes stay until release_sizes().
  detail::grow_array<stack> take_stacks() noexcept { return std::move(stacks_); }
  /// Frees the per-stack sizes and epochs (once the sizes are read).
  void release_sizes() noexcept {
    state_ = detail::grow_array<stack_state>();
    bucket_counts_ = detail::u64_map<std::uint64_t>();
  }
  /// Calls f(stack, bucket, count) for every non-empty (stack, size bucket), after finish(); a
  /// pair may come more than once (a stack's sizes counted before and after a run of another
  /// size), its counts to be added.
  template <class F>
  void for_each_size(F&& f) const {
    bucket_counts_.for_each([&](std::uint64_t key, std::uint64_t count) {
      f(static_cast<std::uint32_t>(key / buckets_per_stack),
        static_cast<std::size_t>(key % buckets_per_stack), count);
    });
    // Each stack's latest run: most stacks allocate one size only, and never reach the table.
    for (std::size_t i = 0; i < state_.size(); ++i)
      if (state_[i].run_length != 0)
        f(static_cast<std::uint32_t>(i), std::size_t{state_[i].run_bucket},
          std::uint64_t{state_[i].run_length});
  }

  process_info process;
  bool have_process = false;
  counters totals;
  std::array<std::uint64_t, 8> allocations_by_kind{};  // indexed by trace_format::alloc_kind
  std::uint64_t unmatched_frees = 0;
  std::uint64_t lost_events = 0;
  std::uint64_t frees_not_seen = 0;  // blocks dropped: their address was allocated again first
  bool complete = false;             // END or EXEC seen
  std::string exec_path;
  std::optional<crash_info> crash;
  std::optional<std::string> stopped;
  std::vector<shadowed_functions> shadowed;
  histogram sizes;

 private:
  static constexpr std::uint64_t buckets_per_stack = 320;  // >= histogram::buckets

  void touch(counters& c, stack_state& r) noexcept {
    if (r.epoch != epoch_) {
      c.peak_bytes = c.leaked_bytes;
      c.peak_allocations = c.leaked_allocations;
      r.epoch = epoch_;
    }
  }
  void count_run(std::uint32_t stack, stack_state& r) {
    if (r.run_length == 0) return;
    bool inserted = false;
    bucket_counts_.get(std::uint64_t{stack} * buckets_per_stack + r.run_bucket, inserted) +=
        r.run_length;
    r.run_length = 0;
  }
  void release(std::uint32_t stack, std::uint64_t size) noexcept {
    counters& c = stacks_[stack].totals;
    touch(c, state_[stack]);
    c.leaked_bytes -= size;
    --c.leaked_allocations;
    live_bytes_ -= size;
    --live_count_;
  }

  detail::grow_array<stack> stacks_;  // by stack, grown as stacks appear
  detail::grow_array<stack_state> state_;
  detail::u64_map<std::uint64_t> bucket_counts_;  // stack * buckets_per_stack + bucket -> count
  std::uint64_t live_bytes_ = 0;
  std::uint64_t live_count_ = 0;
  std::uint64_t epoch_ = 0;  // bumped at each new peak: every stack's at_peak is then stale
};

}  // namespace lowalloc::analyze

#endif
