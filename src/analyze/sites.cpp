// Symbolization of the distinct stacks and their grouping into sites. Each distinct return
// address (of one module) is symbolized once, into a run of frames of the analysis' frame table;
// a stack is then a run of frame ids in one flat array, and a site a view of its first stack's
// run. Frames are compared by identity numbers (one per distinct module, function, file, line
// and inlined flag), so grouping stacks into sites hashes short runs of integers, not text.
#include "analyze/sites.hpp"

#include "analyze/operation.hpp"
#include "analyze/runtime.hpp"

#include "analyze/flat_map.hpp"
#include "analyze/fold.hpp"
#include "analyze/symbolize.hpp"

#include <algorithm>
#include <cstring>
#include <iterator>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>

namespace lowalloc::analyze {

namespace {

// The frames of each distinct (module, return address), resolved on first use.
class location_frames {
 public:
  location_frames(const std::vector<recorded_module>& modules, const options& opts,
                  frame_table& table)
      : modules_(modules), table_(table) {
    if (opts.symbolize) sym_ = std::make_unique<detail::symbolizer>(opts.debug_paths);
  }

  /// The run of table.frames (first, count) of `address` in recorded module `m`.
  std::pair<std::uint32_t, std::uint32_t> resolve(std::uint64_t address, std::uint32_t m) {
    const std::size_t key = m == recorded_stacks::no_module ? no_key : modules_[m].symbolizer_key;
    // Almost every address lies in one module only: the address alone finds its run, and the
    // rare address seen in two modules (one unloaded, another loaded there) goes to `others_`.
    bool inserted = false;
    std::uint32_t& index = by_address_.get(address, inserted);
    if (inserted) {
      index = add(key, address, m);
      return {runs_[index].first, runs_[index].count};
    }
    if (runs_[index].key == key) return {runs_[index].first, runs_[index].count};
    auto [it, added] = others_.try_emplace({key, address}, 0);
    if (added) it->second = add(key, address, m);
    return {runs_[it->second].first, runs_[it->second].count};
  }

  /// What the symbolizer had to say about the modules (symbolizer::warnings(), notes()).
  std::vector<std::string> warnings() const {
    return sym_ != nullptr ? sym_->warnings() : std::vector<std::string>();
  }
  std::vector<std::string> notes() const {
    return sym_ != nullptr ? sym_->notes() : std::vector<std::string>();
  }

  /// Whether each frame of the table is allocator plumbing (fold.hpp), decided once per frame.
  const std::vector<bool>& allocator() const noexcept { return allocator_; }

 private:
  static constexpr std::size_t no_key = ~std::size_t{0};
  struct run {
    std::size_t key;
    std::uint32_t first;
    std::uint32_t count;
  };

  std::uint32_t add(std::size_t key, std::uint64_t address, std::uint32_t m) {
    found_.clear();
    if (m == recorded_stacks::no_module) {
      frame f;
      f.address = address;
      found_.push_back(std::move(f));
    } else if (sym_ != nullptr) {
      sym_->resolve(key, modules_[m].desc, address, found_);
    } else {
      frame f;
      f.address = address;
      f.module = modules_[m].desc.path;
      f.offset = address - modules_[m].desc.bias;
      found_.push_back(std::move(f));
    }
    runs_.push_back(run{key, static_cast<std::uint32_t>(table_.frames.size()),
                        static_cast<std::uint32_t>(found_.size())});
    for (frame& f : found_) {
      allocator_.push_back(detail::is_allocator_frame(f));
      table_.frames.push_back(std::move(f));
    }
    return static_cast<std::uint32_t>(runs_.size() - 1);
  }

