// The merge of a trace's streams into one event stream in time order (docs/trace-format.md,
// "Timestamps"): one decompressed block per stream at a time, a min-heap of streams by the stamp
// of their pending event, and the resolution of each free to the allocation it releases. Each
// event goes to every sink (events.hpp).
#ifndef LOWALLOC_SRC_ANALYZE_MERGE_HPP
#define LOWALLOC_SRC_ANALYZE_MERGE_HPP

#include "analyze/events.hpp"
#include "analyze/trace_reader.hpp"
#include "trace/records.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace lowalloc::analyze {

/// The process a PROCESS record describes, its argv from the record's items (the merge's, and
/// read_process's).
template <class Items>
process_info process_of(const trace_format::process_record& r, Items& argv) {
  process_info p;
  p.pid = r.pid;
  p.ppid = r.ppid;
  p.fork_child = (r.flags & trace_format::process_flag_fork_child) != 0;
  p.exec_child = (r.flags & trace_format::process_flag_exec) != 0;
  p.exe = std::string(r.exe);
  while (argv.left() != 0) p.argv.emplace_back(argv.next());
  return p;
}

/// Damage found while merging: the block (index into file_index::blocks) and what is wrong.
struct block_damage {
  std::size_t block;
  std::string message;
};

class event_merge {
 public:
  /// Merges the blocks [0, limit) of `index` over the file at `data`. With `file`, the mapping
  /// that `data` is, each block's pages are released once it is decompressed.
  event_merge(const std::uint8_t* data, const detail::file_index& index, std::size_t limit,
              const detail::file_bytes* file = nullptr);
  ~event_merge();
  event_merge(const event_merge&) = delete;
  event_merge& operator=(const event_merge&) = delete;

  /// Sinks see every event from the start of run(); add them before.
  void add_sink(event_sink& sink);

  /// Throws block_damage at the first record (in merge order) that cannot be decoded.
  void run();

  const recorded_stacks& stacks() const noexcept;
  const std::vector<recorded_module>& modules() const noexcept;
  std::uint64_t threads() const noexcept;
  /// Allocations counted without their stack because its definition (format version 6: any
  /// thread's STACK record) is not in the file: the block that held it was lost.
  std::uint64_t undefined_stack_events() const noexcept;
  /// First to last timestamp of the events, in seconds (docs/tracer.md, "run time").
  double run_time_seconds() const noexcept;

  struct state;  // the streams, live blocks, stacks and modules: merge.cpp

 private:
  std::unique_ptr<state> s_;
};

}  // namespace lowalloc::analyze

#endif
