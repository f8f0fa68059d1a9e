// Symbolization of the distinct stacks (each (module, address) resolved once) and their grouping
// into sites.
#include "analyze/sites.hpp"

#include "analyze/fold.hpp"
#include "analyze/symbolize.hpp"

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>

namespace lowalloc::analyze {

void build_stacks(const recorded_stacks& recorded, const std::vector<recorded_module>& modules,
                  const accounting& acc, const options& opts, analysis& a) {
  std::unique_ptr<detail::symbolizer> sym;
  if (opts.symbolize) sym = std::make_unique<detail::symbolizer>();
  // (symbolizer key, address) -> its frames in a.frames, the inlined calls first.
  std::map<std::pair<std::size_t, std::uint64_t>, std::pair<std::uint32_t, std::uint32_t>> resolved;
  constexpr std::size_t no_key = ~std::size_t{0};
  std::vector<frame> found;
  std::vector<frame> shown;
  const std::vector<accounting::stack_counters>& counted = acc.stacks();
  a.stacks.resize(recorded.stacks.size());
  for (std::size_t si = 0; si < recorded.stacks.size(); ++si) {
    stack& st = a.stacks[si];
    if (si < counted.size()) st.totals = counted[si].c;
    if (st.totals.allocations == 0) continue;  // defined, never used: nothing to show
    const recorded_stacks::span sp = recorded.stacks[si];
    shown.clear();
    for (std::uint32_t k = sp.first; k < sp.first + sp.count; ++k) {
      const std::uint64_t addr = recorded.addresses[k];
      const std::uint32_t m = recorded.modules[k];
      const std::size_t key = m == recorded_stacks::no_module ? no_key : modules[m].symbolizer_key;
      auto [it, inserted] = resolved.try_emplace({key, addr});
      if (inserted) {
        found.clear();
        if (m == recorded_stacks::no_module) {
          frame f;
          f.address = addr;
          found.push_back(std::move(f));
        } else if (sym != nullptr) {
          sym->resolve(key, modules[m].desc, addr, found);
        } else {
          frame f;
          f.address = addr;
          f.module = modules[m].desc.path;
          f.offset = addr - modules[m].desc.bias;
          found.push_back(std::move(f));
        }
        it->second = {static_cast<std::uint32_t>(a.frames.size()),
                      static_cast<std::uint32_t>(found.size())};
        for (frame& f : found) a.frames.push_back(std::move(f));
      }
      for (std::uint32_t f = it->second.first; f < it->second.first + it->second.second; ++f) {
        st.frames.push_back(f);
        shown.push_back(a.frames[f]);
      }
    }
    st.allocator_frames = detail::fold_count(shown);
  }

  // Requested sizes per stack, grouped by stack in bucket order.
  acc.for_each_size([&](std::uint32_t stack_index, std::size_t bucket, std::uint64_t count) {
    a.stack_sizes.push_back(stack_bucket{stack_index, static_cast<std::uint32_t>(bucket), count});
  });
  std::sort(a.stack_sizes.begin(), a.stack_sizes.end(),
            [](const stack_bucket& x, const stack_bucket& y) {
              return x.stack != y.stack ? x.stack < y.stack : x.bucket < y.bucket;
            });
  for (std::size_t i = 0; i < a.stack_sizes.size(); ++i) {
    stack& st = a.stacks[a.stack_sizes[i].stack];
    if (st.sizes == 0) st.first_size = static_cast<std::uint32_t>(i);
    ++st.sizes;
  }
}

void build_sites(analysis& a, bool fold) {
  a.sites.clear();
  std::unordered_map<std::string, std::uint32_t> site_of_key;
  std::string key;
  for (std::size_t si = 0; si < a.stacks.size(); ++si) {
    stack& st = a.stacks[si];
    if (st.totals.allocations == 0) continue;
    const std::size_t folded = fold ? st.allocator_frames : 0;
    // A site is what the user sees: symbolized frames compare by function, file, line and
    // module (two calls on one line are one site), unsymbolized ones by address.
    key.clear();
    for (std::size_t k = folded; k < st.frames.size(); ++k) {
      const frame& f = a.frames[st.frames[k]];
      if (f.function.empty())
        key.append(reinterpret_cast<const char*>(&f.address), sizeof f.address);
      key += f.module;
      key += '\0';
      key += f.function;
      key += '\0';
      key += f.file;
      key += '\0';
      key.append(reinterpret_cast<const char*>(&f.line), sizeof f.line);
      key += f.inlined ? '1' : '0';
    }
    auto [it, inserted] = site_of_key.try_emplace(key, static_cast<std::uint32_t>(a.sites.size()));
    if (inserted) {
      a.sites.emplace_back();
      std::vector<frame>& shown = a.sites.back().stack;
      shown.reserve(st.frames.size() - folded);
      for (std::size_t k = folded; k < st.frames.size(); ++k)
        shown.push_back(a.frames[st.frames[k]]);
    }
    site& s = a.sites[it->second];
    s.stacks.push_back(static_cast<std::uint32_t>(si));
    s.folded_frames = std::max(s.folded_frames, folded);
    const counters& c = st.totals;
    s.totals.allocations += c.allocations;
    s.totals.bytes_allocated += c.bytes_allocated;
    s.totals.frees += c.frees;
    s.totals.temporary += c.temporary;
    s.totals.leaked_allocations += c.leaked_allocations;
    s.totals.leaked_bytes += c.leaked_bytes;
    s.totals.peak_bytes += c.peak_bytes;
    for (std::uint32_t k = st.first_size; k < st.first_size + st.sizes; ++k)
      s.sizes.counts[a.stack_sizes[k].bucket] += a.stack_sizes[k].count;
  }
  std::stable_sort(a.sites.begin(), a.sites.end(), [](const site& x, const site& y) {
    if (x.totals.allocations != y.totals.allocations)
      return x.totals.allocations > y.totals.allocations;
    return x.totals.bytes_allocated > y.totals.bytes_allocated;
  });
  for (std::size_t i = 0; i < a.sites.size(); ++i)
    for (const std::uint32_t si : a.sites[i].stacks)
      a.stacks[si].site = static_cast<std::uint32_t>(i);
}

}  // namespace lowalloc::analyze
