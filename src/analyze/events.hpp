// The seam between reading a trace and analysing it: the merge of the streams hands each event,
// in time order, to every analysis (an event_sink). Counters, temporary, leaks, peak and the size
// histograms are one analysis (accounting.hpp); object lifetimes, growth chains, a timeline of
// live bytes or advice are others, each a new sink and no edit to the merge.
//
// What the merge resolves for its sinks: which allocation a free releases (FREE_LOCAL names it by
// ordinal, FREE by address), the size and stack of that allocation, and the distinct stack an
// allocation was made from. Stacks are numbered in the order they first appear; recorded_stacks
// holds their return addresses and modules, as a tree, until they are symbolized.
#ifndef LOWALLOC_SRC_ANALYZE_EVENTS_HPP
#define LOWALLOC_SRC_ANALYZE_EVENTS_HPP

#include "analyze/model.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace lowalloc::analyze {

struct recorded_module {
  std::uint64_t id = 0;  // the MODULE record's id
  module_desc desc;
  std::size_t symbolizer_key = 0;  // modules with the same path and bias share a key
};

/// The distinct stacks of a trace before symbolization, as a tree of calls: node n is a call
/// from `locations[nodes[n].location]` made by node nodes[n].parent (node 0, the root, is no
/// call), so stacks that share their outer frames share those nodes, and a stack is one node:
/// its frames, innermost first, are that node's location and its parents' up to the root.
struct recorded_stacks {
  static constexpr std::uint32_t no_module = ~std::uint32_t{0};
  struct location {
    std::uint64_t address = 0;  // a return address
    std::uint32_t module = 0;   // the module it lies in, into the merge's modules() (or none)
  };
  struct node {
    std::uint32_t parent = 0;
    std::uint32_t location = 0;
  };
  std::vector<std::uint32_t> stacks;  // the node of each stack
  std::vector<node> nodes;            // nodes[0] is the root
  std::vector<location> locations;    // each distinct (address, module) once
};

struct alloc_event {
  std::uint32_t thread = 0;  // the stream, numbered in order of its first block
  std::uint64_t tick = 0;
  std::uint8_t kind = 0;  // trace_format::alloc_kind
  std::uint64_t size = 0;
  std::uint32_t stack = 0;    // into recorded_stacks::stacks
  std::uint64_t address = 0;  // 0: not in the trace (freed within its block, or lost)
  bool lost = false;          // its free was not recorded: it is never live
  // A word the merge keeps with the block while it lives, for one analysis to set here (the
  // objects analysis: its object's number) and read back from the free_event or forgotten_event
  // that ends the block: no table of its own of every live block. nullptr when lost; valid only
  // during on_alloc.
  std::uint32_t* tag = nullptr;
};

struct free_event {
  std::uint32_t thread = 0;
  std::uint64_t tick = 0;
  std::uint64_t address = 0;  // 0: a FREE_LOCAL, which names the allocation and not its address
  bool matched = false;       // false: the address was not allocated while tracing
  // The allocation it releases (when matched).
  std::uint64_t size = 0;
  std::uint32_t stack = 0;
  std::uint32_t alloc_thread = 0;
  bool temporary = false;  // freed before its thread allocated anything else
  std::uint32_t tag = 0;   // the word set at its alloc_event::tag (when matched)
};

/// A live block whose free was not recorded: its address was handed out again.
struct forgotten_event {
  std::uint64_t size = 0;
  std::uint32_t stack = 0;
  std::uint32_t tag = 0;   // its alloc_event::tag's word
  std::uint64_t tick = 0;  // when that was found: the stamp of the event that reused the address
};

struct time_event {
  std::uint32_t thread = 0;
  std::uint64_t ticks = 0;
  std::uint64_t ns = 0;  // CLOCK_MONOTONIC at `ticks`
};

/// The rate of a trace's clock, from its TIME records: the pairs (ticks, ns) with the lowest and
/// the highest ticks seen so far. TIME records reach the sinks as their stream is decoded, not in
/// time order, so the pair kept is the extreme by ticks, not the first and the last seen. Ticks
/// are truncated: each pair is off by less than a tick, and the rate the closer the wider the
/// span.
struct tick_rate {
  bool have = false;
  std::uint64_t lo_ticks = 0, lo_ns = 0, hi_ticks = 0, hi_ns = 0;

  void add(std::uint64_t ticks, std::uint64_t ns) noexcept {
    if (!have || ticks < lo_ticks) {
      lo_ticks = ticks;
      lo_ns = ns;
    }
    if (!have || ticks > hi_ticks) {
      hi_ticks = ticks;
      hi_ns = ns;
    }
    have = true;
  }
  /// The ticks between the two pairs.
  std::uint64_t span() const noexcept { return have ? hi_ticks - lo_ticks : 0; }
  /// Nanoseconds per tick; 0 while two pairs apart in ticks and in time are not known.
  double ns_per_tick() const noexcept {
    if (!have || hi_ticks <= lo_ticks || hi_ns <= lo_ns) return 0;
    return static_cast<double>(hi_ns - lo_ns) / static_cast<double>(hi_ticks - lo_ticks);
  }
};

struct module_event {
  std::uint32_t thread = 0;
  std::uint64_t tick = 0;
  std::uint32_t module = 0;  // into the merge's modules()
};

/// An analysis of the event stream. Every handler has an empty default. The records that are
/// not events of the merge (TIME, PROCESS, THREAD, LOST, END, EXEC, CRASH) reach the sinks as their
/// stream is decoded, which need not be time order across streams.
class event_sink {
 public:
  virtual ~event_sink() = default;

  /// The merge starts (again, after damage was found: a sink forgets what it saw before).
  virtual void on_begin() {}

  virtual void on_time(const time_event&) {}
  virtual void on_process(const process_info&) {}
  virtual void on_thread(std::uint32_t /*thread*/, std::uint64_t /*tid*/) {}
  virtual void on_lost(std::uint64_t /*count*/) {}
  /// END, or EXEC with the path of the new image (empty for END).
  virtual void on_end(std::uint32_t /*thread*/, bool /*exec*/, std::string_view /*exec_path*/) {}
  /// SHADOWED: these allocation functions of the program were not the recorder's.
  virtual void on_shadowed(const shadowed_functions&) {}
  /// CRASH: the process was killed by a signal after the recorder's crash handler wrote it.
  virtual void on_crash(std::uint32_t /*thread*/, const crash_info&) {}
  /// STOPPED: the recorder could not write the trace any more, for `reason`, and stopped.
  virtual void on_stopped(std::uint32_t /*thread*/, std::string_view /*reason*/) {}

  virtual void on_module(const module_event&) {}
  virtual void on_unmodule(const module_event&) {}
  /// A stack seen for the first time; allocations name it by this index from now on.
  virtual void on_stack(std::uint32_t /*stack*/) {}
  virtual void on_alloc(const alloc_event&) {}
  virtual void on_free(const free_event&) {}
  virtual void on_forgotten(const forgotten_event&) {}
};

}  // namespace lowalloc::analyze

#endif
