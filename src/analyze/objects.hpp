// Objects, not just allocations: an analysis of the event stream that follows each container
// object through its allocations. libstdc++ and libc++ grow a vector or a string by allocating
// the new buffer and then freeing the old one, on the same thread, from the same stack (a copy
// of the element being inserted may allocate in between): such a chain of blocks is one object.
// Per stack, the objects' count, how many allocations each made, the size of its last block
// (for a vector, its capacity), how long it lived (in allocations its thread made meanwhile, and
// in time), how many were alive at once, and how many at the process's peak. docs/tracer.md
// ("Objects") is the specification.
#ifndef LOWALLOC_SRC_ANALYZE_OBJECTS_HPP
#define LOWALLOC_SRC_ANALYZE_OBJECTS_HPP

#include "analyze/events.hpp"
#include "analyze/flat_map.hpp"
#include "analyze/model.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace lowalloc::analyze {

struct analysis;

/// What the objects of one stack (or of the stacks of one site) did.
struct object_counts {
  /// Allocations per object: 1, 2, 3, 4, 5..8, 9..16, 17..64, 65 or more.
  static constexpr std::size_t allocation_classes = 8;
  /// Allocations the object's thread made while the object lived (its own growth included):
  /// 0 (temporary), 1..15, 16..255, 256..4095, 4096 or more; then objects still alive at the end.
  static constexpr std::size_t lifetime_classes = 6;
  /// Time from the object's first allocation to the free of its last block, from the events'
  /// stamps, which are coarse ticks (65-131 us, docs/trace-format.md): within the tick it was
  /// born in; then, one tick or more, under 1 ms, 1..10 ms, 10..100 ms, 100 ms..1 s, 1 s or more;
  /// then objects still alive at the end.
  static constexpr std::size_t duration_classes = 7;

  std::uint64_t objects = 0;      // every object, ended or alive at the end of the trace
  std::uint64_t allocations = 0;  // made by them
  std::uint64_t alive_at_end = 0;
  /// The most alive at once. Per stack exact; per site the sum of its stacks' (a bound).
  std::uint64_t max_alive = 0;
  /// Alive at the moment the process's live bytes were highest (the report's peak), a growth
  /// under way counted once. Per site the sum of its stacks' (exact: one moment).
  std::uint64_t alive_at_peak = 0;
  std::array<std::uint64_t, allocation_classes> by_allocations{};
  std::array<std::uint64_t, lifetime_classes> by_lifetime{};
  std::array<std::uint64_t, duration_classes> by_duration{};
  size_counts first_sizes;  // the size of each object's first block
  size_counts final_sizes;  // the size of each object's last block (a vector's last capacity)

  /// The class of an object that made `n` allocations, of one that lived `between` allocations.
  static std::size_t allocation_class(std::uint64_t n) noexcept;
  static std::size_t lifetime_class(std::uint64_t between) noexcept;
  /// The class of an object that lived `ns` nanoseconds, one tick or more (never the first,
  /// within its tick, nor the last, alive at the end).
  static std::size_t duration_class(double ns) noexcept;
  /// The smallest number of allocations in class `c` ("5" for 5..8), and the largest (0: none).
  static std::uint64_t allocation_class_min(std::size_t c) noexcept;
  static std::uint64_t allocation_class_max(std::size_t c) noexcept;
  /// Objects that lived fewer than 16 allocations of their thread (temporary included).
  std::uint64_t short_lived() const noexcept { return by_lifetime[0] + by_lifetime[1]; }
  void add(const object_counts& o);
};

/// The sink: give it to analyze_file() with the accounting's, then call finish().
class object_tracker final : public event_sink {
 public:
  /// How many of a thread's latest allocations a free of the same stack may continue (a growth
  /// may construct the inserted element, which may allocate, before it frees the old buffer).
  static constexpr std::size_t recent = 4;

  /// Lifetimes in time that end before the TIME records span this many ticks wait for the clock's
  /// rate (ticks are truncated: two records a few ticks apart give a rate off by up to a tick in
  /// a few).
  static constexpr std::uint64_t rate_span = 1024;
  /// The rate when no two TIME records have different ticks (a trace cut short): the recorder's
  /// tick without a TSC (2^17 ns).
  static constexpr double fallback_ns_per_tick = 131072;

  void on_begin() override;
  void on_time(const time_event& e) override;
  void on_alloc(const alloc_event& e) override;
  void on_free(const free_event& e) override;
  void on_forgotten(const forgotten_event& e) override;

  /// Once the merge is done: the objects alive at the end are counted, each stack's objects
  /// alive at the peak are final.
  void finish();

  /// The most bytes live at once (lost blocks excluded): the accounting's totals.peak_bytes.
  std::uint64_t peak_bytes() const noexcept { return peak_bytes_; }

  /// The objects of one stack, in the merge's numbering (analysis::stacks); a stack past
  /// stacks() made none.
  object_counts of(std::uint32_t stack) const;
  std::size_t stacks() const noexcept { return now_.size(); }

  /// (For tests.) A stack's counters move to their full-width record when one reaches `n`
  /// rather than 2^32 - 1: the counts must not change.
  void spill_at(std::uint32_t n) noexcept { spill_at_ = n; }
  /// Per site (analysis::sites), from its stacks.
  std::vector<object_counts> by_site(const analysis& a) const;
  /// The same for the sites before `sites` only (the ones a report shows): a trace of a million
  /// sites needs no million records to show twenty.
  std::vector<object_counts> by_site(const analysis& a, std::size_t sites) const;

