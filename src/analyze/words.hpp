// Singular and plural, once for every text the analyzer and the reports write ("1 allocation",
// "2 allocations"). Not part of lowalloc's API.
#ifndef LOWALLOC_SRC_ANALYZE_WORDS_HPP
#define LOWALLOC_SRC_ANALYZE_WORDS_HPP

#include <cstdint>
#include <string>
#include <string_view>

namespace lowalloc::analyze {

/// `singular` for a count of 1, else `plural` (empty: `singular` + "s").
inline std::string noun(std::uint64_t n, std::string_view singular, std::string_view plural = {}) {
  if (n == 1) return std::string(singular);
  if (!plural.empty()) return std::string(plural);
  std::string out(singular);
  out += 's';
  return out;
}

}  // namespace lowalloc::analyze

#endif
