// `lowalloc advise`: per call site and standard-library operation, which change removes how many
// allocations, predicted from the objects the site made (objects.hpp) and checked by applying it
// (tests/trace). docs/advise.md is the specification: the kinds, the predictions, the cost model.
#ifndef LOWALLOC_SRC_ANALYZE_ADVICE_HPP
#define LOWALLOC_SRC_ANALYZE_ADVICE_HPP

#include "analyze/analysis.hpp"
#include "analyze/bursts.hpp"
#include "analyze/objects.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace lowalloc::analyze {

/// What an allocation and a cache line cost on this machine, for the estimates.
struct cost_model {
  double malloc_free_seconds = 20e-9;  // one malloc + free of a small block
  double cache_line_seconds = 2e-9;    // touching one more cache line per object made
  double pool_seconds = 3e-9;          // lowalloc::pool's allocate + deallocate of one slot
  std::string source = "assumed";      // "measured at advise time", or "assumed"

  /// Measures both on this machine (a few milliseconds).
  static cost_model measure();
};

/// One change and what it predicts.
struct advice_option {
  std::string suggestion;             // the code to write
  std::uint64_t inline_capacity = 0;  // N of the suggested type; 0 when it has none
  std::uint64_t reserve = 0;          // n of reserve(n); 0 for the other kinds
  std::uint64_t slot_size = 0;        // pool: the slot size; 0 for the other kinds
  std::uint64_t arena_size = 0;       // arena: N of lowalloc::arena<N>; 0 for the other kinds
  std::uint64_t allocations_after = 0;
  double coverage = 0;  // the share of objects that no longer allocate (reserve: allocate once)
  std::uint64_t sizeof_before = 0;
  std::uint64_t sizeof_after = 0;
  double estimated_seconds_saved = 0;  // allocations removed, less the larger objects' cost
  // The memory the change adds at the process's peak: the objects alive then, times the growth
  // of each (sizeof_after - sizeof_before; per node for `pool`). Negative: it saves.
  std::int64_t peak_bytes_added = 0;
};

struct advice_item {
  // small_vector, small_string, reserve, reuse, pool, flat_map, arena, make_shared, function,
  // copy, transparent_lookup, none (inplace_vector and fixed_string are options; docs/advise.md)
  std::string kind;
  std::string confidence;  // high, medium, low
  std::size_t site = 0;    // into analysis::sites
  std::string container;   // as the user wrote it: "std::vector<int>"
  std::string operation;   // operation::kind
  std::string member;
  std::string element;             // the element type, where there is one
  std::uint64_t element_size = 0;  // its size in bytes, from the growth chains' first blocks
  std::uint64_t allocations = 0;   // made at this site by this operation
  std::uint64_t objects = 0;
  std::uint64_t max_alive = 0;
  std::uint64_t alive_at_peak = 0;  // its objects alive at the process's peak
  std::string what;                 // one line: what allocates there and how
  std::string evidence;             // one line: why this confidence
  advice_option chosen;
  std::vector<advice_option> options;  // the alternatives, the chosen one among them
};

struct advise_options {
  std::size_t top_sites = 20;             // sites looked at, by allocations
  std::uint64_t min_allocations = 100;    // an operation with fewer gets `none`
  const burst_tracker* bursts = nullptr;  // for `arena`: the bursts of frees (none: no arena)
};

/// The advice for the top sites of `a`, whose objects `objects` followed (of()), ranked by
/// estimated gain, `none` last.
std::vector<advice_item> advise(const analysis& a, const object_tracker& objects,
                                const cost_model& costs, const advise_options& opts = {});

namespace detail {

/// sizeof(lowalloc::small_vector<T, N>) for sizeof(T) == size and alignof(T) == align.
std::uint64_t small_vector_sizeof(std::uint64_t size, std::uint64_t align, std::uint64_t n);
/// sizeof(lowalloc::inplace_vector<T, N>): the elements, then the smallest unsigned type that
/// counts to N, padded to the alignment.
std::uint64_t inplace_vector_sizeof(std::uint64_t size, std::uint64_t align, std::uint64_t n);
/// sizeof(lowalloc::small_string<N>).
std::uint64_t small_string_sizeof(std::uint64_t n);
/// sizeof(lowalloc::fixed_string<N>).
std::uint64_t fixed_string_sizeof(std::uint64_t n);
/// The size of a type named as operation.hpp names it ("int", "std::string", "Node*") on x86-64,
/// with libc++ or libstdc++; 0 when the name does not say.
std::uint64_t known_type_size(const std::string& type, bool libcxx);
/// Allocations a small_vector<T, N> makes for an object whose std::vector grew to `capacity`
/// elements by doubling: 0 when it fits, else the doublings from N to at least `capacity`.
std::uint64_t small_vector_allocations(std::uint64_t capacity, std::uint64_t n);
/// The first template argument of "std::vector<int>": "int" (empty when there is none).
std::string first_template_argument(const std::string& type);
/// The template arguments of "std::map<int, std::pair<int, int>>": "int", "std::pair<int, int>".
std::vector<std::string> template_arguments(const std::string& type);
/// A container as the user writes it with another allocator (`allocator` names its template,
/// "lowalloc::pool_allocator"): "std::map<K, V>" is "std::map<K, V, std::less<K>,
/// lowalloc::pool_allocator<std::pair<const K, V>>>", "std::string" is "std::basic_string<char,
/// std::char_traits<char>, A<char>>". Empty for a type that is not a standard container with the
/// default arguments.
std::string with_allocator(const std::string& container, const std::string& allocator);
/// The chunks a new lowalloc::arena<n> takes from upstream for `blocks` blocks of `size` bytes
/// each (a multiple of 16): its inline bytes first, then chunks of 1 KiB or twice the inline size,
/// each next twice as large, a block that does not fit in what is left of one starting the next.
std::uint64_t arena_chunks(std::uint64_t n, std::uint64_t blocks, std::uint64_t size);
/// Whether line `text` of the source calls a lookup (find, count, contains, at, [], ...).
bool looks_up(const std::string& text);

}  // namespace detail

}  // namespace lowalloc::analyze

#endif
