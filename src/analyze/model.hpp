// The vocabulary of the analyzer, from the lowest layer up: what a trace error, a frame, a stack,
// a site, counters and a size histogram are. The reader, the symbolizer, the folder, the analyses
// and the reports all speak it; it depends on nothing of theirs.
#ifndef LOWALLOC_SRC_ANALYZE_MODEL_HPP
#define LOWALLOC_SRC_ANALYZE_MODEL_HPP

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
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

/// The non-empty buckets of a histogram, in bucket order: a site's sizes, which are few, in a
/// few bytes instead of the 2.5 KB of every bucket.
struct size_counts {
  struct bucket_count {
    std::uint32_t bucket = 0;  // as histogram::bucket_of
    std::uint64_t count = 0;
  };
  std::vector<bucket_count> buckets;

  /// How many sizes fell in `bucket` (0 if none).
  std::uint64_t count(std::size_t bucket) const noexcept;
  /// Adds `n` to `bucket`, keeping the bucket order.
  void add(std::size_t bucket, std::uint64_t n);
};

struct counters {
  std::uint64_t allocations = 0;
  std::uint64_t bytes_allocated = 0;
  std::uint64_t frees = 0;  // frees of blocks allocated while tracing
  std::uint64_t temporary = 0;
  std::uint64_t leaked_allocations = 0;
  std::uint64_t leaked_bytes = 0;
  std::uint64_t peak_bytes = 0;  // live bytes at the moment of the process-wide peak
  /// The most bytes live at any one moment (of the stack's own blocks): exact per stack and for
  /// the totals (the peak); added up over the stacks of a site or a place, a bound from above
  /// (site::max_live_at_least is the bound from below).
  std::uint64_t max_live_bytes = 0;
  std::uint64_t peak_allocations = 0;  // blocks live at the moment of the process-wide peak
};

/// Adds each counter of `c` to `into`'s.
void add_counters(counters& into, const counters& c) noexcept;

struct frame {
  std::uint64_t address = 0;  // return address as recorded (absolute, in the traced process)
  std::string module;         // path of the ELF object, empty if unknown
  std::uint64_t offset = 0;   // address relative to the module's load bias
  std::string function;       // demangled, template arguments included; empty if unknown
  std::string file;           // source file, empty if unknown
  unsigned line = 0;
  unsigned function_line = 0;  // where `function` is declared (DWARF decl_line); 0 if unknown
  bool inlined = false;        // an inlined call inside the next (outer) frame of the same address
};

namespace detail {

/// std::allocator, but an element made without a value is left uninitialized (default-
/// initialized): a vector resized to be overwritten in full is not zero-filled first. The frame
/// ids of 10^6 stacks are 100 MB.
template <class T>
struct uninitialized_allocator : std::allocator<T> {
  template <class U>
  struct rebind {
    using other = uninitialized_allocator<U>;
  };
  uninitialized_allocator() noexcept = default;
  template <class U>
  uninitialized_allocator(const uninitialized_allocator<U>&) noexcept {}

  template <class U>
  void construct(U* p) noexcept(std::is_nothrow_default_constructible<U>::value) {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};

}  // namespace detail

/// The frames of a trace, each distinct one once, and the runs of them that stacks are: a
/// stack's frames are ids[first, first + count), indices into `frames`.
struct frame_table {
  std::vector<frame> frames;
  std::vector<std::uint32_t, detail::uninitialized_allocator<std::uint32_t>> ids;
};

/// A run of a frame_table's ids, read as frames: a site's stack. Sites share the table, so a
/// site costs a few words however long its stack, and the list stays valid as long as any copy
/// of it does.
class frame_list {
 public:
  class iterator {
   public:
    iterator(const frame_list* list, std::size_t i) noexcept : list_(list), i_(i) {}
    const frame& operator*() const noexcept { return (*list_)[i_]; }
    const frame* operator->() const noexcept { return &(*list_)[i_]; }
    iterator& operator++() noexcept {
      ++i_;
      return *this;
    }
    bool operator==(const iterator& o) const noexcept { return i_ == o.i_; }
    bool operator!=(const iterator& o) const noexcept { return i_ != o.i_; }

   private:
    const frame_list* list_;
    std::size_t i_;
  };

  frame_list() = default;
  frame_list(std::shared_ptr<const frame_table> table, std::uint32_t first, std::uint32_t count)
      : table_(std::move(table)), first_(first), count_(count) {}
  /// A list with a table of its own (a site made by hand, in a test).
  explicit frame_list(std::vector<frame> frames);

  std::size_t size() const noexcept { return count_; }
  bool empty() const noexcept { return count_ == 0; }
  const frame& operator[](std::size_t i) const noexcept {
    return table_->frames[table_->ids[first_ + i]];
  }
  iterator begin() const noexcept { return iterator(this, 0); }
  iterator end() const noexcept { return iterator(this, count_); }
  /// The table the frames are in, and the index in it of frame i: equal frames of lists that
  /// share a table have equal indices.
  const frame_table* table() const noexcept { return table_.get(); }
  std::uint32_t id(std::size_t i) const noexcept { return table_->ids[first_ + i]; }
  /// Where the indices are (valid while the list is not empty).
  const std::uint32_t* ids() const noexcept { return table_->ids.data() + first_; }

