// Singular and plural, once for every text the analyzer and the reports write ("1 allocation",
// "2 allocations"), and shares as percentages. Not part of lowalloc's API.
#ifndef LOWALLOC_SRC_ANALYZE_WORDS_HPP
#define LOWALLOC_SRC_ANALYZE_WORDS_HPP

#include <cstdint>
#include <cstdio>
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

/// A share (0 to 1) as a percentage: from 10 % a whole number, below it one decimal; a share
/// that is not all is never "100 %" (99.7 % has its decimal, what rounds to 100.0 is
/// "> 99.9 %"). `zero`: the text of 0 ("0 %" or "0.0 %").
inline std::string percent_text(double share, const char* zero = "0 %") {
  if (share <= 0) return zero;
  if (share >= 1) return "100 %";
  if (share >= 0.9995) return "> 99.9 %";
  const bool whole = share >= 0.1 && share < 0.995;
  char buf[32];
  std::snprintf(buf, sizeof buf, whole ? "%.0f %%" : "%.1f %%", share * 100);
  return buf;
}

}  // namespace lowalloc::analyze

#endif
