// Site matching: each site keyed at every level by a hash of its frames' names (function and
// file name, numbered once across both traces) and lines, then the places of the two traces
// paired level by level, each level taking only what the levels before left.
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

std::uint64_t mix(std::uint64_t h, std::uint64_t v) noexcept {
  h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  h ^= h >> 31;
  h *= 0xbf58476d1ce4e5b9ULL;
  h ^= h >> 29;
  return h;
}

// Two independent 64-bit hashes: a collision of both is not a concern at 10^7 sites.
struct key {
  std::uint64_t a = 0x243f6a8885a308d3ULL;
  std::uint64_t b = 0x13198a2e03707344ULL;
  void add(std::uint64_t v) noexcept {
    a = mix(a, v);
    b = mix(b, v ^ 0xa4093822299f31d0ULL);
  }
  bool operator==(const key& o) const noexcept { return a == o.a && b == o.b; }
};
struct key_hash {
  std::size_t operator()(const key& k) const noexcept { return static_cast<std::size_t>(k.a); }
};

std::string_view file_name(std::string_view path) noexcept {
  const std::size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

// Numbers for "function, file name" shared by the two traces: a frame's name.
class names {
 public:
  std::uint32_t of(const frame& f) {
    text_.clear();
    if (f.function.empty()) {
      // Unsymbolized: the module and the offset, which only an unchanged build repeats.
      text_ += file_name(f.module);
      text_ += '+';
      text_ += std::to_string(f.offset);
    } else {
      text_ += f.function;
    }
    text_ += '\0';
    text_ += file_name(f.file);
    return ids_.try_emplace(text_, static_cast<std::uint32_t>(ids_.size())).first->second;
  }

 private:
  std::unordered_map<std::string, std::uint32_t> ids_;
  std::string text_;
};

// A frame's line counted from its function's first line, where DWARF says where that is.
std::uint64_t relative_line(const frame& f) noexcept {
  if (f.function_line != 0 && f.line >= f.function_line)
    return (std::uint64_t{1} << 32) | (f.line - f.function_line);
  return f.line;
}

// One trace's places and their keys at each level.
struct side {
  std::vector<place> places;
  std::vector<std::array<key, levels>> keys;  // per place
  std::vector<std::uint32_t> first_site;      // per place: its first site
  std::vector<bool> matched;
};

side places_of(const analysis& a, names& dictionary) {
  side out;
  if (a.sites.empty()) return out;
  // Name numbers per frame of the table, made on first use.
  std::vector<std::uint32_t> name_of(a.frames != nullptr ? a.frames->frames.size() : 0,
                                     ~std::uint32_t{0});
  std::unordered_map<key, std::uint32_t, key_hash> place_of;
  for (std::size_t i = 0; i < a.sites.size(); ++i) {
    const site& s = a.sites[i];
    std::array<key, levels> k;
    for (std::size_t f = 0; f < s.stack.size(); ++f) {
      const frame& fr = s.stack[f];
      std::uint32_t name = 0;
      if (s.stack.table() == a.frames.get()) {
        std::uint32_t& n = name_of[s.stack.id(f)];
        if (n == ~std::uint32_t{0}) n = dictionary.of(fr);
        name = n;
      } else {
        name = dictionary.of(fr);
      }
      k[0].add(name);
      k[0].add(fr.line);
      k[1].add(name);
      k[1].add(relative_line(fr));
      k[2].add(name);
      if (f == 0) k[3].add(name);
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
  out.matched.assign(out.places.size(), false);
  return out;
}

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
  names dictionary;
  side b = places_of(before, dictionary);
  side a = places_of(after, dictionary);
  comparison out;
  const auto site_b = [&](std::uint32_t p) -> const site& { return before.sites[b.first_site[p]]; };
  const auto site_a = [&](std::uint32_t p) -> const site& { return after.sites[a.first_site[p]]; };
  const auto pair = [&](std::uint32_t pb, std::uint32_t pa, match_kind how) {
    b.matched[pb] = true;
    a.matched[pa] = true;
    out.matches.push_back(place_match{pb, pa, how});
  };

  for (std::size_t level = 0; level < levels; ++level) {
    const auto how = static_cast<match_kind>(level);
    // The unmatched places of `after` by key, in place order.
    std::unordered_map<key, std::vector<std::uint32_t>, key_hash> after_by_key;
    for (std::uint32_t p = 0; p < a.places.size(); ++p)
      if (!a.matched[p]) after_by_key[a.keys[p][level]].push_back(p);
    std::unordered_map<key, std::vector<std::uint32_t>, key_hash> before_by_key;
    std::vector<key> order;  // keys in the order of before's places: a stable result
    for (std::uint32_t p = 0; p < b.places.size(); ++p) {
      if (b.matched[p]) continue;
      const key& k = b.keys[p][level];
      if (after_by_key.count(k) == 0) continue;
      std::vector<std::uint32_t>& group = before_by_key[k];
      if (group.empty()) order.push_back(k);
      group.push_back(p);
    }
    for (const key& k : order) {
      std::vector<std::uint32_t>& gb = before_by_key[k];
      std::vector<std::uint32_t>& ga = after_by_key[k];
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
        for (std::size_t i = 0; i < gb.size() && i < ga.size(); ++i) pair(gb[i], ga[i], how);
        continue;
      }
      // Some places came or went: the nearest lines first.
      std::vector<std::pair<std::uint64_t, std::pair<std::uint32_t, std::uint32_t>>> costs;
      for (std::uint32_t x : gb)
        for (std::uint32_t y : ga) costs.push_back({distance(site_b(x), site_a(y)), {x, y}});
      std::stable_sort(costs.begin(), costs.end(),
                       [](const auto& p, const auto& q) { return p.first < q.first; });
      for (const auto& c : costs)
        if (!b.matched[c.second.first] && !a.matched[c.second.second])
          pair(c.second.first, c.second.second, how);
    }
  }
  for (std::uint32_t p = 0; p < b.places.size(); ++p)
    if (!b.matched[p]) out.matches.push_back(place_match{p, place_match::none, match_kind::none});
  for (std::uint32_t p = 0; p < a.places.size(); ++p)
    if (!a.matched[p]) out.matches.push_back(place_match{place_match::none, p, match_kind::none});
  out.before = std::move(b.places);
  out.after = std::move(a.places);
  return out;
}

}  // namespace lowalloc::analyze
