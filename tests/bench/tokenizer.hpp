// tokenizer.hpp — the tokenizer workload of the string benchmarks, shared by bench_string (timings)
// and string_alloc_counts (heap allocations per run), so that both measure exactly the same work.
//
// The text: kTokens tokens of letters separated by a space or by punctuation and a space, made
// from a fixed seed. Token lengths are drawn from a lognormal distribution (mean 8, sigma 0.55 of
// the log: standard deviation ~4.7 characters, ~7% of the tokens longer than 15 characters, ~0.3%
// longer than 31), rounded, 1..kMaxTokenLength. The sweep texts have the same number of tokens, of
// which exactly a given share is longer than 15 characters: short tokens are drawn from the same
// lognormal conditioned on <= 15, long ones conditioned on >= 16 (so most long tokens are 16..24
// characters, as in the tail of the natural text).
//
// The tokenizer scans the text for separators, constructs each token from (pointer, length) with
// emplace_back into a std::vector reserved once for the whole text, and clear()s the vector at
// the end of a run (destroying every token). The string types are the contenders below.
// build_tokens is the same without the scan (the token positions found beforehand): the part of
// the work that the string type decides.
#ifndef LOWALLOC_BENCH_TOKENIZER_HPP
#define LOWALLOC_BENCH_TOKENIZER_HPP

#include <lowalloc/string.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#ifdef LOWALLOC_BENCH_HAVE_BOOST
#include <boost/container/string.hpp>
#endif
#ifdef LOWALLOC_BENCH_HAVE_LLVM
#include <llvm/ADT/SmallString.h>
#include <llvm/ADT/StringRef.h>
#endif

namespace lowalloc_bench {

// --- the text ------------------------------------------------------------------------------------

constexpr std::size_t kTokens = 40000;  // ~360 KB of text: fits in L2 (2 MiB) and L3
constexpr unsigned kTextSeed = 20241122;
constexpr double kMeanLength = 8.0;
constexpr double kSigma = 0.55;               // of the log of the length
constexpr std::size_t kMaxTokenLength = 128;  // never reached in practice (z > 7)
constexpr std::size_t kLong = 15;             // "long" token: more than 15 chars (std::string SSO)

/// The natural text (lognormal lengths) is asked for with this share.
constexpr int kNaturalShare = -1;

struct text {
  std::string bytes;
  std::vector<std::size_t> lengths;  // of the tokens, in order (what the tokenizer must find)
  std::size_t chars = 0;             // sum of the token lengths

