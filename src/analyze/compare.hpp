// Two traces side by side: the sites of one found in the other, across two builds of a program
// (`lowalloc diff`, `lowalloc check --baseline`). Addresses and line numbers move when code
// changes, so sites are matched by what a user calls the same place, from the most exact to
// the least: every frame's function, file and line; the same with each line counted from the
// start of its function; the functions and files alone (the nearest lines first when several
// sites share them); the innermost function alone, when it names one site on each side.
// docs/tracer.md#diff says how each level reads.
#ifndef LOWALLOC_SRC_ANALYZE_COMPARE_HPP
#define LOWALLOC_SRC_ANALYZE_COMPARE_HPP

#include "analyze/analysis.hpp"

#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

namespace lowalloc::analyze {

/// How a place of one trace was found in the other.
enum class match_kind : std::uint8_t {
  same,                // every frame's function, file name and line
  relative_line,       // the same, each line counted from its function's first line
  function,            // every frame's function and file name, not the lines
  innermost_function,  // the innermost frame's function and file name, one place on each side
  none,                // new or gone
};

/// "same", "relative_line", "function", "innermost_function", "none" (JSON).
std::string_view match_kind_key(match_kind k) noexcept;
/// "same place", "same line in its function", ... (text).
std::string_view match_kind_text(match_kind k) noexcept;

/// The sites of one analysis that look the same to a user (each frame's function, file name and
/// line) taken together: almost always one site, two when only a directory or a module path
/// tells them apart.
struct place {
  std::vector<std::uint32_t> sites;  // indices in analysis::sites, ascending (the largest first)
  counters totals;
};

struct place_match {
  static constexpr std::uint32_t none = ~std::uint32_t{0};
  std::uint32_t before = none;  // index in comparison::before; none: new
  std::uint32_t after = none;   // index in comparison::after; none: gone
  match_kind how = match_kind::none;
};

struct comparison {
  std::vector<place> before;
  std::vector<place> after;
  /// Every place of both once: the matched pairs, the gone and the new ones, in no order.
  std::vector<place_match> matches;
};

/// A place's key at one level: two independent 64-bit hashes of its frames.
struct place_key {
  std::uint64_t a = 0;
  std::uint64_t b = 0;
  bool operator==(const place_key& o) const noexcept { return a == o.a && b == o.b; }
};

/// One trace's places with their keys at each level (match_kind::same .. innermost_function),
/// made from that trace alone: the two traces' can be made at once, on two threads.
struct site_places {
  std::vector<place> places;
  std::vector<std::array<place_key, 4>> keys;  // per place
  std::vector<std::uint32_t> first_site;       // per place: its first site
};
site_places places_of(const analysis& a);

/// Matches the sites of `before` with those of `after`.
comparison compare_sites(const analysis& before, const analysis& after);
/// The same, with the places already made (`b` of before, `a` of after).
comparison compare_sites(const analysis& before, site_places b, const analysis& after,
                         site_places a);

}  // namespace lowalloc::analyze

#endif
