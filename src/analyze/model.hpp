// The vocabulary of the analyzer, from the lowest layer up: what a trace error, a frame, a stack,
// a site, counters and a size histogram are. The reader, the symbolizer, the folder, the analyses
// and the reports all speak it; it depends on nothing of theirs.
#ifndef LOWALLOC_SRC_ANALYZE_MODEL_HPP
#define LOWALLOC_SRC_ANALYZE_MODEL_HPP

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
  static constexpr std::size_t buckets = exact_sizes + 56;
  std::array<std::uint64_t, buckets> counts{};
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
  std::string function;       // demangled, template arguments included; empty if unknown
  std::string file;           // source file, empty if unknown
  unsigned line = 0;
  bool inlined = false;  // an inlined call inside the next (outer) frame of the same address
};

/// One distinct call stack as recorded, symbolized: every frame, the allocator's included.
struct stack {
  std::vector<std::uint32_t> frames;  // into analysis::frames, innermost first
  std::size_t allocator_frames = 0;   // how many leading frames are allocator plumbing
  counters totals;
  std::uint32_t first_size = 0;  // its requested sizes: analysis::stack_sizes[first_size, +sizes)
  std::uint32_t sizes = 0;
  std::uint32_t site = 0;  // the site it is shown under
};

/// How many allocations of one stack fell in one histogram bucket.
struct stack_bucket {
  std::uint32_t stack = 0;
  std::uint32_t bucket = 0;
  std::uint64_t count = 0;
};

/// A call site: what the user sees, the stacks that look the same once allocator frames are
/// folded (or, without folding, once symbolized) taken together.
struct site {
  std::vector<frame> stack;       // the shown frames, innermost first; the user's is stack[0]
  std::size_t folded_frames = 0;  // allocator-internal frames hidden from the top
  counters totals;
  histogram sizes;
  std::vector<std::uint32_t> stacks;  // into analysis::stacks
};

/// An ELF object of the traced process as a MODULE record describes it.
struct module_desc {
  std::string path;
  std::uint64_t bias = 0;
};

struct process_info {
  std::uint64_t pid = 0;
  std::uint64_t ppid = 0;
  bool fork_child = false;
  bool exec_child = false;
  std::string exe;
  std::vector<std::string> argv;
};

}  // namespace lowalloc::analyze

#endif
