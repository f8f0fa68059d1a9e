// The advice: each top site's stacks grouped by operation, their objects summed, and for each
// kind that applies the allocations after the change, computed from the objects' last blocks.
#include "analyze/advice.hpp"

#include "analyze/operation.hpp"
#include "analyze/words.hpp"

#include <lowalloc/arena.hpp>
#include <lowalloc/pool.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <numeric>
#include <string_view>
#include <tuple>
#include <utility>

namespace lowalloc::analyze {

namespace {

std::string with_commas(std::uint64_t n) {
  std::string digits = std::to_string(n);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i != 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

// "1 vector", "1,024 vectors" (words.hpp).
std::string counted(std::uint64_t n, std::string_view singular, std::string_view plural = {}) {
  return with_commas(n) + " " + noun(n, singular, plural);
}

// The largest power of two dividing `size`, at most 8: the alignment a type of that size has
// at most (and at least, for the scalars and the standard library's types).
std::uint64_t likely_alignment(std::uint64_t size) {
  std::uint64_t a = 1;
  while (a < 8 && size % (a * 2) == 0) a *= 2;
  return a;
}

// The operation of one stack and the objects of its stacks, for one site.
struct group {
  operation op;
  std::uint64_t allocations = 0;
  std::uint64_t bytes = 0;
  object_counts objects;
  std::size_t stacks = 0;
  std::uint32_t first_stack = 0;  // the first of its stacks, into analysis::stacks
  bool libcxx = false;            // its frames are libc++'s (std::__1)
  std::uint64_t freed_in_bursts = 0;
  std::vector<burst_phase> phases;  // its stacks' phases that ended with a burst (bursts.hpp)
};

// The capacity in elements of an object whose last block fell in `bucket`, for elements of
// `element` bytes: exact up to 256 bytes; above, the largest element * 2^j in the bucket (a
// doubling growth's), or the bucket's top / element when no such product lies in it.
std::uint64_t capacity_of(std::size_t bucket, std::uint64_t element) {
  const std::uint64_t top = histogram::bucket_max(bucket);
  if (bucket < histogram::exact_sizes) return top / element;
  const std::uint64_t bottom = histogram::bucket_min(bucket);
  for (std::uint64_t c = element; c <= top; c *= 2)
    if (c >= bottom && c * 2 > top) return c / element;
  return top / element;
}

// Each last block's capacity in elements, with its objects; `largest` the largest capacity.
std::vector<std::pair<std::uint64_t, std::uint64_t>> last_capacities(const object_counts& o,
                                                                     std::uint64_t element,
                                                                     std::uint64_t& largest) {
  std::vector<std::pair<std::uint64_t, std::uint64_t>> capacities;
  largest = 0;
  for (const size_counts::bucket_count& b : o.final_sizes.buckets) {
    const std::uint64_t c = std::max<std::uint64_t>(1, capacity_of(b.bucket, element));
    capacities.emplace_back(c, b.count);
    largest = std::max(largest, c);
  }
  return capacities;
}

double seconds_saved(std::uint64_t before, std::uint64_t after, std::uint64_t objects,
                     std::uint64_t sizeof_before, std::uint64_t sizeof_after,
                     const cost_model& costs) {
  const double removed = static_cast<double>(before) - static_cast<double>(after);
  // Objects lie side by side (in a vector, a node, a frame): each byte more is a 64th of a line.
  const double lines =
      (static_cast<double>(sizeof_after) - static_cast<double>(sizeof_before)) / 64;
  return removed * costs.malloc_free_seconds -
         static_cast<double>(objects) * lines * costs.cache_line_seconds;
}

// The most common size of the objects' first blocks (exact sizes only) and its share.
std::pair<std::uint64_t, double> common_first_size(const object_counts& o) {
  std::uint64_t best = 0;
  std::uint64_t count = 0;
  for (const size_counts::bucket_count& b : o.first_sizes.buckets)
    if (b.bucket < histogram::exact_sizes && b.count > count) {
      best = b.bucket;
      count = b.count;
    }
  return {best, o.objects == 0 ? 0.0 : static_cast<double>(count) / static_cast<double>(o.objects)};
}

// The size of the element of a vector's objects, and the share of the objects whose first block
// held one: the type's own size where the name says it (a vector of strings that starts at two
// elements must not be taken for one of 64-byte elements), else the largest size that divides
// every exactly known block (each is a capacity times the element), else the most common first.
std::pair<std::uint64_t, double> element_of(const group& g) {
  const object_counts& o = g.objects;
  std::uint64_t element =
      detail::known_type_size(detail::first_template_argument(g.op.container), g.libcxx);
  if (element == 0) {
    std::uint64_t divisor = 0;
    for (const size_counts* sizes : {&o.first_sizes, &o.final_sizes})
      for (const size_counts::bucket_count& b : sizes->buckets)
        if (b.bucket != 0 && b.bucket < histogram::exact_sizes)
          divisor = std::gcd(divisor, std::uint64_t{b.bucket});
    element = divisor;
  }
  if (element == 0) return common_first_size(o);
  const std::uint64_t one = o.first_sizes.count(element);
  return {element,
          o.objects == 0 ? 0.0 : static_cast<double>(one) / static_cast<double>(o.objects)};
}

bool is_string_kind(const std::string& kind) {
  return kind == "string_construction" || kind == "string_copy" || kind == "string_growth" ||
         kind == "string_concatenation" || kind == "to_string";
}

bool is_node_kind(const std::string& kind) {
  return kind == "tree_node" || kind == "hash_node" || kind == "list_node" ||
         kind == "forward_list_node";
}

advice_item item_of(const group& g, std::size_t site, const std::string& kind) {
  advice_item it;
  it.kind = kind;
  it.site = site;
  it.container = g.op.container;
  it.operation = g.op.kind;
  it.member = g.op.member;
  it.allocations = g.allocations;
  it.objects = g.objects.objects;
  it.max_alive = g.objects.max_alive;
  it.alive_at_peak = g.objects.alive_at_peak;
  return it;
}

// small_vector<T, N> (and, when every object fits, inplace_vector<T, N>) for a vector's growth.
bool advise_small_vector(const group& g, std::size_t site, const cost_model& costs,
                         advice_item& out) {
  const object_counts& o = g.objects;
  const auto [element, first_share] = element_of(g);
  if (element == 0 || o.objects == 0) return false;
  const std::string type = detail::first_template_argument(g.op.container);
  std::uint64_t largest = 0;
  const std::vector<std::pair<std::uint64_t, std::uint64_t>> capacities =
      last_capacities(o, element, largest);
  advice_item it = item_of(g, site, "small_vector");
  it.element = type;
  it.element_size = element;
  const std::uint64_t align = likely_alignment(element);
  constexpr std::uint64_t sizeof_vector = 24;
  for (std::uint64_t n = 1; n * element <= 1024 && n <= (1u << 20); n *= 2) {
    advice_option opt;
    opt.inline_capacity = n;
    opt.suggestion =
        "lowalloc::small_vector<" + (type.empty() ? "T" : type) + ", " + std::to_string(n) + ">";
    std::uint64_t fitting = 0;
    for (const auto& [c, count] : capacities) {
      opt.allocations_after += count * detail::small_vector_allocations(c, n);
      if (c <= n) fitting += count;
    }
    // Chains that did not start at one element are not in the capacities' arithmetic: their
    // allocations beyond the one-element chain's count stay.
    opt.allocations_after = std::min(opt.allocations_after, g.allocations);
    opt.coverage = static_cast<double>(fitting) / static_cast<double>(o.objects);
    opt.sizeof_before = sizeof_vector;
    opt.sizeof_after = detail::small_vector_sizeof(element, align, n);
    opt.estimated_seconds_saved = seconds_saved(g.allocations, opt.allocations_after, o.objects,
                                                opt.sizeof_before, opt.sizeof_after, costs);
    it.options.push_back(std::move(opt));
    if (n >= largest) break;  // every object fits: a larger N only costs
  }
  if (it.options.empty()) return false;
  const auto best = std::max_element(it.options.begin(), it.options.end(),
                                     [](const advice_option& x, const advice_option& y) {
                                       return x.estimated_seconds_saved < y.estimated_seconds_saved;
                                     });
  if (best->allocations_after >= g.allocations) return false;
  it.chosen = *best;
  if (it.chosen.coverage >= 1.0 && largest <= 64) {
    advice_option fixed;
    fixed.inline_capacity = largest;
    fixed.suggestion = "lowalloc::inplace_vector<" + (type.empty() ? "T" : type) + ", " +
                       std::to_string(largest) + ">  // only if no object ever holds more than " +
                       std::to_string(largest);
    fixed.allocations_after = 0;
    fixed.coverage = 1.0;
    fixed.sizeof_before = sizeof_vector;
    fixed.sizeof_after = detail::inplace_vector_sizeof(element, align, largest);
    fixed.estimated_seconds_saved =
        seconds_saved(g.allocations, 0, o.objects, fixed.sizeof_before, fixed.sizeof_after, costs);
    it.options.push_back(std::move(fixed));
  }
  const bool from_one =
      first_share >= 0.95 && (g.op.member == "push_back" || g.op.member == "emplace_back");
  it.confidence = from_one ? "high" : "medium";
  it.evidence = percent_text(first_share) + " of the " + counted(o.objects, "object") +
                " started at one element of " + std::to_string(element) +
                " bytes; capacities from the last blocks" +
                (from_one ? ": exact for a doubling growth" : ", a bound on the sizes");
  it.what = operation_text(g.op) + ": " + counted(g.allocations, "allocation") + " from " +
            counted(o.objects, "vector") + "; " + percent_text(it.chosen.coverage) +
            " never exceed " + std::to_string(it.chosen.inline_capacity) + " elements";
  out = std::move(it);
  return true;
}

// reserve(n) before a vector's growth: each object allocates once if it holds n elements or
// fewer, else once and then once per doubling from n.
bool advise_reserve(const group& g, std::size_t site, const cost_model& costs, advice_item& out) {
  const object_counts& o = g.objects;
  const auto [element, first_share] = element_of(g);
  if (element == 0 || o.objects == 0 || g.allocations < 2 * o.objects) return false;
  std::uint64_t largest = 0;
  const std::vector<std::pair<std::uint64_t, std::uint64_t>> capacities =
      last_capacities(o, element, largest);
  advice_item it = item_of(g, site, "reserve");
  it.element = detail::first_template_argument(g.op.container);
  it.element_size = element;
  std::uint64_t best_after = ~std::uint64_t{0};
  for (std::uint64_t n = 2; n / 2 < largest && n <= (1u << 24); n *= 2) {
    advice_option opt;
    opt.reserve = n;
    opt.suggestion = "v.reserve(" + std::to_string(n) + ")";
    std::uint64_t fitting = 0;
    for (const auto& [c, count] : capacities) {
      opt.allocations_after += count * (1 + detail::small_vector_allocations(c, n));
      if (c <= n) fitting += count;
    }
    opt.allocations_after = std::min(opt.allocations_after, g.allocations);
    opt.coverage = static_cast<double>(fitting) / static_cast<double>(o.objects);
    opt.sizeof_before = opt.sizeof_after = 24;
    opt.estimated_seconds_saved =
        seconds_saved(g.allocations, opt.allocations_after, 0, 0, 0, costs);
    best_after = std::min(best_after, opt.allocations_after);
    it.options.push_back(std::move(opt));
  }
  if (it.options.empty() || best_after >= g.allocations) return false;
  // The smallest reservation within a tenth of the fewest allocations: a larger one holds
  // memory that most objects do not use.
  for (const advice_option& opt : it.options)
    if (static_cast<double>(opt.allocations_after) <= 1.1 * static_cast<double>(best_after)) {
      it.chosen = opt;
      break;
    }
  it.confidence = "medium";
  it.evidence = "the last capacities bound the sizes: " + percent_text(first_share) +
                " of the objects grew from one element of " + std::to_string(element) + " bytes";
  it.what = operation_text(g.op) + ": " + counted(g.allocations, "allocation") + " from " +
            counted(o.objects, "vector") + ", " + std::to_string(g.allocations / o.objects) + "." +
            std::to_string((g.allocations % o.objects) * 10 / o.objects) + " each; " +
            percent_text(it.chosen.coverage) + " end at " + std::to_string(it.chosen.reserve) +
            " elements or fewer";
  out = std::move(it);
  return true;
}

// Hoisting: one object alive at a time, made and destroyed over and over, each living a few
// allocations: kept outside the loop and cleared, it allocates until it has its largest capacity.
bool advise_reuse(const group& g, std::size_t site, const cost_model& costs, advice_item& out) {
  const object_counts& o = g.objects;
  if (o.objects < 100 || o.max_alive != 1) return false;
  // A copy is better not made (copy); a node belongs to its container, a control block or a
  // callable to its owner: none of them is an object the loop could keep.
  if (g.op.kind == "vector_copy" || g.op.kind == "string_copy" || is_node_kind(g.op.kind) ||
      g.op.kind == "hash_buckets" || g.op.kind == "shared_ptr_control_block" ||
      g.op.kind == "function_callable" || g.op.kind == "make_shared")
    return false;
  const double short_share = static_cast<double>(o.short_lived()) / static_cast<double>(o.objects);
  if (short_share < 0.9) return false;
  // Kept and cleared, the object grows (by doubling) from its smallest first block to the
  // largest last block once, and allocates no more.
  std::uint64_t smallest = ~std::uint64_t{0};
  std::uint64_t largest = 0;
  for (const size_counts::bucket_count& b : o.first_sizes.buckets)
    smallest = std::min(smallest, histogram::bucket_min(b.bucket));
  for (const size_counts::bucket_count& b : o.final_sizes.buckets)
    largest = std::max(largest, histogram::bucket_max(b.bucket));
  std::uint64_t after = 1;
  for (std::uint64_t c = std::max<std::uint64_t>(smallest, 1); c < largest; c *= 2) ++after;
  if (after >= g.allocations) return false;
  const bool vector = g.op.kind == "vector_growth";
  const bool text = is_string_kind(g.op.kind);
  advice_item it = item_of(g, site, "reuse");
  it.chosen.suggestion =
      vector ? "hoist the vector out of the loop and clear() it each time"
      : text ? "hoist the string out of the loop and clear() it each time"
             : "make it a local variable instead of a heap object, or keep one and reuse it";
  it.chosen.allocations_after = after;
  it.chosen.coverage = 1.0 - static_cast<double>(after) / static_cast<double>(o.objects);
  it.chosen.sizeof_before = it.chosen.sizeof_after = vector ? 24 : text ? 32 : 0;
  it.chosen.estimated_seconds_saved = seconds_saved(g.allocations, after, 0, 0, 0, costs);
  it.options.push_back(it.chosen);
  // A container kept across iterations does what a new one did; an object of the program's
  // may carry state from one use to the next, which the trace cannot tell.
  it.confidence = (vector || text) && short_share >= 0.99 ? "high" : "medium";
  it.evidence = "never more than one alive at once; " + percent_text(short_share) +
                " lived fewer than 16 allocations of their thread" +
                (vector || text ? "" : "; whether it can be reused is the program's to say");
  const std::string via = operation_text(g.op);
  it.what = (via.empty() ? std::string() : via + ": ") + counted(g.allocations, "allocation") +
            " from " + counted(o.objects, "object") + " made one after the other";
  out = std::move(it);
  return true;
}

// small_string<N> for strings: an object whose last block (capacity + 1) is at most N bytes
// would have stayed inline.
bool advise_small_string(const group& g, std::size_t site, const cost_model& costs,
                         advice_item& out) {
  const object_counts& o = g.objects;
  if (o.objects == 0) return false;
  advice_item it = item_of(g, site, "small_string");
  it.element = "char";
  it.element_size = 1;
  const double per_object = static_cast<double>(g.allocations) / static_cast<double>(o.objects);
  constexpr std::uint64_t sizeof_string = 32;
  for (const std::uint64_t n : {24u, 32u, 40u, 48u, 64u, 96u, 128u, 256u}) {
    advice_option opt;
    opt.inline_capacity = n;
    opt.suggestion = "lowalloc::small_string<" + std::to_string(n) + ">";
    std::uint64_t fitting = 0;
    for (const size_counts::bucket_count& b : o.final_sizes.buckets)
      if (histogram::bucket_max(b.bucket) <= n) fitting += b.count;
    const std::uint64_t rest = o.objects - fitting;
    opt.allocations_after = std::min<std::uint64_t>(
        g.allocations, static_cast<std::uint64_t>(static_cast<double>(rest) * per_object + 0.5));
    opt.coverage = static_cast<double>(fitting) / static_cast<double>(o.objects);
    opt.sizeof_before = sizeof_string;
    opt.sizeof_after = detail::small_string_sizeof(n);
    opt.estimated_seconds_saved = seconds_saved(g.allocations, opt.allocations_after, o.objects,
                                                opt.sizeof_before, opt.sizeof_after, costs);
    it.options.push_back(std::move(opt));
    if (fitting == o.objects) break;
  }
  const auto best = std::max_element(it.options.begin(), it.options.end(),
                                     [](const advice_option& x, const advice_option& y) {
                                       return x.estimated_seconds_saved < y.estimated_seconds_saved;
                                     });
  if (best->allocations_after >= g.allocations) return false;
  it.chosen = *best;
  // Every string fits a small bound: a fixed_string never allocates, if the bound is a true one.
  std::uint64_t largest = 0;
  for (const size_counts::bucket_count& b : o.final_sizes.buckets)
    largest = std::max(largest, histogram::bucket_max(b.bucket));
  if (largest >= 2 && largest <= 64) {
    advice_option fixed;
    fixed.inline_capacity = largest - 1;
    fixed.suggestion = "lowalloc::fixed_string<" + std::to_string(largest - 1) +
                       ">  // only if no string ever holds more than " +
                       std::to_string(largest - 1) + " characters";
    fixed.coverage = 1.0;
    fixed.sizeof_before = sizeof_string;
    fixed.sizeof_after = detail::fixed_string_sizeof(largest - 1);
    fixed.estimated_seconds_saved =
        seconds_saved(g.allocations, 0, o.objects, fixed.sizeof_before, fixed.sizeof_after, costs);
    it.options.push_back(std::move(fixed));
  }
  const bool single = o.by_allocations[0] == o.objects;
  it.confidence = single ? "high" : "medium";
  it.evidence = single ? "every string made one block: its size is its length + 1 or more"
                       : "some strings grew: their last blocks bound their lengths";
  it.what = operation_text(g.op) + ": " + counted(g.allocations, "allocation") + " from " +
            counted(o.objects, "string") + "; " + percent_text(it.chosen.coverage) + " fit in " +
            std::to_string(it.chosen.inline_capacity - 1) + " characters";
  out = std::move(it);
  return true;
}

// The largest exact size of the objects' first blocks and the share of objects that started
// with it; 0 when some first block was larger than the exact sizes.
std::pair<std::uint64_t, double> largest_first_size(const object_counts& o) {
  std::uint64_t largest = 0;
  std::uint64_t count = 0;
  for (const size_counts::bucket_count& b : o.first_sizes.buckets) {
    if (b.bucket >= histogram::exact_sizes) return {0, 0.0};
    if (b.bucket > largest) {
      largest = b.bucket;
      count = b.count;
    }
  }
  return {largest,
          o.objects == 0 ? 0.0 : static_cast<double>(count) / static_cast<double>(o.objects)};
}

// lowalloc::pool + pool_allocator for a node container: every node a slot, the pool taking a
// slab from malloc for each slots_per_slab() nodes alive at once.
bool advise_pool(const group& g, std::size_t site, const cost_model& costs, advice_item& out) {
  const object_counts& o = g.objects;
  const auto [node, share] = largest_first_size(o);
  if (node == 0 || o.objects == 0) return false;
  const lowalloc::pool sizing(static_cast<std::size_t>(node));  // takes no memory
  const std::uint64_t per_slab = sizing.slots_per_slab();
  const std::uint64_t alive = std::max<std::uint64_t>(1, o.max_alive);
  const std::uint64_t slabs = (alive + per_slab - 1) / per_slab;
  advice_item it = item_of(g, site, "pool");
  it.element_size = node;
  const std::string with_allocator =
      detail::with_allocator(g.op.container, "lowalloc::pool_allocator");
  it.chosen.suggestion = "lowalloc::pool nodes(" + std::to_string(node) + "); " +
                         (with_allocator.empty() ? std::string("the container with "
                                                               "lowalloc::pool_allocator<T>")
                                                 : with_allocator) +
                         " c(nodes);";
  it.chosen.slot_size = sizing.slot_size();
  it.chosen.allocations_after = std::min(slabs, g.allocations);
  it.chosen.coverage = 1.0;
  it.chosen.sizeof_before = node;  // per node: the request, then the slot
  it.chosen.sizeof_after = sizing.slot_size();
  it.chosen.estimated_seconds_saved =
      static_cast<double>(g.allocations - it.chosen.allocations_after) *
      (costs.malloc_free_seconds - costs.pool_seconds);
  if (it.chosen.allocations_after >= g.allocations) return false;
  it.options.push_back(it.chosen);
  const bool one_size = share >= 0.99;
  it.confidence = one_size ? "high" : "medium";
  it.evidence =
      (one_size ? "every node is " + std::to_string(node) + " bytes"
                : "nodes of up to " + std::to_string(node) + " bytes (" + percent_text(share) +
                      " of that size)") +
      "; at most " + with_commas(alive) + " alive at once: " + counted(slabs, "slab") + " of " +
      std::to_string(per_slab) +
      " slots, if the pool outlives the containers (more if a container empties and refills)";
  const std::string via = operation_text(g.op);
  it.what = via + ": " + counted(g.allocations, "node") + " of " + counted(node, "byte");
  out = std::move(it);
  return true;
}

// A sorted vector instead of a tree whose nodes are made once and kept: one buffer, growing by
// doubling to the nodes alive at once.
bool advise_flat_map(const group& g, std::size_t site, const cost_model& costs, advice_item& out) {
  const object_counts& o = g.objects;
  if (g.op.kind != "tree_node" || o.objects == 0) return false;
  const std::uint64_t kept = o.by_lifetime[4] + o.by_lifetime[5];
  const double kept_share = static_cast<double>(kept) / static_cast<double>(o.objects);
  const double together = static_cast<double>(o.max_alive) / static_cast<double>(o.objects);
  if (kept_share < 0.9 || together < 0.9) return false;
  std::uint64_t after = 1;
  for (std::uint64_t c = 1; c < o.max_alive; c *= 2) ++after;
  if (after >= g.allocations) return false;
  const std::vector<std::string> args = detail::template_arguments(g.op.container);
  std::string flat = "a sorted std::vector";
  if (g.op.container.compare(0, 9, "std::map<") == 0 && args.size() >= 2)
    flat = "std::vector<std::pair<" + args[0] + ", " + args[1] +
           ">> sorted by key (std::flat_map in C++23)";
  else if (g.op.container.compare(0, 9, "std::set<") == 0 && !args.empty())
    flat = "std::vector<" + args[0] + "> sorted (std::flat_set in C++23)";
  advice_item it = item_of(g, site, "flat_map");
  it.chosen.suggestion = flat + ", reserved or built at once, searched with std::lower_bound";
  it.chosen.allocations_after = after;
  it.chosen.coverage = 1.0;
  it.chosen.estimated_seconds_saved =
      static_cast<double>(g.allocations - after) * costs.malloc_free_seconds;
  it.options.push_back(it.chosen);
  it.confidence = "medium";
  it.evidence = percent_text(together) + " of the nodes were alive at once and " +
                percent_text(kept_share) +
                " lived 4096 allocations or more: built once and kept; whether they are read "
                "more than changed the trace cannot tell";
  it.what = operation_text(g.op) + ": " + counted(g.allocations, "node") + ", at most " +
            with_commas(o.max_alive) + " alive at once";
  out = std::move(it);
  return true;
}

// An arena for blocks freed together: the thread frees them in a burst (bursts.hpp) at the end
// of a phase; a lowalloc::arena<N> that lives for the phase hands them out and frees nothing
// until it goes, taking from malloc only the chunks its inline N bytes do not cover.
// sizeof(lowalloc::arena<n>), for the sizes offered: powers of two from 1 KiB to 64 KiB.
template <std::size_t... K>
std::uint64_t arena_sizeof(std::uint64_t n, std::index_sequence<K...>) {
  std::uint64_t size = 0;
  ((n == (std::uint64_t{1024} << K) ? size = sizeof(lowalloc::arena<(std::size_t{1024} << K)>)
                                    : size),
   ...);
  return size;
}

bool advise_arena(const group& g, std::size_t site, const cost_model& costs, advice_item& out) {
  constexpr std::size_t min_phases = 10;
  if (g.phases.size() < min_phases || g.allocations == 0) return false;
  const double burst_share =
      static_cast<double>(g.freed_in_bursts) / static_cast<double>(g.allocations);
  if (burst_share < 0.8) return false;
  std::uint64_t in_phases = 0;
  std::uint64_t held = 0;  // the most bytes an arena holds that malloc had already taken back
  std::vector<std::uint64_t> bytes;
  for (const burst_phase& p : g.phases) {
    in_phases += p.allocations;
    held = std::max(held, p.bytes - std::min(p.bytes, p.burst_bytes));
    bytes.push_back(p.bytes);
  }
  std::sort(bytes.begin(), bytes.end());
  const std::uint64_t p95 = bytes[(bytes.size() * 95 + 99) / 100 - 1];
  const std::uint64_t outside = g.allocations - std::min(g.allocations, in_phases);
  advice_item it = item_of(g, site, "arena");
  const std::string on_arena = detail::with_allocator(g.op.container, "lowalloc::arena_allocator");
  for (std::uint64_t n = 1024; n <= 65536; n *= 2) {
    advice_option opt;
    opt.arena_size = n;
    opt.sizeof_after = arena_sizeof(n, std::make_index_sequence<7>{});
    opt.suggestion = "lowalloc::arena<" + std::to_string(n) + "> a; for the phase, and " +
                     (on_arena.empty() ? std::string("its containers on it "
                                                     "(lowalloc::arena_allocator<T> or std::pmr)")
                                       : on_arena + " c(a);");
    std::uint64_t after = outside;
    std::uint64_t inline_phases = 0;
    for (const burst_phase& p : g.phases) {
      const std::uint64_t size = p.allocations == 0 ? 16 : (p.bytes / p.allocations + 15) / 16 * 16;
      const std::uint64_t chunks = detail::arena_chunks(n, p.allocations, size);
      after += chunks;
      if (chunks == 0) ++inline_phases;
    }
    opt.allocations_after = std::min(after, g.allocations);
    opt.coverage = static_cast<double>(inline_phases) / static_cast<double>(g.phases.size());
    opt.estimated_seconds_saved =
        static_cast<double>(g.allocations - opt.allocations_after) * costs.malloc_free_seconds;
    it.options.push_back(std::move(opt));
    if (n >= p95) break;  // every larger N only holds more
  }
  // The smallest N that keeps 95 % of the phases inline (or the largest offered).
  it.chosen = it.options.back();
  if (it.chosen.allocations_after >= g.allocations) return false;
  it.confidence = "medium";
  it.evidence = percent_text(burst_share) + " of its blocks were freed in bursts of " +
                std::to_string(burst_tracker::min_burst) + " frees or more, ending " +
                counted(g.phases.size(), "phase") + "; 95 % of the phases allocated " +
                counted(p95, "byte") + " or fewer here; " +
                (held == 0 ? std::string("nothing was freed before its burst")
                           : "an arena holds up to " + with_commas(held) +
                                 " bytes that malloc had taken back") +
                " (frees carry no stacks: the bursts are the proxy)";
  const std::string via = operation_text(g.op);
  it.what = (via.empty() ? std::string() : via + ": ") + counted(g.allocations, "allocation") +
            ", freed together at the end of " + counted(g.phases.size(), "phase");
  out = std::move(it);
  return true;
}

// The item's one option removes every allocation of its operation at the site.
void removes_all(advice_item& it, const cost_model& costs) {
  it.chosen.allocations_after = 0;
  it.chosen.coverage = 1.0;
  it.chosen.estimated_seconds_saved =
      static_cast<double>(it.allocations) * costs.malloc_free_seconds;
  it.options.push_back(it.chosen);
}

// make_shared for shared_ptr(new T): the object and its control block in one allocation.
bool advise_make_shared(const group& g, std::size_t site, const cost_model& costs,
                        advice_item& out) {
  if (g.op.kind != "shared_ptr_control_block") return false;
  advice_item it = item_of(g, site, "make_shared");
  const std::string type = detail::first_template_argument(g.op.container);
  it.element = type;
  it.chosen.suggestion = "std::make_shared<" + (type.empty() ? std::string("T") : type) +
                         ">(...) instead of std::shared_ptr<" +
                         (type.empty() ? std::string("T") : type) + ">(new ...)";
  removes_all(it, costs);
  it.confidence = "high";
  it.evidence =
      "shared_ptr(new T) allocates the object, then its control block; make_shared "
      "makes both in one block (which then lives as long as a weak_ptr to it)";
  it.what = operation_text(g.op) + ": " + counted(g.allocations, "control block");
  out = std::move(it);
  return true;
}

// A std::function whose callable is too large (or not trivially copyable) to be kept inline.
bool advise_function(const group& g, std::size_t site, const cost_model& costs, advice_item& out) {
  if (g.op.kind != "function_callable") return false;
  const auto [size, share] = common_first_size(g.objects);
  advice_item it = item_of(g, site, "function");
  it.element_size = size;
  it.chosen.suggestion =
      "capture at most 16 bytes, trivially copyable (a pointer or reference to the state), or "
      "take the callable as a template parameter or a function_ref";
  removes_all(it, costs);
  it.confidence = "medium";
  it.evidence =
      std::string(
          "std::function keeps a callable inline only up to 16 bytes and "
          "trivially copyable (libstdc++), 24 bytes and nothrow-copyable "
          "(libc++)") +
      (size != 0 ? "; here " + percent_text(share) + " are " + std::to_string(size) + " bytes"
                 : std::string()) +
      "; how to shrink the capture is the program's to say";
  it.what = operation_text(g.op) + ": " + counted(g.allocations, "callable");
  out = std::move(it);
  return true;
}

// A copy of a vector or string: passed by value, or copied where a reference or a move would do.
bool advise_copy(const group& g, std::size_t site, const cost_model& costs, advice_item& out) {
  if (g.op.kind != "vector_copy" && g.op.kind != "string_copy") return false;
  advice_item it = item_of(g, site, "copy");
  it.chosen.suggestion = "take a const reference (" +
                         (g.op.container.empty() ? std::string("T") : g.op.container) +
                         " const&) or std::move() the value, if the copy is not needed";
  removes_all(it, costs);
  it.confidence = "medium";
  it.evidence = "its copy constructor (or copy assignment) allocates here, " +
                with_commas(g.bytes / std::max<std::uint64_t>(1, g.allocations)) +
                " bytes per copy on average; whether the copy is needed the trace cannot tell";
  it.what = operation_text(g.op) + ": " + counted(g.allocations, "copy", "copies");
  out = std::move(it);
  return true;
}

// Line `line` (from 1) of `path`; false when it cannot be read.
bool source_line(const std::string& path, unsigned line, std::string& text) {
  if (path.empty() || line == 0) return false;
  std::ifstream in(path);
  if (!in) return false;
  for (unsigned i = 1; i <= line; ++i)
    if (!std::getline(in, text)) return false;
  return true;
}

// A std::string made from a C string for a lookup and dropped: std::less<> (or a transparent
// hash) and a string_view key make none.
bool advise_transparent_lookup(const group& g, const analysis& a, std::size_t site,
                               const cost_model& costs, advice_item& out) {
  const object_counts& o = g.objects;
  if (g.op.kind != "string_construction" || o.objects == 0) return false;
  const double temporary = static_cast<double>(o.by_lifetime[0]) / static_cast<double>(o.objects);
  if (temporary < 0.9) return false;
  // Made from a `char const*`: libstdc++'s _M_construct<char const*>, or a constructor taking one.
  const stack& st = a.stacks[g.first_stack];
  bool from_c_string = false;
  for (std::uint32_t i = 0; i < st.frame_count && i <= st.allocator_frames; ++i) {
    const std::string& f = a.frames->frames[a.frames->ids[st.first_frame + i]].function;
    if (f.find("_M_construct<char const*>") != std::string::npos ||
        (f.find("basic_string") != std::string::npos &&
         f.find("(char const*") != std::string::npos))
      from_c_string = true;
  }
  if (!from_c_string) return false;
  const analyze::site& s = a.sites[site];
  std::string text;
  const bool readable = !s.stack.empty() && source_line(s.stack[0].file, s.stack[0].line, text);
  if (readable && !detail::looks_up(text)) return false;
  advice_item it = item_of(g, site, "transparent_lookup");
  it.chosen.suggestion =
      "look up with a std::string_view: std::map<std::string, V, std::less<>> (C++14), or a "
      "transparent hash and key_equal for std::unordered_map (C++20)";
  removes_all(it, costs);
  it.confidence = readable ? "medium" : "low";
  std::string shown = text;
  while (!shown.empty() && (shown.front() == ' ' || shown.front() == '\t')) shown.erase(0, 1);
  if (shown.size() > 60) {
    // The part around the lookup.
    std::size_t at = shown.find_first_of(".[");
    for (const char* call : {".find(", ".count(", ".contains(", ".at(", "->find(", "["})
      if (const std::size_t f = shown.find(call); f != std::string::npos) {
        at = f;
        break;
      }
    const std::size_t from = at > 25 && at != std::string::npos ? at - 25 : 0;
    shown =
        (from > 0 ? "..." : "") + shown.substr(from, 50) + (from + 50 < shown.size() ? "..." : "");
  }
  it.evidence = percent_text(temporary) +
                " of the strings, made from a char const*, were freed "
                "before the next allocation" +
                (readable ? "; the line looks a key up: " + shown
                          : "; the source line could not be read to confirm a lookup");
  it.what = operation_text(g.op) + ": " + counted(g.allocations, "temporary string") +
            " made from a C string";
  out = std::move(it);
  return true;
}

}  // namespace

namespace detail {

std::uint64_t small_vector_sizeof(std::uint64_t size, std::uint64_t align, std::uint64_t n) {
  // One word (size, N, on-heap bit), then a union of the heap pointer and capacity with the
  // inline elements; the whole rounded to the alignment.
  const std::uint64_t a = std::max<std::uint64_t>(align, 8);
  const std::uint64_t header = ((8 + align - 1) / align) * align;
  const std::uint64_t body = std::max<std::uint64_t>(16, n * size);
  return ((header + body + a - 1) / a) * a;
}

std::uint64_t inplace_vector_sizeof(std::uint64_t size, std::uint64_t align, std::uint64_t n) {
  const std::uint64_t counter = n <= 0xff ? 1 : n <= 0xffff ? 2 : n <= 0xffffffffu ? 4 : 8;
  const std::uint64_t a = std::max(align, counter);
  return ((n * size + counter + a - 1) / a) * a;
}

std::uint64_t small_string_sizeof(std::uint64_t n) {
  return std::max<std::uint64_t>(24, ((n + 7) / 8) * 8);
}

std::uint64_t fixed_string_sizeof(std::uint64_t n) { return n + 1; }

std::uint64_t known_type_size(const std::string& type, bool libcxx) {
  if (type.empty()) return 0;
  if (type.back() == '*') return sizeof(void*);
  static const std::pair<const char*, std::uint64_t> sizes[] = {{"char", 1},
                                                                {"signed char", 1},
                                                                {"unsigned char", 1},
                                                                {"bool", 1},
                                                                {"char8_t", 1},
                                                                {"short", 2},
                                                                {"unsigned short", 2},
                                                                {"char16_t", 2},
                                                                {"int", 4},
                                                                {"unsigned int", 4},
                                                                {"float", 4},
                                                                {"char32_t", 4},
                                                                {"wchar_t", 4},
                                                                {"long", 8},
                                                                {"unsigned long", 8},
                                                                {"long long", 8},
                                                                {"unsigned long long", 8},
                                                                {"double", 8},
                                                                {"std::string_view", 16},
                                                                {"std::byte", 1}};
  for (const auto& [name, size] : sizes)
    if (type == name) return size;
  if (type == "std::string") return libcxx ? 24 : 32;
  if (type.compare(0, 12, "std::vector<") == 0) return 24;
  if (type.compare(0, 16, "std::unique_ptr<") == 0 && type.find(',') == std::string::npos)
    return sizeof(void*);
  if (type.compare(0, 16, "std::shared_ptr<") == 0) return 2 * sizeof(void*);
  return 0;
}

std::uint64_t small_vector_allocations(std::uint64_t capacity, std::uint64_t n) {
  std::uint64_t allocations = 0;
  for (std::uint64_t c = n == 0 ? 1 : n; c < capacity; c *= 2) ++allocations;
  return allocations;
}

std::vector<std::string> template_arguments(const std::string& type) {
  std::vector<std::string> out;
  const std::size_t open = type.find('<');
  if (open == std::string::npos) return out;
  int depth = 0;
  std::size_t from = open + 1;
  for (std::size_t i = open + 1; i < type.size(); ++i) {
    const char c = type[i];
    if (c == '<' || c == '(' || c == '[') {
      ++depth;
    } else if ((c == '>' || c == ')' || c == ']') && depth > 0) {
      --depth;
    } else if ((c == ',' || c == '>') && depth == 0) {
      std::string a = type.substr(from, i - from);
      while (!a.empty() && a.front() == ' ') a.erase(0, 1);
      while (!a.empty() && a.back() == ' ') a.pop_back();
      out.push_back(std::move(a));
      from = i + 1;
      if (c == '>') break;
    }
  }
  return out;
}

std::string with_allocator(const std::string& container, const std::string& allocator) {
  if (container == "std::string")
    return "std::basic_string<char, std::char_traits<char>, " + allocator + "<char>>";
  const std::size_t open = container.find('<');
  if (open == std::string::npos) return {};
  const std::string name = container.substr(0, open);
  const std::vector<std::string> args = template_arguments(container);
  if (args.empty()) return {};
  const std::string& k = args[0];
  const auto pair = [&] { return "std::pair<const " + k + ", " + args[1] + ">"; };
  const auto alloc = [&](const std::string& t) { return allocator + "<" + t + ">"; };
  if ((name == "std::map" || name == "std::multimap") && args.size() == 2)
    return name + "<" + k + ", " + args[1] + ", std::less<" + k + ">, " + alloc(pair()) + ">";
  if ((name == "std::set" || name == "std::multiset") && args.size() == 1)
    return name + "<" + k + ", std::less<" + k + ">, " + alloc(k) + ">";
  if ((name == "std::unordered_map" || name == "std::unordered_multimap") && args.size() == 2)
    return name + "<" + k + ", " + args[1] + ", std::hash<" + k + ">, std::equal_to<" + k + ">, " +
           alloc(pair()) + ">";
  if ((name == "std::unordered_set" || name == "std::unordered_multiset") && args.size() == 1)
    return name + "<" + k + ", std::hash<" + k + ">, std::equal_to<" + k + ">, " + alloc(k) + ">";
  if ((name == "std::list" || name == "std::forward_list" || name == "std::vector" ||
       name == "std::deque") &&
      args.size() == 1)
    return name + "<" + k + ", " + alloc(k) + ">";
  return {};
}

std::uint64_t arena_chunks(std::uint64_t n, std::uint64_t blocks, std::uint64_t size) {
  namespace ad = lowalloc::detail;
  if (blocks == 0) return 0;
  size = std::max<std::uint64_t>(size, ad::arena_granule);
  const std::uint64_t capacity = ad::arena_round_up(n, ad::arena_granule);
  std::uint64_t chunk = std::max<std::uint64_t>(2 * capacity, ad::arena_min_first_chunk);
  std::uint64_t left = blocks - std::min(blocks, capacity / size);
  std::uint64_t chunks = 0;
  while (left != 0) {
    if (size + ad::arena_header > chunk) return chunks + left;  // each a chunk of its own
    ++chunks;
    left -= std::min(left, (chunk - ad::arena_header) / size);
    chunk *= 2;
  }
  return chunks;
}

bool looks_up(const std::string& text) {
  for (const char* call :
       {".find(", ".count(", ".contains(", ".at(", ".equal_range(", ".lower_bound(",
        ".upper_bound(", "->find(", "->count(", "->contains(", "->at(", ".erase("})
    if (text.find(call) != std::string::npos) return true;
  // m["key"], m[name]: a subscript whose argument is not a number.
  for (std::size_t at = text.find('['); at != std::string::npos; at = text.find('[', at + 1)) {
    const std::size_t end = text.find(']', at);
    if (end == std::string::npos || end == at + 1) continue;
    const char c = text[at + 1];
    if (!(c >= '0' && c <= '9')) return true;
  }
  return false;
}

std::string first_template_argument(const std::string& type) {
  const std::size_t open = type.find('<');
  if (open == std::string::npos) return {};
  int depth = 0;
  for (std::size_t i = open + 1; i < type.size(); ++i) {
    const char c = type[i];
    if (c == '<' || c == '(' || c == '[') ++depth;
    if (c == '>' || c == ')' || c == ']') {
      if (depth == 0) return type.substr(open + 1, i - open - 1);
      --depth;
    }
    if (c == ',' && depth == 0) return type.substr(open + 1, i - open - 1);
  }
  return {};
}

}  // namespace detail

cost_model cost_model::measure() {
  using clock = std::chrono::steady_clock;
  cost_model m;
  constexpr int rounds = 5;
  // malloc + free of 64 bytes, with a few blocks live so that free lists are exercised.
  std::vector<double> alloc;
  for (int r = 0; r < rounds; ++r) {
    constexpr int n = 20000;
    void* keep[8] = {};
    const auto t0 = clock::now();
    for (int i = 0; i < n; ++i) {
      void* p = std::malloc(64);
      __asm__ volatile("" : : "r"(p) : "memory");
      std::free(keep[i & 7]);
      keep[i & 7] = p;
    }
    const auto t1 = clock::now();
    for (void* p : keep) std::free(p);
    alloc.push_back(std::chrono::duration<double>(t1 - t0).count() / n);
  }
  // One store per cache line into memory larger than the caches.
  std::vector<double> line;
  constexpr std::size_t bytes = 4u << 20;  // past the per-core caches
  std::unique_ptr<char[]> buffer(new char[bytes]);
  for (std::size_t i = 0; i < bytes; i += 4096) buffer[i] = 1;  // the pages, first
  for (int r = 0; r < rounds; ++r) {
    const auto t0 = clock::now();
    for (std::size_t i = 0; i < bytes; i += 64)
      buffer[i] = static_cast<char>(static_cast<std::size_t>(r) + i);
    __asm__ volatile("" : : "r"(buffer.get()) : "memory");
    const auto t1 = clock::now();
    line.push_back(std::chrono::duration<double>(t1 - t0).count() / (bytes / 64));
  }
  // lowalloc::pool's allocate + deallocate of a 64-byte slot, as in the malloc loop.
  std::vector<double> slots;
  lowalloc::pool pool(64);
  for (int r = 0; r < rounds; ++r) {
    constexpr int n = 20000;
    void* keep[8] = {};
    const auto t0 = clock::now();
    for (int i = 0; i < n; ++i) {
      void* p = pool.allocate(64);
      __asm__ volatile("" : : "r"(p) : "memory");
      if (keep[i & 7] != nullptr) pool.deallocate(keep[i & 7], 64);
      keep[i & 7] = p;
    }
    const auto t1 = clock::now();
    for (void* p : keep)
      if (p != nullptr) pool.deallocate(p, 64);
    slots.push_back(std::chrono::duration<double>(t1 - t0).count() / n);
  }
  std::sort(alloc.begin(), alloc.end());
  std::sort(line.begin(), line.end());
  std::sort(slots.begin(), slots.end());
  m.malloc_free_seconds = alloc[rounds / 2];
  m.cache_line_seconds = line[rounds / 2];
  m.pool_seconds = slots[rounds / 2];
  m.source = "measured at advise time";
  return m;
}

std::vector<advice_item> advise(const analysis& a, const object_tracker& objects,
                                const cost_model& costs, const advise_options& opts) {
  std::vector<advice_item> out;
  if (a.frames == nullptr) return out;
  const std::size_t sites = std::min(opts.top_sites, a.sites.size());
  // The top sites' stacks, grouped by operation.
  std::vector<std::map<std::tuple<std::string, std::string, std::string>, group>> groups(sites);
  operation_classifier classifier(*a.frames);

  for (std::size_t si = 0; si < a.stacks.size(); ++si) {
    const stack& st = a.stacks[si];
    if (st.totals.allocations == 0 || st.site >= sites) continue;
    const std::size_t n =
        std::min<std::size_t>(std::size_t{st.allocator_frames} + 1, st.frame_count);
    operation op = classifier.classify(a.frames->ids.data() + st.first_frame, n);
    group& g = groups[st.site][std::make_tuple(op.kind, op.container, op.member)];
    if (g.stacks++ == 0) {
      g.op = std::move(op);
      g.first_stack = static_cast<std::uint32_t>(si);
      for (std::uint32_t k = 0; k < st.frame_count && k <= st.allocator_frames; ++k)
        if (a.frames->frames[a.frames->ids[st.first_frame + k]].function.find("std::__1::") !=
            std::string::npos)
          g.libcxx = true;
    }
    g.allocations += st.totals.allocations;
    g.bytes += st.totals.bytes_allocated;
    if (opts.bursts != nullptr) {
      if (const burst_counts* b = opts.bursts->of(static_cast<std::uint32_t>(si))) {
        g.freed_in_bursts += b->freed_in_bursts;
        g.phases.insert(g.phases.end(), b->phases.begin(), b->phases.end());
      }
    }
    if (si < objects.stacks()) g.objects.add(objects.of(static_cast<std::uint32_t>(si)));
  }
  for (std::size_t site = 0; site < sites; ++site) {
    for (auto& [key, g] : groups[site]) {
      // A site's stacks of one operation peak together only if they are one stack.
      if (g.stacks > 1) g.objects.max_alive = std::max<std::uint64_t>(g.objects.max_alive, 1);
      std::vector<advice_item> found;
      advice_item it;
      const bool vector_growth = g.op.kind == "vector_growth";
      if (g.allocations >= opts.min_allocations) {
        if (vector_growth && advise_small_vector(g, site, costs, it)) found.push_back(it);
        if (vector_growth && advise_reserve(g, site, costs, it)) found.push_back(it);
        if (g.stacks == 1 && advise_reuse(g, site, costs, it)) found.push_back(it);
        if (is_string_kind(g.op.kind) && advise_small_string(g, site, costs, it))
          found.push_back(it);
        if (is_node_kind(g.op.kind) && advise_pool(g, site, costs, it)) found.push_back(it);
        if (advise_flat_map(g, site, costs, it)) found.push_back(it);
        if (advise_arena(g, site, costs, it)) found.push_back(it);
        if (advise_make_shared(g, site, costs, it)) found.push_back(it);
        if (advise_function(g, site, costs, it)) found.push_back(it);
        if (advise_copy(g, site, costs, it)) found.push_back(it);
        if (advise_transparent_lookup(g, a, site, costs, it)) found.push_back(it);
      }
      if (found.empty()) {
        it = item_of(g, site, "none");
        const double average = g.allocations == 0
                                   ? 0.0
                                   : static_cast<double>(a.sites[site].totals.bytes_allocated) /
                                         static_cast<double>(a.sites[site].totals.allocations);
        // Rare or large allocations are not worth a change; others, that no rule fits, are
        // said to be so, with a low confidence: the trace does not show what they are for.
        if (g.allocations < opts.min_allocations) {
          it.confidence = "high";
          it.evidence = "rare: " + counted(g.allocations, "allocation");
        } else if (average > 1024) {
          it.confidence = "high";
          it.evidence = "large: " + counted(static_cast<std::uint64_t>(average), "byte") +
                        " per allocation on average";
        } else if (g.objects.objects != 0 && g.objects.allocations == g.objects.objects &&
                   g.objects.short_lived() * 2 < g.objects.objects) {
          // One block per object, and the objects are kept: no type or call removes them.
          it.confidence = "medium";
          it.evidence = "one allocation per object, and " +
                        percent_text(1.0 - static_cast<double>(g.objects.short_lived()) /
                                               static_cast<double>(g.objects.objects)) +
                        " of the objects lived 16 allocations or more: nothing that a type or a "
                        "call removes";
        } else {
          it.confidence = "low";
          it.evidence =
              g.op.kind == "other"
                  ? "no standard-library operation recognized (the program's own malloc or new, "
                    "or frames without names): no lowalloc type to suggest"
                  : "no advice for a " + g.op.kind + " that outlives its loop or has company";
        }
        const std::string via = operation_text(g.op);
        it.what =
            counted(g.allocations, "allocation") + (via.empty() ? std::string() : " via " + via);
        it.chosen.allocations_after = g.allocations;
        found.push_back(it);
      }
      for (advice_item& f : found) {
        const auto at_peak = [&f](advice_option& o) {
          o.peak_bytes_added = static_cast<std::int64_t>(f.alive_at_peak) *
                               (static_cast<std::int64_t>(o.sizeof_after) -
                                static_cast<std::int64_t>(o.sizeof_before));
        };
        at_peak(f.chosen);
        for (advice_option& o : f.options) at_peak(o);
        out.push_back(std::move(f));
      }
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const advice_item& x, const advice_item& y) {
    const bool xn = x.kind == "none";
    const bool yn = y.kind == "none";
    if (xn != yn) return yn;
    if (xn) return x.allocations > y.allocations;
    return x.chosen.estimated_seconds_saved > y.chosen.estimated_seconds_saved;
  });
  return out;
}

}  // namespace lowalloc::analyze
