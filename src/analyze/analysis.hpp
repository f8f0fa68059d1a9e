// Reading a trace and what it says: the analysis every report format prints. The pieces, from
// the bottom: trace_reader (file, blocks, payloads), merge (the event stream), accounting (one
// analysis of it), sites (symbolized stacks and their grouping). Semantics (what counts as an
// allocation, temporary, leaked, peak) are in docs/tracer.md.
#ifndef LOWALLOC_SRC_ANALYZE_ANALYSIS_HPP
#define LOWALLOC_SRC_ANALYZE_ANALYSIS_HPP

#include "analyze/flat_map.hpp"
#include "analyze/model.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace lowalloc::analyze {

class event_sink;

struct analysis {
  process_info process;
  counters totals;
  std::array<std::uint64_t, 8> allocations_by_kind{};  // indexed by trace_format::alloc_kind
  std::uint64_t unmatched_frees = 0;  // frees of addresses not allocated while tracing
  std::uint64_t lost_events = 0;      // events the recorder reported it could not record
  // Blocks whose free was not seen before their address was allocated again: dropped, counted
  // neither as freed nor as leaked.
  std::uint64_t frees_not_seen = 0;
  std::uint64_t stacks_lost = 0;  // allocations shown without their stack: its record was lost
  std::uint64_t threads = 0;      // streams in the file
  double run_time_seconds = 0;    // first to last timestamp
  bool complete = false;          // END or EXEC seen (the process was not killed)
  bool running = false;   // not complete: the process still runs and writes the trace (a file)
  std::string exec_path;  // set if the image ended by exec (EXEC record)
  std::optional<crash_info> crash;  // set if the recorder's crash handler wrote CRASH
  /// Set if the recorder could not write the trace any more (STOPPED): why, in the system's
  /// words ("No space left on device"). The trace ends there; the program ran on untraced.
  std::optional<std::string> stopped;
  /// Allocation functions whose calls the recorder did not see (SHADOWED records): what the
  /// counts miss, by how much unknown.
  std::vector<shadowed_functions> shadowed;
  std::string truncation;  // why reading stopped early, empty if it did not
  /// What the symbolizer found, each said once: traced files that changed or are missing
  /// ("warning: ...", symbolizer::warnings()), and the user's modules without line information
  /// ("note: ...", symbolizer::notes()). The commands print them on stderr.
  std::vector<std::string> module_warnings;
  std::vector<std::string> line_notes;
  histogram sizes;

  // Every distinct stack as recorded, with all its frames (allocator frames included), numbered
  // as the event stream numbers them; stacks never used by an allocation have no frames. The
  // frames are in one table that the sites' stacks share.
  std::shared_ptr<const frame_table> frames;
  detail::grow_array<stack> stacks;       // (the accounting's, taken over: never copied)
  std::vector<stack_bucket> stack_sizes;  // per stack: see stack::first_size
  /// The ELF objects of the traced process, as its MODULE records described them (an object
  /// loaded twice is listed twice); frames name theirs by path, frame::address - frame::offset
  /// being its bias.
  std::vector<module_desc> modules;
  // The view the reports print: sorted by allocations, descending.
  std::vector<site> sites;
  /// Whether the sites hide each stack's allocator and start frames (options::fold_allocator).
  bool folded = true;
  /// The operations sites name (site::op), each once; operations[0] is "other".
  std::vector<operation> operations{operation{}};
  const operation& operation_of(const site& s) const { return operations[s.op]; }
  /// Each site's operations with their allocations, most first: sites[i]'s are
  /// site_operations[site_operation_first[i], site_operation_first[i + 1]); the first is
  /// sites[i].op.
  std::vector<site_operation> site_operations;
  std::vector<std::uint32_t> site_operation_first;
  /// Per stack, why its allocations are the C or C++ runtime's own (analyze/runtime.hpp's
  /// runtime_reason; 0: the program's), and the counters of those stacks per reason.
  std::vector<std::uint8_t> stack_runtime;
  std::array<counters, 8> runtime{};
  /// The runtime's counters, all reasons together.
  counters runtime_totals() const noexcept;

  /// The stacks shown as sites[i] (stack::site), in stack order.
  std::vector<std::uint32_t> site_stacks(std::size_t i) const {
    std::vector<std::uint32_t> out;
    for (std::size_t s = 0; s < stacks.size(); ++s)
      if (stacks[s].site == i && stacks[s].totals.allocations != 0)
        out.push_back(static_cast<std::uint32_t>(s));
    return out;
  }
  /// The frames of stacks[i], innermost first.
  frame_list stack_frames(std::size_t i) const {
    return frame_list(frames, stacks[i].first_frame, stacks[i].frame_count);
  }
};

struct options {
  bool symbolize = true;       // false: frames carry addresses and modules only
  bool fold_allocator = true;  // sites hide allocator frames (the stacks keep them)
  /// Directories where copies of changed or missing modules, and separate debug files, are
  /// looked for (`--debug-path`), before the system's; absolute.
  std::vector<std::string> debug_paths{};
};

/// Reads and aggregates a trace. Throws trace_error for a file that is not a lowalloc trace,
/// has an unknown version or no readable block; a file cut short or damaged after at least
/// one good block is read up to the damage and `truncation` says where and why.
analysis analyze_file(const std::string& path, const options& opts = {});

/// The same for a trace already in memory (`size` bytes at `data`), e.g. for fuzzing.
analysis analyze_buffer(const void* data, std::size_t size, const options& opts = {});

/// Both, with further analyses of the event stream (events.hpp) run in the same pass. On damage
/// the merge runs again over the good part: each sink's on_begin() says so.
analysis analyze_file(const std::string& path, const options& opts,
                      const std::vector<event_sink*>& sinks);
analysis analyze_buffer(const void* data, std::size_t size, const options& opts,
                        const std::vector<event_sink*>& sinks);

/// The process of a trace as its PROCESS record gives it, read from the first block of each of
/// the file's streams until one has it (`report` looks at the traces next to one this way to find
/// the image its process exec'd); nullopt when the file is not a readable trace or none has it.
std::optional<process_info> read_process(const std::string& path);

}  // namespace lowalloc::analyze

#endif
