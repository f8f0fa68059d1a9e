// Site matching: each site keyed at every level by hashes of its frames' names (function and
// file name, hashed from the text, so the same in any trace) and lines, then the places of the
// two traces paired level by level, each level taking only what the levels before left.
#include "analyze/compare.hpp"

#include "analyze/runtime.hpp"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <string>
#include <unordered_map>
#include <utility>

namespace lowalloc::analyze {

namespace {

constexpr std::size_t levels = 4;  // match_kind::same .. innermost_function

using key = place_key;

std::uint64_t mix(std::uint64_t h) noexcept {
  h ^= h >> 31;
  h *= 0xbf58476d1ce4e5b9ULL;
  h ^= h >> 29;
  h *= 0x94d049bb133111ebULL;
  return h ^ (h >> 32);
}

// A key grows by one value per frame: two polynomial hashes with different odd multipliers.
void add(key& k, std::uint64_t v) noexcept {
  k.a = k.a * 0x9e3779b97f4a7c15ULL + v;
  k.b = k.b * 0xc2b2ae3d27d4eb4fULL + (v ^ 0xa4093822299f31d0ULL);
}

struct key_hash {
  std::size_t operator()(const key& k) const noexcept { return static_cast<std::size_t>(k.a); }
};

std::string_view file_name(std::string_view path) noexcept {
  const std::size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

// A frame's name, "function, file name", as a number the same in any trace: a hash of the text.
std::uint64_t name_of(const frame& f) {
  std::string text;
  if (f.function.empty()) {
    // Unsymbolized: the module and the offset, which only an unchanged build repeats.
    text += file_name(f.module);
    text += '+';
    text += std::to_string(f.offset);
  } else {
    text += f.function;
  }
  text += '\0';
  text += file_name(f.file);
  return mix(std::hash<std::string>{}(text));
}

// A frame's line counted from its function's first line, where DWARF says where that is.
std::uint64_t relative_line(const frame& f) noexcept {
  if (f.function_line != 0 && f.line >= f.function_line)
    return (std::uint64_t{1} << 32) | (f.line - f.function_line);
  return f.line;
}

// What a frame adds to the keys of each level, made once per frame of the table.
struct frame_values {
  std::uint64_t name = 0;
  std::uint64_t with_line = 0;
  std::uint64_t with_relative_line = 0;
};

frame_values values_of(const frame& f) {
  frame_values v;
  v.name = name_of(f);
  v.with_line = mix(v.name ^ (std::uint64_t{f.line} + 0x1000193));
  v.with_relative_line = mix(v.name ^ (relative_line(f) * 0x100000001b3ULL + 7));
  return v;
}

}  // namespace

site_places places_of(const analysis& a) {
  site_places out;
  if (a.sites.empty()) return out;
  std::vector<frame_values> values(a.frames != nullptr ? a.frames->frames.size() : 0);
  std::vector<bool> known(values.size(), false);
  std::unordered_map<key, std::uint32_t, key_hash> place_of;
  for (std::size_t i = 0; i < a.sites.size(); ++i) {
    const site& s = a.sites[i];
    std::array<key, levels> k;
    const bool shared = s.stack.table() == a.frames.get();
    for (std::size_t f = 0; f < s.stack.size(); ++f) {
      frame_values v;
      if (shared) {
        const std::uint32_t id = s.stack.id(f);
        if (!known[id]) {
          values[id] = values_of(s.stack[f]);
          known[id] = true;
        }
        v = values[id];
      } else {
        v = values_of(s.stack[f]);
      }
      add(k[0], v.with_line);
      add(k[1], v.with_relative_line);
      add(k[2], v.name);
      if (f == 0) add(k[3], v.name);
    }
    auto [it, added] = place_of.try_emplace(k[0], static_cast<std::uint32_t>(out.places.size()));
    if (added) {
      out.places.emplace_back();
      out.keys.push_back(k);
      out.first_site.push_back(static_cast<std::uint32_t>(i));
    }
    place& p = out.places[it->second];
    p.sites.push_back(static_cast<std::uint32_t>(i));
    add_counters(p.totals, s.totals);
  }
  return out;
}

namespace {

// How far apart two places' lines are: frame by frame from the outermost, then the difference
// in depth.
std::uint64_t distance(const site& x, const site& y) {
  const std::size_t n = std::min(x.stack.size(), y.stack.size());
  std::uint64_t d = 0;
  for (std::size_t k = 1; k <= n; ++k) {
    const long long lx = x.stack[x.stack.size() - k].line;
    const long long ly = y.stack[y.stack.size() - k].line;
    d += static_cast<std::uint64_t>(std::llabs(lx - ly));
  }
  const std::size_t depth = std::max(x.stack.size(), y.stack.size()) - n;
  return d + depth * 100000;
}

// Outermost frame first, by line: the order of the places in the source.
bool source_order(const site& x, const site& y) {
  const std::size_t n = std::min(x.stack.size(), y.stack.size());
  for (std::size_t k = 1; k <= n; ++k) {
    const unsigned lx = x.stack[x.stack.size() - k].line;
    const unsigned ly = y.stack[y.stack.size() - k].line;
    if (lx != ly) return lx < ly;
  }
  return x.stack.size() < y.stack.size();
}

}  // namespace

std::string_view match_kind_key(match_kind k) noexcept {
  switch (k) {
    case match_kind::same:
      return "same";
    case match_kind::relative_line:
      return "relative_line";
    case match_kind::function:
      return "function";
    case match_kind::innermost_function:
      return "innermost_function";
    case match_kind::none:
      return "none";
  }
  return "none";
}

std::string_view match_kind_text(match_kind k) noexcept {
  switch (k) {
    case match_kind::same:
      return "same lines";
    case match_kind::relative_line:
      return "same lines in their functions";
    case match_kind::function:
      return "same functions, lines moved";
    case match_kind::innermost_function:
      return "same innermost function only";
    case match_kind::none:
      return "";
  }
  return "";
}

comparison compare_sites(const analysis& before, const analysis& after) {
  return compare_sites(before, places_of(before), after, places_of(after));
}

comparison compare_sites(const analysis& before, site_places b, const analysis& after,
                         site_places a) {
  std::vector<bool> matched_b(b.places.size(), false);
  std::vector<bool> matched_a(a.places.size(), false);
  comparison out;
  const auto site_b = [&](std::uint32_t p) -> const site& { return before.sites[b.first_site[p]]; };
  const auto site_a = [&](std::uint32_t p) -> const site& { return after.sites[a.first_site[p]]; };
  const auto pair = [&](std::uint32_t pb, std::uint32_t pa, match_kind how) {
    matched_b[pb] = true;
    matched_a[pa] = true;
    out.matches.push_back(place_match{pb, pa, how});
  };

  // Per level, the unmatched places of both sides sorted by key (before's first within a key):
  // a run of one key is a group, paired if both sides have some.
  struct entry {
    key k;
    std::uint32_t side_place;  // top bit: after
  };
  constexpr std::uint32_t after_bit = std::uint32_t{1} << 31;
  std::vector<entry> entries;
  std::vector<std::uint32_t> gb;
  std::vector<std::uint32_t> ga;
  for (std::size_t level = 0; level < levels; ++level) {
    const auto how = static_cast<match_kind>(level);
    entries.clear();
    for (std::uint32_t p = 0; p < b.places.size(); ++p)
      if (!matched_b[p]) entries.push_back(entry{b.keys[p][level], p});
    for (std::uint32_t p = 0; p < a.places.size(); ++p)
      if (!matched_a[p]) entries.push_back(entry{a.keys[p][level], p | after_bit});
    std::sort(entries.begin(), entries.end(), [](const entry& x, const entry& y) {
      if (x.k.a != y.k.a) return x.k.a < y.k.a;
      if (x.k.b != y.k.b) return x.k.b < y.k.b;
      return x.side_place < y.side_place;
    });
    for (std::size_t i = 0; i < entries.size();) {
      std::size_t j = i;
      gb.clear();
      ga.clear();
      for (; j < entries.size() && entries[j].k == entries[i].k; ++j)
        (entries[j].side_place & after_bit ? ga : gb).push_back(entries[j].side_place & ~after_bit);
      i = j;
      if (gb.empty() || ga.empty()) continue;
      if (gb.size() == 1 && ga.size() == 1) {
        pair(gb[0], ga[0], how);
        continue;
      }
      // The innermost function alone is too weak a key to choose among several places.
      if (how == match_kind::innermost_function) continue;
      if (gb.size() == ga.size() || gb.size() * ga.size() > 4096) {
        // As many on each side (code moved together): in source order.
        std::stable_sort(gb.begin(), gb.end(), [&](std::uint32_t x, std::uint32_t y) {
          return source_order(site_b(x), site_b(y));
        });
        std::stable_sort(ga.begin(), ga.end(), [&](std::uint32_t x, std::uint32_t y) {
          return source_order(site_a(x), site_a(y));
        });
        for (std::size_t n = 0; n < gb.size() && n < ga.size(); ++n) pair(gb[n], ga[n], how);
        continue;
      }
      // Some places came or went: the nearest lines first.
      std::vector<std::pair<std::uint64_t, std::pair<std::uint32_t, std::uint32_t>>> costs;
      for (std::uint32_t x : gb)
        for (std::uint32_t y : ga) costs.push_back({distance(site_b(x), site_a(y)), {x, y}});
      std::stable_sort(costs.begin(), costs.end(),
                       [](const auto& p, const auto& q) { return p.first < q.first; });
      for (const auto& c : costs)
        if (!matched_b[c.second.first] && !matched_a[c.second.second])
          pair(c.second.first, c.second.second, how);
    }
  }
  for (std::uint32_t p = 0; p < b.places.size(); ++p)
    if (!matched_b[p]) out.matches.push_back(place_match{p, place_match::none, match_kind::none});
  for (std::uint32_t p = 0; p < a.places.size(); ++p)
    if (!matched_a[p]) out.matches.push_back(place_match{place_match::none, p, match_kind::none});
  out.before = std::move(b.places);
  out.after = std::move(a.places);
  return out;
}

}  // namespace lowalloc::analyze