 private:
  struct object {
    std::uint64_t born = 0;       // its thread's allocation count before its first allocation
    std::uint64_t born_tick = 0;  // the stamp of its first allocation
    std::uint64_t first_size = 0;
    std::uint64_t last_size = 0;
    std::uint32_t serial = 0;  // which object this is; 0: none (its number free for reuse)
    std::uint32_t stack = 0;
    std::uint32_t thread = 0;
    std::uint32_t allocations = 0;
  };
  // Tens of millions of objects live at once in a large program.
  static_assert(sizeof(object) == 48, "an object is 48 bytes");
  struct recent_alloc {
    std::uint64_t frees = 0;   // its thread's frees before it
    std::uint32_t serial = 0;  // its object's serial; 0: none (taken by a growth)
    std::uint32_t stack = 0;
    std::uint32_t object = 0;
    std::uint32_t epoch = 0;  // the low 32 bits of epoch_ before it (a peak since: epoch_ differs)
  };
  static_assert(sizeof(recent_alloc) == 24, "the epoch fits in what was padding");
  struct thread_state {
    std::uint64_t allocations = 0;
    std::uint64_t frees = 0;
    std::array<recent_alloc, recent> latest{};  // its latest allocations, the newest at `next - 1`
    std::size_t next = 0;
  };
  // What the events change of a stack, in two adjacent cache lines: an object that ends touches
  // nothing else of its stack. Its counters go to cold_ when one would overflow (after 2^32 - 1
  // objects of one class), and with them make the stack's object_counts (of()).
  struct alignas(128) stack_state {
    std::uint64_t epoch = 0;        // alive_at_peak is for this peak
    std::uint64_t allocations = 0;  // made by its ended objects
    std::uint32_t alive = 0;        // its objects' blocks alive now (a growth under way: two)
    std::uint32_t max_alive = 0;
    std::uint32_t alive_at_peak = 0;
    // The latest ended objects' first and last block sizes when they fell in one bucket, not yet
    // in cold_'s sizes: most objects of a stack start, and many end, at one size.
    std::uint16_t first_bucket = 0;
    std::uint16_t final_bucket = 0;
    std::uint32_t first_run = 0;
    std::uint32_t final_run = 0;
    std::array<std::uint32_t, object_counts::allocation_classes> by_allocations{};
    std::array<std::uint32_t, object_counts::lifetime_classes> by_lifetime{};      // [last]: at end
    std::array<std::uint32_t, object_counts::duration_classes - 1> by_duration{};  // ended ones
    std::uint32_t cold = 0;  // 1 + its index into cold_; 0: none yet
  };
  static_assert(sizeof(stack_state) == 128, "a stack's state is two cache lines");
  struct pending_duration {
    std::uint64_t ticks = 0;
    std::uint32_t stack = 0;
  };

  stack_state& stack_of(std::uint32_t stack);
  /// Counts one more in a class counter of the stack, moving them all to cold_ first if it is
  /// full.
  void bump(std::uint32_t stack, std::uint32_t& counter);
  /// Adds the counters of `s` (not its alive counts) to `c`.
  static void add_counts(object_counts& c, const stack_state& s);
  /// Moves the stack's counters (not its alive counts) to cold_.
  void spill(std::uint32_t stack);
  thread_state& thread_of(std::uint32_t thread);
  std::uint32_t new_object();
  /// The stack's alive_at_peak is for the latest peak (taken before its first change after it).
  void touch(std::uint32_t stack) noexcept {
    stack_state& s = now_[stack];
    if (s.epoch != epoch_) {
      s.alive_at_peak = s.alive;
      s.epoch = epoch_;
    }
  }
  /// The object ends: freed at `tick` (`alive` false) or alive at the end of the trace.
  void end(std::uint32_t index, bool alive, std::uint64_t tick);
  /// An object of `stack` lived `ticks` (> 0): its class, now or once the clock's rate is known.
  void count_duration(std::uint32_t stack, std::uint64_t ticks);
  void count_pending();
  /// Counts the stack's runs of first and last sizes in its object_counts.
  void count_runs(std::uint32_t stack);
  /// Its number may be given to a new object.
  void release(std::uint32_t index);

  std::vector<stack_state> now_;     // per stack
  std::vector<object_counts> cold_;  // what spilled, and the sorted sizes, of some stacks
  std::uint32_t spill_at_ = ~std::uint32_t{0};
  /// The stack's entry in cold_, made if it has none.
  object_counts& cold_of(std::uint32_t stack);
  std::vector<thread_state> threads_;
  detail::grow_array<object> objects_;  // grows by moving its pages, not by a copy
  std::vector<std::uint32_t> unused_;   // indexes into objects_ free for reuse
  std::uint32_t serial_ = 0;            // the latest object's serial

  // The process's live bytes and their peak, as the accounting counts them; epoch_ is bumped at
  // each new peak, so that a stack's alive_at_peak is taken lazily (touch()).
  std::uint64_t live_bytes_ = 0;
  std::uint64_t peak_bytes_ = 0;
  std::uint64_t epoch_ = 0;

  // The clock's rate, from the TIME records of the lowest and the highest ticks seen so far (as
  // the run time); 0 until they span rate_span ticks. Durations that end before wait in pending_.
  tick_rate rate_;
  double ns_per_tick_ = 0;
  std::vector<pending_duration> pending_;
};

}  // namespace lowalloc::analyze

#endif