  const std::vector<recorded_module>& modules_;
  frame_table& table_;
  std::unique_ptr<detail::symbolizer> sym_;
  detail::u64_map<std::uint32_t> by_address_;  // address -> its first run in runs_
  std::map<std::pair<std::size_t, std::uint64_t>, std::uint32_t> others_;
  std::vector<run> runs_;
  std::vector<frame> found_;
  std::vector<bool> allocator_;
};

// Frames that look the same in a site (symbolized: by function, file, line and module, so two
// calls on one line are one site; unsymbolized: by address) get the same number.
std::vector<std::uint32_t> frame_identities(const std::vector<frame>& frames) {
  std::unordered_map<std::string, std::uint32_t> number_of_key;
  std::vector<std::uint32_t> numbers;
  numbers.reserve(frames.size());
  std::string key;
  for (const frame& f : frames) {
    key.clear();
    if (f.function.empty()) key.append(reinterpret_cast<const char*>(&f.address), sizeof f.address);
    key += f.module;
    key += '\0';
    key += f.function;
    key += '\0';
    key += f.file;
    key += '\0';
    key.append(reinterpret_cast<const char*>(&f.line), sizeof f.line);
    key += f.inlined ? '1' : '0';
    numbers.push_back(
        number_of_key.try_emplace(key, static_cast<std::uint32_t>(number_of_key.size()))
            .first->second);
  }
  return numbers;
}

// Requested sizes per stack, grouped by stack in bucket order: placed by stack with a counting
// sort (stacks are numbered densely, and most have one size), then each stack's few buckets
// sorted and the repeated ones merged.
void collect_sizes(const accounting& acc, analysis& a) {
  const std::size_t n = a.stacks.size();
  std::vector<std::uint32_t> next(n + 1, 0);
  acc.for_each_size([&](std::uint32_t si, std::size_t, std::uint64_t) { ++next[si + 1]; });
  for (std::size_t si = 0; si < n; ++si) next[si + 1] += next[si];
  std::vector<stack_bucket>& out = a.stack_sizes;
  out.resize(next[n]);
  acc.for_each_size([&](std::uint32_t si, std::size_t bucket, std::uint64_t count) {
    out[next[si]++] = stack_bucket{si, static_cast<std::uint32_t>(bucket), count};
  });
  // next[si] is now where stack si's entries end.
  std::size_t kept = 0;
  for (std::size_t si = 0, begin = 0; si < n; begin = next[si++]) {
    const auto first = out.begin() + static_cast<std::ptrdiff_t>(begin);
    const auto last = out.begin() + static_cast<std::ptrdiff_t>(next[si]);
    if (last - first > 1)
      std::sort(first, last,
                [](const stack_bucket& x, const stack_bucket& y) { return x.bucket < y.bucket; });
    stack& st = a.stacks[si];
    for (auto it = first; it != last; ++it) {
      if (st.sizes != 0 && out[kept - 1].bucket == it->bucket) {
        out[kept - 1].count += it->count;
        continue;
      }
      if (st.sizes == 0) st.first_size = static_cast<std::uint32_t>(kept);
      out[kept++] = *it;
      ++st.sizes;
    }
  }
  out.resize(kept);
}

// The operation of a stack (operation.hpp) from its allocator frames and the one after them,
// interned in `operations`. It depends on those frames only, and the stacks of one allocating
// call made from many places share them: each distinct run of frame ids is classified once,
// found again by a hash of the run (colliding runs take the next hash values), the run compared.
class stack_operations {
 public:
  stack_operations(const frame_table& table, std::vector<operation>& operations)
      : table_(table), classifier_(table), operations_(operations) {
    operations_.assign(1, operation{});
  }

  /// The index in `operations` of the operation of the run table.ids[first, first + n).
  std::uint32_t of(std::uint32_t first, std::uint32_t n) {
    const std::uint32_t* ids = table_.ids.data() + first;
    std::uint64_t h = n;
    for (std::uint32_t k = 0; k < n; ++k) {
      h = (h ^ ids[k]) * 0x9E3779B97F4A7C15ull;
      h ^= h >> 29;
    }
    for (std::uint64_t key = h;; ++key) {
      bool inserted = false;
      std::uint32_t& index = run_of_hash_.get(key, inserted);
      if (!inserted) {
        const classified& r = runs_[index];
        if (r.count == n && std::equal(ids, ids + n, table_.ids.data() + r.first)) return r.op;
        continue;
      }
      index = static_cast<std::uint32_t>(runs_.size());
      std::uint32_t op = 0;
      operation o = classifier_.classify(ids, n);
      if (!(o.kind == "other" && o.container.empty() && o.member.empty())) {
        const auto [it, added] = index_.try_emplace(std::make_tuple(o.kind, o.container, o.member),
                                                    static_cast<std::uint32_t>(operations_.size()));
        if (added) operations_.push_back(std::move(o));
        op = it->second;
      }
      runs_.push_back(classified{first, n, op});
      return op;
    }
  }

