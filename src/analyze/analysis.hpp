// Reading and aggregating a lowalloc trace file: the model every report format prints.
// Semantics (what counts as an allocation, temporary, leaked, peak) are in docs/tracer.md.
#ifndef LOWALLOC_SRC_ANALYZE_ANALYSIS_HPP
#define LOWALLOC_SRC_ANALYZE_ANALYSIS_HPP

#include <array>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace lowalloc::analyze {

/// A trace that cannot be read: what is wrong and at which file offset.
class trace_error : public std::runtime_error {
 public:
  trace_error(const std::string& what, std::uint64_t offset)
      : std::runtime_error(what + " (at byte " + std::to_string(offset) + ")"), offset_(offset) {}
  /// An error without a position in the file (the file cannot be opened or read).
  explicit trace_error(const std::string& what) : std::runtime_error(what), offset_(0) {}
  std::uint64_t offset() const noexcept { return offset_; }

 private:
  std::uint64_t offset_;
};

/// Requested sizes: one bucket per size 0..256, then (2^k, 2^(k+1)] for k = 8..63.
struct histogram {
  static constexpr std::size_t exact_sizes = 257;
  std::array<std::uint64_t, exact_sizes + 56> counts{};
  static std::size_t bucket_of(std::uint64_t size) noexcept;
  static std::uint64_t bucket_min(std::size_t bucket) noexcept;  // smallest size in the bucket
  static std::uint64_t bucket_max(std::size_t bucket) noexcept;  // largest size in the bucket
  void add(std::uint64_t size) noexcept { ++counts[bucket_of(size)]; }
};

struct counters {
  std::uint64_t allocations = 0;
  std::uint64_t bytes_allocated = 0;
  std::uint64_t frees = 0;  // frees of blocks allocated while tracing
  std::uint64_t temporary = 0;
  std::uint64_t leaked_allocations = 0;
  std::uint64_t leaked_bytes = 0;
  std::uint64_t peak_bytes = 0;  // live bytes at the moment of the process-wide peak
};

struct frame {
  std::uint64_t address = 0;  // return address as recorded (absolute, in the traced process)
  std::string module;         // path of the ELF object, empty if unknown
  std::uint64_t offset = 0;   // address relative to the module's load bias
  std::string function;       // demangled; empty if unknown
  std::string file;           // source file, empty if unknown
  unsigned line = 0;
  bool inlined = false;  // an inlined call inside the next (outer) frame of the same address
};

/// A call site: one distinct call stack after folding allocator-internal frames.
struct site {
  std::vector<frame> stack;       // innermost first; the user's frame is stack[0]
  std::size_t folded_frames = 0;  // allocator-internal frames removed from the top
  counters totals;
  histogram sizes;
};

struct process_info {
  std::uint64_t pid = 0;
  std::uint64_t ppid = 0;
  bool fork_child = false;
  bool exec_child = false;
  std::string exe;
  std::vector<std::string> argv;
};

struct analysis {
  process_info process;
  counters totals;
  std::array<std::uint64_t, 8> allocations_by_kind{};  // indexed by trace_format::alloc_kind
  std::uint64_t unmatched_frees = 0;  // frees of addresses not allocated while tracing
  std::uint64_t lost_events = 0;      // events the recorder reported it could not record
  std::uint64_t threads = 0;          // streams in the file
  double run_time_seconds = 0;        // first to last timestamp
  bool complete = false;              // END or EXEC seen (the process was not killed)
  std::string exec_path;              // set if the image ended by exec (EXEC record)
  std::string truncation;             // why reading stopped early, empty if it did not
  histogram sizes;
  std::vector<site> sites;  // sorted by allocations, descending
};

struct options {
  bool symbolize = true;  // false: frames carry addresses and modules only
  bool fold_allocator = true;
};

/// Reads and aggregates a trace. Throws trace_error for a file that is not a lowalloc trace,
/// has an unknown version or no readable block; a file cut short or damaged after at least
/// one good block is read up to the damage and `truncation` says where and why.
analysis analyze_file(const std::string& path, const options& opts = {});

/// The same for a trace already in memory (`size` bytes at `data`), e.g. for fuzzing.
analysis analyze_buffer(const void* data, std::size_t size, const options& opts = {});

}  // namespace lowalloc::analyze

#endif