 private:
  std::shared_ptr<const frame_table> table_;
  std::uint32_t first_ = 0;
  std::uint32_t count_ = 0;
};

/// One distinct call stack as recorded, symbolized: every frame, the allocator's included.
struct stack {
  std::uint32_t first_frame = 0;       // its frames: analysis::frames->ids[first_frame, +count]
  std::uint32_t frame_count = 0;       // innermost first
  std::uint32_t allocator_frames = 0;  // how many leading frames are allocator plumbing
  std::uint32_t start_frames = 0;      // how many trailing frames are the C runtime's start-up
  std::uint32_t first_size = 0;  // its requested sizes: analysis::stack_sizes[first_size, +sizes)
  std::uint32_t sizes = 0;
  std::uint32_t site = 0;  // the site it is shown under
  std::uint32_t op = 0;    // what allocated: analysis::operations[op] (analyze/operation.hpp)
  counters totals;
};

/// How many allocations of one stack fell in one histogram bucket.
struct stack_bucket {
  std::uint32_t stack = 0;
  std::uint32_t bucket = 0;
  std::uint64_t count = 0;
};

/// What allocated, in the words of the standard library (analyze/operation.hpp): `kind` is one
/// of the names operation_kinds() lists ("other": no operation of a standard container or smart
/// pointer was recognized), `container` the type the user wrote ("std::vector<std::string>",
/// empty when the frames do not say), `member` the function the user called ("push_back",
/// "operator[]", "basic_string" for a constructor; empty when not known).
struct operation {
  std::string kind = "other";
  std::string container;
  std::string member;
};

/// One of a site's operations: analysis::operations[op], made `allocations` of the site's.
struct site_operation {
  std::uint32_t op = 0;
  std::uint64_t allocations = 0;
};

/// A call site: what the user sees, the stacks that look the same once allocator frames are
/// folded (or, without folding, once symbolized) taken together (analysis::site_stacks()).
struct site {
  frame_list stack;                     // the shown frames, innermost first; the user's is stack[0]
  std::size_t folded_frames = 0;        // allocator-internal frames hidden from the top
  std::size_t folded_start_frames = 0;  // the C runtime's start frames hidden from the bottom
  counters totals;
  size_counts sizes;
  std::uint32_t op = 0;  // analysis::operations[op]: what made most of its allocations
  /// The least the site's largest live bytes can be: its largest stack's, or its bytes at the
  /// peak. Its stacks peak at different moments, or together: totals.max_live_bytes (their sum)
  /// is exact when the two are equal (always for a site of one stack).
  std::uint64_t max_live_at_least = 0;
  bool max_live_exact() const noexcept { return max_live_at_least == totals.max_live_bytes; }
};

/// An ELF object of the traced process as a MODULE record describes it, and what its file was
/// (a MODULE_ID record; traces before format version 3 have none).
struct module_desc {
  std::string path;
  std::uint64_t bias = 0;
  bool identified = false;  // a MODULE_ID record gave the fields below
  std::string build_id;     // the GNU build id's bytes; empty if the object has none
  std::uint64_t size = 0;   // the file's size and modification time; 0 if unknown
  std::uint64_t mtime_ns = 0;
};

/// Allocation functions the recorder could not hook (a SHADOWED record): their definitions in
/// `module`, searched by the dynamic loader before the recorder, took the program's calls.
struct shadowed_functions {
  std::vector<std::string> functions;  // "malloc", "free", ... (trace_format::shadowed_names)
  std::string module;
};

struct process_info {
  std::uint64_t pid = 0;
  std::uint64_t ppid = 0;
  bool fork_child = false;
  bool exec_child = false;
  std::string exe;
  std::vector<std::string> argv;
};

/// A crash the recorder's handler saw (a CRASH record): the signal, the thread that raised it,
/// and the threads whose last block was not written. Or, with `ended`, a signal sent to end the
/// process (SIGTERM, SIGINT, ...): the recorder wrote every thread's events, as at an exit.
struct crash_info {
  struct thread {
    std::uint64_t tid = 0;
    std::uint64_t allocations = 0;  // ALLOC records in its unwritten block
    std::uint64_t bytes = 0;        // bytes of events in it
  };
  int signal = 0;
  std::uint64_t tid = 0;
  bool thread_written = false;  // the crashing thread's last events are in the trace
  bool writer_late = false;     // blocks handed over before the crash may be missing too
  bool more_threads = false;    // more threads had unwritten blocks than are listed
  bool ended = false;           // a signal that ends the process, not a fault (crash_flag_ended)
  bool deferred = false;        // it came inside the recorder, which finished the event first
  std::vector<thread> unwritten;
  std::uint16_t format_version = 4;  // of the trace: how few bytes an event takes

  /// "SIGSEGV" and the like; "signal N" for a number without a name here.
  std::string signal_name() const {
    switch (signal) {
      case 1:
        return "SIGHUP";
      case 2:
        return "SIGINT";
      case 3:
        return "SIGQUIT";
      case 10:
        return "SIGUSR1";
      case 12:
        return "SIGUSR2";
      case 13:
        return "SIGPIPE";
      case 14:
        return "SIGALRM";
      case 15:
        return "SIGTERM";
      case 4:
        return "SIGILL";
      case 6:
        return "SIGABRT";
      case 7:
        return "SIGBUS";
      case 8:
        return "SIGFPE";
      case 11:
        return "SIGSEGV";
      default:
        return "signal " + std::to_string(signal);
    }
  }
  /// At most how many frees an unwritten block of `t` held: the bytes its allocations do not
  /// take, at 3 bytes at least per ALLOC and 2 per free (4 and 3 before format version 4, whose
  /// events carry their dt).
  std::uint64_t max_frees(const thread& t) const {
    const std::uint64_t alloc_min = format_version < 4 ? 4 : 3;
    const std::uint64_t free_min = format_version < 4 ? 3 : 2;
    const std::uint64_t alloc_bytes = alloc_min * t.allocations;
    return t.bytes > alloc_bytes ? (t.bytes - alloc_bytes) / free_min : 0;
  }
};

}  // namespace lowalloc::analyze

#endif