 private:
  struct classified {
    std::uint32_t first;  // the run: table.ids[first, first + count)
    std::uint32_t count;
    std::uint32_t op;
  };
  const frame_table& table_;
  operation_classifier classifier_;
  std::vector<operation>& operations_;
  std::map<std::tuple<std::string, std::string, std::string>, std::uint32_t> index_;
  std::vector<classified> runs_;
  detail::u64_map<std::uint32_t> run_of_hash_;  // hash -> index in runs_
};

}  // namespace

void build_stacks(const recorded_stacks& recorded, const std::vector<recorded_module>& modules,
                  accounting& acc, const options& opts, analysis& a) {
  // The accounting's stacks with their counters, taken over, and their sizes, then freed.
  a.stacks = acc.take_stacks();
  a.stacks.grow_to(recorded.stacks.size());
  collect_sizes(acc, a);
  acc.release_sizes();

  auto table = std::make_shared<frame_table>();
  location_frames locations(modules, opts, *table);
  // Each location resolved once, on first use.
  constexpr std::uint32_t unresolved = ~std::uint32_t{0};
  std::vector<std::pair<std::uint32_t, std::uint32_t>> run_of(recorded.locations.size(),
                                                              {unresolved, 0});
  const auto frames_of = [&](std::uint32_t location) {
    std::pair<std::uint32_t, std::uint32_t>& run = run_of[location];
    if (run.first == unresolved) {
      const recorded_stacks::location& l = recorded.locations[location];
      run = locations.resolve(l.address, l.module);
    }
    return run;
  };
  // The frames of each node's calls from the root, in one pass over the nodes (a parent is
  // made before its children), resolving every address: then the flat array of frame ids is
  // allocated once at its size, and filled walking each stack's nodes once.
  std::vector<std::uint32_t> depth(recorded.nodes.size(), 0);
  for (std::size_t n = 1; n < recorded.nodes.size(); ++n)
    depth[n] = depth[recorded.nodes[n].parent] + frames_of(recorded.nodes[n].location).second;

  std::size_t ids = 0;
  for (std::size_t si = 0; si < recorded.stacks.size(); ++si)
    if (a.stacks[si].totals.allocations != 0) ids += depth[recorded.stacks[si]];
  // A node's frames are its own run, then its parent's frames: once a node's frames have been
  // written for one stack, the next stack through that node copies them in one piece instead of
  // walking the rest of the way to the root (stacks share their outer nodes).
  // (Resized without being zeroed: every id is written below.)
  table->ids.reserve(ids);
  detail::prefault(table->ids.data(), ids * sizeof(std::uint32_t));
  table->ids.resize(ids);
  std::uint32_t* const out = table->ids.data();
  constexpr std::uint32_t not_written = ~std::uint32_t{0};
  std::vector<std::uint32_t> written_at(recorded.nodes.size(), not_written);
  std::uint32_t end = 0;
  for (std::size_t si = 0; si < recorded.stacks.size(); ++si) {
    stack& st = a.stacks[si];
    if (st.totals.allocations == 0) continue;  // defined, never used: nothing to show
    st.first_frame = end;
    // From the stack's node up to the root: innermost frame first.
    for (std::uint32_t n = recorded.stacks[si]; n != 0; n = recorded.nodes[n].parent) {
      if (written_at[n] != not_written) {
        std::memcpy(out + end, out + written_at[n], std::size_t{depth[n]} * sizeof *out);
        end += depth[n];
        break;
      }
      written_at[n] = end;
      const auto [first, count] = run_of[recorded.nodes[n].location];
      for (std::uint32_t f = first; f < first + count; ++f) out[end++] = f;
    }
    st.frame_count = end - st.first_frame;
  }

  const std::vector<bool>& allocator = locations.allocator();
  // Whether each frame is a start frame, decided once per frame (stacks share their outer
  // frames): -1 not yet known.
  std::vector<signed char> start(table->frames.size(), -1);
  stack_operations operations(*table, a.operations);
  // Why each stack is the runtime's (runtime.hpp), in the same pass over the stacks.
  runtime_classifier runtime(*table);
  a.stack_runtime.assign(a.stacks.size(), 0);
  a.runtime = {};
  for (std::size_t si = 0; si < a.stacks.size(); ++si) {
    stack& st = a.stacks[si];
    // As detail::fold_count: the leading allocator frames, never the last frame.
    std::uint32_t n = 0;
    while (n + 1 < st.frame_count && allocator[table->ids[st.first_frame + n]]) ++n;
    st.allocator_frames = n;
    if (st.totals.allocations != 0) {
      st.op = operations.of(st.first_frame, std::min(n + 1, st.frame_count));
      if (st.frame_count != 0) {
        const runtime_reason r = runtime.of(st.first_frame, st.frame_count);
        if (r != runtime_reason::none) {
          a.stack_runtime[si] = static_cast<std::uint8_t>(r);
          add_counters(a.runtime[static_cast<std::size_t>(r)], st.totals);
        }
      }
    }
    const auto id = [&](std::size_t i) { return table->ids[st.first_frame + i]; };
    st.start_frames = static_cast<std::uint32_t>(detail::start_fold_count(
        st.frame_count, n, [&](std::size_t i) -> const frame& { return table->frames[id(i)]; },
        [&](std::size_t i) {
          signed char& known = start[id(i)];
          if (known < 0) known = detail::is_start_frame(table->frames[id(i)]) ? 1 : 0;
          return known == 1;
        }));
  }

  a.frames = std::move(table);
  a.module_warnings = locations.warnings();
  a.line_notes = locations.notes();
}

namespace {

// A hash of the identities of a run of frame ids: four lanes of frames hashed side by side (one
// chain of multiplies through every frame of 10^6 deep stacks was a tenth of the report's time),
// then mixed.
std::uint64_t hash_run(const std::vector<std::uint32_t>& identity, const std::uint32_t* ids,
                       std::uint32_t count) noexcept {
  constexpr std::uint64_t m = 0x9E3779B97F4A7C15ull;
  const auto step = [](std::uint64_t h, std::uint32_t x) noexcept {
    h = (h ^ x) * m;
    return h ^ (h >> 29);
  };
  std::uint64_t h[4] = {count, 1, 2, 3};
  std::uint32_t k = 0;
  for (; k + 4 <= count; k += 4)
    for (std::uint32_t lane = 0; lane < 4; ++lane) h[lane] = step(h[lane], identity[ids[k + lane]]);
  for (; k < count; ++k) h[0] = step(h[0], identity[ids[k]]);
  return step(step(step(h[0], static_cast<std::uint32_t>(h[1] ^ (h[1] >> 32))),
                   static_cast<std::uint32_t>(h[2] ^ (h[2] >> 32))),
              static_cast<std::uint32_t>(h[3] ^ (h[3] >> 32)));
}

// A site as number_sites finds it: its shown run of frame ids (its first stack's frames after
// folding), and its allocations and bytes, by which the sites are sorted.
struct numbered_site {
  std::uint32_t first;
  std::uint32_t count;
  std::uint64_t allocations;
  std::uint64_t bytes;
};

// Numbers the sites as first seen, each stack's in stack::site, and returns them. Stacks group by a
// hash of their frames' identity numbers; colliding runs take the next hash values.
std::vector<numbered_site> number_sites(analysis& a, bool fold) {
  const auto& ids = a.frames->ids;
  const std::vector<std::uint32_t> identity = frame_identities(a.frames->frames);
  std::vector<numbered_site> shown;
  detail::u64_map<std::uint32_t> site_of_hash;
  const auto same_run = [&](std::uint32_t x, std::uint32_t y, std::uint32_t count) {
    for (std::uint32_t k = 0; k < count; ++k)
      if (ids[x + k] != ids[y + k] && identity[ids[x + k]] != identity[ids[y + k]]) return false;
    return true;
  };
  const auto number = [&](stack& st, std::uint32_t first, std::uint32_t count, std::uint64_t hash) {
    for (std::uint64_t key = hash;; ++key) {
      bool inserted = false;
      std::uint32_t& index = site_of_hash.get(key, inserted);
      if (inserted) {
        index = static_cast<std::uint32_t>(shown.size());
        shown.push_back(numbered_site{first, count, 0, 0});
      } else if (shown[index].count != count || !same_run(shown[index].first, first, count)) {
        continue;
      }
      st.site = index;
      shown[index].allocations += st.totals.allocations;
      shown[index].bytes += st.totals.bytes_allocated;
      break;
    }
  };
  const auto shown_run = [fold](const stack& st) {
    const std::uint32_t folded = fold ? st.allocator_frames : 0;
    return std::make_pair(st.first_frame + folded,
                          st.frame_count - folded - (fold ? st.start_frames : 0));
  };
  // The hashes of a batch of stacks first, each slot fetched as its hash is known, then the
  // probes: one stack's probe at a time missed the cache at each of 10^6 stacks.
  constexpr std::size_t batch = 64;
  std::uint64_t hashes[batch];
  for (std::size_t begin = 0; begin < a.stacks.size(); begin += batch) {
    const std::size_t end = std::min(a.stacks.size(), begin + batch);
    for (std::size_t si = begin; si < end; ++si) {
      const stack& st = a.stacks[si];
      if (st.totals.allocations == 0) continue;
      const auto [first, count] = shown_run(st);
      hashes[si - begin] = hash_run(identity, ids.data() + first, count);
      site_of_hash.prefetch(hashes[si - begin]);
    }
    for (std::size_t si = begin; si < end; ++si) {
      stack& st = a.stacks[si];
      if (st.totals.allocations == 0) continue;
      const auto [first, count] = shown_run(st);
      number(st, first, count, hashes[si - begin]);
    }
  }
  return shown;
}

// A site's sizes from its stacks' buckets [first, last), in any order.
void merge_buckets(std::vector<size_counts::bucket_count>::iterator first,
                   std::vector<size_counts::bucket_count>::iterator last, size_counts& into) {
  std::sort(first, last,
            [](const size_counts::bucket_count& x, const size_counts::bucket_count& y) {
              return x.bucket < y.bucket;
            });
  std::size_t distinct = 0;
  for (auto it = first; it != last; ++it) distinct += it == first || it->bucket != (it - 1)->bucket;
  into.buckets.reserve(distinct);
  for (auto it = first; it != last; ++it) {
    if (into.buckets.empty() || into.buckets.back().bucket != it->bucket)
      into.buckets.push_back(size_counts::bucket_count{it->bucket, 0});
    into.buckets.back().count += it->count;
  }
}

// Each site's operations, from its stacks' (stack::op). A site folds together the operations
// of one line (a push_back that grows the vector and the copy of the element it stores), but
// most sites have one: it is kept with the site, and only a second one goes to a list of the
// site's others.
class site_operations {
 public:
  explicit site_operations(std::size_t sites) : first_of_(sites, site_operation{none, 0}) {}

