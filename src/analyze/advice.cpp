// The advice: each top site's stacks grouped by operation, their objects summed, and for each
// kind that applies the allocations after the change, computed from the objects' last blocks.
#include "analyze/advice.hpp"

#include "analyze/operation.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <tuple>

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

std::string percent_text(double share) {
  char buf[32];
  std::snprintf(buf, sizeof buf, share >= 0.1 || share == 0 ? "%.0f %%" : "%.1f %%", share * 100);
  return buf;
}

std::uint64_t cache_lines(std::uint64_t bytes) { return (bytes + 63) / 64; }

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
  object_counts objects;
  std::size_t stacks = 0;
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
  const double lines = static_cast<double>(cache_lines(sizeof_after)) -
                       static_cast<double>(cache_lines(sizeof_before));
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

bool is_string_kind(const std::string& kind) {
  return kind == "string_construction" || kind == "string_copy" || kind == "string_growth" ||
         kind == "string_concatenation" || kind == "to_string";
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
  return it;
}

// small_vector<T, N> (and, when every object fits, inplace_vector<T, N>) for a vector's growth.
bool advise_small_vector(const group& g, std::size_t site, const cost_model& costs,
                         advice_item& out) {
  const object_counts& o = g.objects;
  const auto [element, first_share] = common_first_size(o);
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
  it.evidence = percent_text(first_share) + " of the " + with_commas(o.objects) +
                " objects started at one element of " + std::to_string(element) +
                " bytes; capacities from the last blocks" +
                (from_one ? ": exact for a doubling growth" : ", a bound on the sizes");
  it.what = operation_text(g.op) + ": " + with_commas(g.allocations) + " allocations from " +
            with_commas(o.objects) + " vectors; " + percent_text(it.chosen.coverage) +
            " never exceed " + std::to_string(it.chosen.inline_capacity) + " elements";
  out = std::move(it);
  return true;
}

// reserve(n) before a vector's growth: each object allocates once if it holds n elements or
// fewer, else once and then once per doubling from n.
bool advise_reserve(const group& g, std::size_t site, const cost_model& costs, advice_item& out) {
  const object_counts& o = g.objects;
  const auto [element, first_share] = common_first_size(o);
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
  it.what = operation_text(g.op) + ": " + with_commas(g.allocations) + " allocations from " +
            with_commas(o.objects) + " vectors, " + std::to_string(g.allocations / o.objects) +
            "." + std::to_string((g.allocations % o.objects) * 10 / o.objects) + " each; " +
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
  it.what = (via.empty() ? std::string("allocations") : via) + ": " + with_commas(g.allocations) +
            " allocations from " + with_commas(o.objects) + " objects made one after the other";
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
  const bool single = o.by_allocations[0] == o.objects;
  it.confidence = single ? "high" : "medium";
  it.evidence = single ? "every string made one block: its size is its length + 1 or more"
                       : "some strings grew: their last blocks bound their lengths";
  it.what = operation_text(g.op) + ": " + with_commas(g.allocations) + " allocations from " +
            with_commas(o.objects) + " strings; " + percent_text(it.chosen.coverage) + " fit in " +
            std::to_string(it.chosen.inline_capacity - 1) + " characters";
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

std::uint64_t small_vector_allocations(std::uint64_t capacity, std::uint64_t n) {
  std::uint64_t allocations = 0;
  for (std::uint64_t c = n == 0 ? 1 : n; c < capacity; c *= 2) ++allocations;
  return allocations;
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
    constexpr int n = 100000;
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
  constexpr std::size_t bytes = 8u << 20;  // past the per-core caches
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
  std::sort(alloc.begin(), alloc.end());
  std::sort(line.begin(), line.end());
  m.malloc_free_seconds = alloc[rounds / 2];
  m.cache_line_seconds = line[rounds / 2];
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
  const std::vector<object_counts>& by_stack = objects.by_stack();
  for (std::size_t si = 0; si < a.stacks.size(); ++si) {
    const stack& st = a.stacks[si];
    if (st.totals.allocations == 0 || st.site >= sites) continue;
    const std::size_t n =
        std::min<std::size_t>(std::size_t{st.allocator_frames} + 1, st.frame_count);
    operation op = classifier.classify(a.frames->ids.data() + st.first_frame, n);
    group& g = groups[st.site][std::make_tuple(op.kind, op.container, op.member)];
    if (g.stacks++ == 0) g.op = std::move(op);
    g.allocations += st.totals.allocations;
    if (si < by_stack.size()) g.objects.add(by_stack[si]);
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
          it.evidence = "rare: " + with_commas(g.allocations) +
                        (g.allocations == 1 ? " allocation" : " allocations");
        } else if (average > 1024) {
          it.confidence = "high";
          it.evidence = "large: " + with_commas(static_cast<std::uint64_t>(average)) +
                        " bytes per allocation on average";
        } else {
          it.confidence = "low";
          it.evidence =
              g.op.kind == "other"
                  ? "no standard-library operation recognized (the program's own malloc or new, "
                    "or frames without names): no lowalloc type to suggest"
                  : "no advice for a " + g.op.kind + " that outlives its loop or has company";
        }
        const std::string via = operation_text(g.op);
        it.what = with_commas(g.allocations) +
                  (g.allocations == 1 ? " allocation" : " allocations") +
                  (via.empty() ? std::string() : " via " + via);
        it.chosen.allocations_after = g.allocations;
        found.push_back(it);
      }
      for (advice_item& f : found) out.push_back(std::move(f));
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