  std::size_t count_longer_than(std::size_t n) const {
    return static_cast<std::size_t>(
        std::count_if(lengths.begin(), lengths.end(), [n](std::size_t l) { return l > n; }));
  }
  /// Sum of the token lengths when every token is cut to at most `cap` characters.
  std::size_t chars_capped(std::size_t cap) const {
    std::size_t total = 0;
    for (const std::size_t l : lengths) total += std::min(l, cap);
    return total;
  }
  std::size_t max_length() const { return *std::max_element(lengths.begin(), lengths.end()); }
};

namespace detail {

inline std::size_t draw_length(std::mt19937_64& rng, std::lognormal_distribution<double>& dist,
                               std::size_t lo, std::size_t hi) {
  for (;;) {
    const double x = std::round(dist(rng));
    if (x >= static_cast<double>(lo) && x <= static_cast<double>(hi)) {
      return static_cast<std::size_t>(x);
    }
  }
}

}  // namespace detail

/// The text with lognormal token lengths (long_share_percent == kNaturalShare), or with exactly
/// long_share_percent % of the tokens longer than 15 characters. Same seed, same text.
inline text make_text(int long_share_percent) {
  std::mt19937_64 rng(kTextSeed + static_cast<unsigned>(long_share_percent + 1));
  const double mu = std::log(kMeanLength) - kSigma * kSigma / 2.0;  // mean of the lognormal = 8
  std::lognormal_distribution<double> dist(mu, kSigma);

  text t;
  t.lengths.reserve(kTokens);
  if (long_share_percent == kNaturalShare) {
    for (std::size_t i = 0; i < kTokens; ++i) {
      t.lengths.push_back(detail::draw_length(rng, dist, 1, kMaxTokenLength));
    }
  } else {
    const auto n_long = static_cast<std::size_t>(
        std::llround(static_cast<double>(kTokens) * long_share_percent / 100.0));
    std::vector<bool> is_long(kTokens, false);
    std::fill(is_long.begin(), is_long.begin() + static_cast<std::ptrdiff_t>(n_long), true);
    std::shuffle(is_long.begin(), is_long.end(), rng);
    for (std::size_t i = 0; i < kTokens; ++i) {
      t.lengths.push_back(is_long[i] ? detail::draw_length(rng, dist, kLong + 1, kMaxTokenLength)
                                     : detail::draw_length(rng, dist, 1, kLong));
    }
  }

  // Letters: mostly lower case, a capital now and then at the start of a token.
  static constexpr char lower[] = "etaoinshrdlcumwfgypbvkjxqz";
  std::uniform_int_distribution<int> letter(0, 25);
  std::uniform_int_distribution<int> percent(0, 99);
  t.bytes.reserve(kTokens * 10);
  for (const std::size_t len : t.lengths) {
    t.chars += len;
    const bool capital = percent(rng) < 10;
    for (std::size_t j = 0; j < len; ++j) {
      char c = lower[letter(rng)];
      if (j == 0 && capital) c = static_cast<char>(c - 'a' + 'A');
      t.bytes.push_back(c);
    }
    const int sep = percent(rng);
    if (sep < 80) {
      t.bytes += ' ';
    } else if (sep < 88) {
      t.bytes += ", ";
    } else if (sep < 95) {
      t.bytes += ". ";
    } else if (sep < 98) {
      t.bytes += '\n';
    } else {
      t.bytes += "; ";
    }
  }
  return t;
}

// --- the tokenizer -------------------------------------------------------------------------------

inline const std::array<bool, 256>& separator_table() {
  static const std::array<bool, 256> table = [] {
    std::array<bool, 256> t{};
    for (const char c : std::string_view(" \t\r\n.,;:!?()[]{}\"'")) {
      t[static_cast<unsigned char>(c)] = true;
    }
    return t;
  }();
  return table;
}

/// Calls emit(pointer, length) for every token of `s`, in order.
template <class Emit>
inline void for_each_token(std::string_view s, Emit&& emit) {
  const std::array<bool, 256>& sep = separator_table();
  const char* p = s.data();
  const char* const end = p + s.size();
  for (;;) {
    while (p != end && sep[static_cast<unsigned char>(*p)]) ++p;
    if (p == end) return;
    const char* const begin = p;
    while (p != end && !sep[static_cast<unsigned char>(*p)]) ++p;
    emit(begin, static_cast<std::size_t>(p - begin));
  }
}

/// One run of the tokenizer: every token of `s` into `tokens` (reserved by the caller).
template <class Impl>
inline void tokenize(std::string_view s, std::vector<typename Impl::type>& tokens) {
  for_each_token(s, [&tokens](const char* p, std::size_t n) { Impl::emplace(tokens, p, n); });
}

/// Where the tokens of a text are: (offset, length) pairs, found once by for_each_token.
struct token_span {
  std::uint32_t offset;
  std::uint32_t length;
};

inline std::vector<token_span> find_tokens(std::string_view s) {
  std::vector<token_span> spans;
  for_each_token(s, [&spans, &s](const char* p, std::size_t n) {
    spans.push_back({static_cast<std::uint32_t>(p - s.data()), static_cast<std::uint32_t>(n)});
  });
  return spans;
}

/// The string half of the tokenizer alone: every token of `spans` into `tokens`, no scanning.
template <class Impl>
inline void build_tokens(std::string_view s, const std::vector<token_span>& spans,
                         std::vector<typename Impl::type>& tokens) {
  const char* const base = s.data();
  for (const token_span& t : spans) Impl::emplace(tokens, base + t.offset, t.length);
}

// --- the contenders ------------------------------------------------------------------------------

constexpr std::size_t kNoCap = static_cast<std::size_t>(-1);

/// A string type constructed from (pointer, length). Tokens longer than Cap are cut to Cap
/// characters (fixed_string<32> cannot hold more and would throw std::length_error).
template <class String, std::size_t Cap = kNoCap>
struct pointer_length_impl {
  using type = String;
  static constexpr std::size_t cap = Cap;
  static void emplace(std::vector<String>& v, const char* p, std::size_t n) {
    v.emplace_back(p, n < Cap ? n : Cap);
  }
};

struct std_string_impl : pointer_length_impl<std::string> {
  static constexpr const char* name = "std_string";
  static constexpr const char* display = "std::string";
};

template <std::size_t N>
struct small_string_impl : pointer_length_impl<lowalloc::small_string<N>> {
  static constexpr const char* name = N == 16   ? "small_string_16"
                                      : N == 24 ? "small_string_24"
                                      : N == 32 ? "small_string_32"
                                      : N == 64 ? "small_string_64"
                                                : "small_string";
  static constexpr const char* display = N == 16   ? "lowalloc::small_string<16>"
                                         : N == 24 ? "lowalloc::small_string<24>"
                                         : N == 32 ? "lowalloc::small_string<32>"
                                         : N == 64 ? "lowalloc::small_string<64>"
                                                   : "lowalloc::small_string<N>";
};

// Tokens longer than 32 characters are cut to their first 32 (see docs/benchmarks.md).
struct fixed_string_32_impl : pointer_length_impl<lowalloc::fixed_string<32>, 32> {
  static constexpr const char* name = "fixed_string_32";
  static constexpr const char* display = "lowalloc::fixed_string<32> (tokens cut to 32)";
};

#ifdef LOWALLOC_BENCH_HAVE_BOOST
struct boost_impl : pointer_length_impl<boost::container::string> {
  static constexpr const char* name = "boost";
  static constexpr const char* display = "boost::container::string";
};
#endif

#ifdef LOWALLOC_BENCH_HAVE_LLVM
// llvm::SmallString has no (pointer, length) constructor: it is built from a StringRef.
struct llvm_impl {
  using type = llvm::SmallString<32>;
  static constexpr std::size_t cap = kNoCap;
  static constexpr const char* name = "llvm";
  static constexpr const char* display = "llvm::SmallString<32>";
  static void emplace(std::vector<type>& v, const char* p, std::size_t n) {
    v.emplace_back(llvm::StringRef(p, n));
  }
};
#endif

/// Calls f(tag) for every contender of the tokenizer, std::string first.
template <class F>
void for_each_tokenizer_impl(F f) {
  f(std_string_impl{});
  f(small_string_impl<16>{});
  f(small_string_impl<24>{});
  f(small_string_impl<32>{});
  f(small_string_impl<64>{});
  f(fixed_string_32_impl{});
#ifdef LOWALLOC_BENCH_HAVE_BOOST
  f(boost_impl{});
#endif
#ifdef LOWALLOC_BENCH_HAVE_LLVM
  f(llvm_impl{});
#endif
}

/// The contenders of the long-token sweep.
template <class F>
void for_each_sweep_impl(F f) {
  f(std_string_impl{});
  f(small_string_impl<32>{});
#ifdef LOWALLOC_BENCH_HAVE_BOOST
  f(boost_impl{});
#endif
}

/// The shares of tokens longer than 15 characters in the sweep, in percent.
constexpr std::array<int, 6> kSweepShares = {0, 5, 10, 20, 30, 40};

/// The texts, made once each (the natural one and one per sweep share).
inline const text& cached_text(int long_share_percent) {
  static const text natural = make_text(kNaturalShare);
  static const std::array<text, kSweepShares.size()> sweep = [] {
    std::array<text, kSweepShares.size()> out;
    for (std::size_t i = 0; i < kSweepShares.size(); ++i) out[i] = make_text(kSweepShares[i]);
    return out;
  }();
  if (long_share_percent == kNaturalShare) return natural;
  for (std::size_t i = 0; i < kSweepShares.size(); ++i) {
    if (kSweepShares[i] == long_share_percent) return sweep[i];
  }
  return natural;
}

/// Checks one run: the tokens found are the tokens generated (cut to Impl::cap). Returns "" or
/// what is wrong.
template <class Impl>
std::string check_tokens(const text& t, const std::vector<typename Impl::type>& tokens) {
  if (tokens.size() != t.lengths.size()) {
    return "found " + std::to_string(tokens.size()) + " tokens, generated " +
           std::to_string(t.lengths.size());
  }
  std::size_t chars = 0;
  for (const auto& s : tokens) chars += static_cast<std::size_t>(s.size());
  const std::size_t want = t.chars_capped(Impl::cap);
  if (chars != want) {
    return "tokens hold " + std::to_string(chars) + " chars, expected " + std::to_string(want);
  }
  return "";
}

/// A one-line description of a text, for the benchmark context and the tables.
inline std::string describe(const text& t) {
  const auto pct = [&t](std::size_t n) {
    const double p =
        100.0 * static_cast<double>(t.count_longer_than(n)) / static_cast<double>(t.lengths.size());
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2f%%", p);
    return std::string(buf);
  };
  char mean[32];
  std::snprintf(mean, sizeof mean, "%.2f",
                static_cast<double>(t.chars) / static_cast<double>(t.lengths.size()));
  return std::to_string(t.lengths.size()) + " tokens, " + std::to_string(t.bytes.size()) +
         " bytes, mean length " + mean + ", max " + std::to_string(t.max_length()) +
         ", >15: " + pct(15) + ", >23: " + pct(23) + ", >31: " + pct(31) + ", >32: " + pct(32) +
         ", >63: " + pct(63);
}

}  // namespace lowalloc_bench

#endif  // LOWALLOC_BENCH_TOKENIZER_HPP