  void add(std::uint32_t site, std::uint32_t op, std::uint64_t allocations) {
    site_operation& f = first_of_[site];
    if (f.op == none || f.op == op) {
      f.op = op;
      f.allocations += allocations;
      return;
    }
    std::vector<site_operation>& more = others_[site];
    auto it =
        std::find_if(more.begin(), more.end(), [&](const site_operation& o) { return o.op == op; });
    if (it == more.end())
      more.push_back(site_operation{op, allocations});
    else
      it->allocations += allocations;
  }

  /// Each site's list, most allocations first: a.site_operations, a.site_operation_first and
  /// site::op.
  void finish(analysis& a) const {
    std::vector<std::uint32_t>& first = a.site_operation_first;
    std::vector<site_operation>& out = a.site_operations;
    first.assign(a.sites.size() + 1, 0);
    out.clear();
    out.reserve(a.sites.size() + others_.size());
    for (std::size_t i = 0; i < a.sites.size(); ++i) {
      first[i] = static_cast<std::uint32_t>(out.size());
      if (first_of_[i].op == none) continue;
      out.push_back(first_of_[i]);
      if (auto it = others_.find(static_cast<std::uint32_t>(i)); it != others_.end()) {
        out.insert(out.end(), it->second.begin(), it->second.end());
        std::stable_sort(out.begin() + first[i], out.end(),
                         [](const site_operation& x, const site_operation& y) {
                           return x.allocations > y.allocations;
                         });
      }
      a.sites[i].op = out[first[i]].op;
    }
    first[a.sites.size()] = static_cast<std::uint32_t>(out.size());
  }

 private:
  static constexpr std::uint32_t none = ~std::uint32_t{0};
  std::vector<site_operation> first_of_;
  std::unordered_map<std::uint32_t, std::vector<site_operation>> others_;
};

// A site's place in the sorted list: by allocations, then bytes, descending, then by `site`.
struct sort_key {
  std::uint64_t allocations;
  std::uint64_t bytes;
  std::uint32_t site;
};

// Sorts keys made in `site` order, with a stable radix sort (least significant byte first) over
// the bytes in which the keys differ: of 10^6 sites most have the same few allocations, and a
// sort by comparisons mispredicted most of its branches on them.
void sort_sites(std::vector<sort_key>& keys) {
  if (keys.size() < 2) return;
  // Descending: the complements ascending.
  std::uint64_t differ_allocations = 0;
  std::uint64_t differ_bytes = 0;
  for (const sort_key& k : keys) {
    differ_allocations |= k.allocations ^ keys[0].allocations;
    differ_bytes |= k.bytes ^ keys[0].bytes;
  }
  std::vector<sort_key> other(keys.size());
  std::size_t count[256];
  const auto pass = [&](bool of_allocations, unsigned shift) {
    const auto digit = [&](const sort_key& k) {
      return static_cast<std::size_t>(~(of_allocations ? k.allocations : k.bytes) >> shift & 0xff);
    };
    std::fill(std::begin(count), std::end(count), std::size_t{0});
    for (const sort_key& k : keys) ++count[digit(k)];
    for (std::size_t d = 0, at = 0; d < 256; ++d) at += std::exchange(count[d], at);
    for (const sort_key& k : keys) other[count[digit(k)]++] = k;
    keys.swap(other);
  };
  for (unsigned shift = 0; shift < 64; shift += 8)
    if ((differ_bytes >> shift & 0xff) != 0) pass(false, shift);
  for (unsigned shift = 0; shift < 64; shift += 8)
    if ((differ_allocations >> shift & 0xff) != 0) pass(true, shift);
}

}  // namespace

void build_sites(analysis& a, bool fold) {
  a.sites.clear();
  a.folded = fold;
  if (a.frames == nullptr) return;
  // The stacks grouped (the grouping's hash table is gone once it returns).
  const std::vector<numbered_site> shown = number_sites(a, fold);
  // Sorted by allocations, then bytes, descending, ties in the order first seen: the keys are
  // added up and sorted on their own first, and each site is then made at its place, so that
  // sites are never moved.
  std::vector<sort_key> order(shown.size());
  for (std::size_t i = 0; i < order.size(); ++i)
    order[i] = sort_key{shown[i].allocations, shown[i].bytes, static_cast<std::uint32_t>(i)};
  sort_sites(order);

  a.sites.reserve(shown.size());
  detail::prefault(a.sites.data(), shown.size() * sizeof(site));
  a.sites.resize(shown.size());
  std::vector<std::uint32_t> position(order.size());
  for (std::size_t i = 0; i < order.size(); ++i) {
    position[order[i].site] = static_cast<std::uint32_t>(i);
    const numbered_site& n = shown[order[i].site];
    a.sites[i].stack = frame_list(a.frames, n.first, n.count);
  }
  order = std::vector<sort_key>();
  // With the sites' counters, how many size buckets each site's stacks have (the sizes' counting
  // sort below), and each stack's site in an array of its own: a second pass over 10^6 stacks
  // to read it was a tenth of the time.
  std::vector<std::uint32_t> next(a.sites.size() + 1, 0);
  std::vector<std::uint32_t> site_of(a.stacks.size());
  site_operations ops(a.sites.size());
  for (std::size_t si = 0; si < a.stacks.size(); ++si) {
    stack& st = a.stacks[si];
    if (st.totals.allocations == 0) continue;
    st.site = position[st.site];
    site_of[si] = st.site;
    next[st.site + 1] += st.sizes;
    ops.add(st.site, st.op, st.totals.allocations);
    site& s = a.sites[st.site];
    s.folded_frames = std::max<std::size_t>(s.folded_frames, fold ? st.allocator_frames : 0);
    s.folded_start_frames =
        std::max<std::size_t>(s.folded_start_frames, fold ? st.start_frames : 0);
    add_counters(s.totals, st.totals);
    s.max_live_at_least = std::max(s.max_live_at_least, st.totals.max_live_bytes);
  }
  for (site& s : a.sites) s.max_live_at_least = std::max(s.max_live_at_least, s.totals.peak_bytes);

  // Each site's sizes: its stacks' buckets, placed by site with a counting sort, then each
  // site's sorted and merged in bucket order.
  for (std::size_t i = 0; i < a.sites.size(); ++i) next[i + 1] += next[i];
  std::vector<size_counts::bucket_count> by_site(a.stack_sizes.size());
  for (const stack_bucket& b : a.stack_sizes)
    by_site[next[site_of[b.stack]]++] = size_counts::bucket_count{b.bucket, b.count};
  site_of = std::vector<std::uint32_t>();
  // next[i] is now where site i's buckets end.
  for (std::size_t i = 0, begin = 0; i < a.sites.size(); begin = next[i++])
    merge_buckets(by_site.begin() + static_cast<std::ptrdiff_t>(begin),
                  by_site.begin() + static_cast<std::ptrdiff_t>(next[i]), a.sites[i].sizes);

  ops.finish(a);
}

}  // namespace lowalloc::analyze
