// Random operations applied side by side to a lowalloc string and to std::string, compared after
// every step. Shared by tests/string_differential_test.cpp (choices from a seeded RNG) and
// tests/fuzz/string_fuzz.cpp (choices from the fuzzer's bytes). Not part of lowalloc's API.
//
//   lowalloc_test::rng_source src(42);
//   lowalloc_test::string_ops<lowalloc::small_string<24>> ops;
//   for (int i = 0; i < 1000; ++i)
//     if (!ops.step(src)) report(ops.failure());
//
// The harness owns two strings, `a` and `b`, each with its std::string twin (the model). A step
// applies one operation to one of them (or to both: swap, assignment, comparison, operator+) and
// compares what the two sides observed: the value returned (*this, an iterator as an offset, a
// position, the sign of a comparison, a character, a string's contents) or the type of the
// exception thrown (std::out_of_range, std::length_error, anything else). Then every string is
// checked against its model: size, contents (embedded '\0' included), c_str() termination,
// capacity() >= size(), iterators, at(), and std::hash equal to std::hash<std::string_view>.
//
// Every member and non-member overload of the std::basic_string interface is reached, plus the
// C++20/23 members (starts_with, ends_with, contains, resize_and_overwrite), for which the model
// is a hand-written std equivalent, so that C++17 builds check them too. Positions are 0, size(),
// size() + 1, npos and random; clamped counts 0, npos and random; characters come from a small
// alphabet with '\0' and a negative char, so that finds hit and comparisons see signedness.
//
// Aliasing: pointer, view, iterator and string arguments are often taken from the string being
// modified (s.append(s), s.insert(0, s.c_str() + 2), s.replace(i, n, s.data() + j, k), ...). The
// model never aliases: it runs on a copy and takes its arguments from the old value, so only
// lowalloc's handling of aliasing is under test.
//
// A string whose max_size() is smaller than std::string's (fixed_string<N>): where the model
// succeeds with a result longer than max_size() (or asks for more capacity than that: reserve,
// resize_and_overwrite), the lowalloc string must throw std::length_error and keep its value
// (strong guarantee); the model then keeps its old value too. Where std checks a position and
// throws std::out_of_range, the lowalloc string must throw std::out_of_range as well, as std
// checks positions before lengths.
#ifndef LOWALLOC_TESTS_SUPPORT_STRING_OPS_HPP
#define LOWALLOC_TESTS_SUPPORT_STRING_OPS_HPP

#include <lowalloc/string.hpp>

#include "vector_ops.hpp"  // rng_source, byte_source, input_iter

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <ios>
#include <iterator>
#include <memory>
#include <memory_resource>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#if LOWALLOC_HAS_THREE_WAY_COMPARISON
#include <compare>
#endif

namespace lowalloc_test {

// ---- outcomes ----------------------------------------------------------------------------------

enum class thrown : unsigned char { none, out_of_range, length_error, other };

// Runs f and says which exception, if any, left it.
template <class F>
thrown capture(F&& f) {
  try {
    f();
  } catch (const std::out_of_range&) {
    return thrown::out_of_range;
  } catch (const std::length_error&) {
    return thrown::length_error;
  } catch (...) {
    return thrown::other;
  }
  return thrown::none;
}

// What an operation returned (or threw), in a form both sides can agree on.
struct outcome {
  enum class kind : unsigned char { none, self, offset, size, sign, boolean, character, text };
  thrown ex = thrown::none;
  kind what = kind::none;
  std::size_t value = 0;
  std::string text;

  friend bool operator==(const outcome& x, const outcome& y) {
    return x.ex == y.ex && x.what == y.what && x.value == y.value && x.text == y.text;
  }
  friend bool operator!=(const outcome& x, const outcome& y) { return !(x == y); }
};

// `s` with the unprintable characters escaped, cut at `max` characters.
inline std::string printable(std::string_view s, std::size_t max = 90) {
  static constexpr char hex[] = "0123456789abcdef";
  std::string out = "\"";
  for (std::size_t i = 0; i < s.size() && i < max; ++i) {
    const auto u = static_cast<unsigned char>(s[i]);
    if (u >= 0x20 && u < 0x7f && u != '"' && u != '\\') {
      out += s[i];
    } else {
      out += "\\x";
      out += hex[u >> 4];
      out += hex[u & 15];
    }
  }
  out += s.size() > max ? "\"..." : "\"";
  return out + " (" + std::to_string(s.size()) + ")";
}

inline std::string describe(const outcome& o) {
  switch (o.ex) {
    case thrown::out_of_range:
      return "threw std::out_of_range";
    case thrown::length_error:
      return "threw std::length_error";
    case thrown::other:
      return "threw another exception";
    case thrown::none:
      break;
  }
  switch (o.what) {
    case outcome::kind::none:
      return "returned";
    case outcome::kind::self:
      return "returned *this";
    case outcome::kind::offset:
      return "returned begin() + " + std::to_string(o.value);
    case outcome::kind::size:
      return o.value == std::string::npos ? "returned npos" : "returned " + std::to_string(o.value);
    case outcome::kind::sign:
      return "returned a value of sign " + std::to_string(static_cast<int>(o.value) - 1);
    case outcome::kind::boolean:
      return o.value != 0 ? "returned true" : "returned false";
    case outcome::kind::character:
      return "returned character " + std::to_string(o.value);
    case outcome::kind::text:
      return "returned " + printable(o.text);
  }
  return "?";
}

// A class convertible to std::string_view and not to const char*: reaches the `const T&`
// overloads (append(const T&), find(const T&, pos), ...) the way a user's type does.
struct sv_like {
  std::string_view v;
  operator std::string_view() const noexcept { return v; }  // NOLINT: implicit on purpose
};

// ---- the harness -------------------------------------------------------------------------------

// Stops the current check function with a failure report.
#define LOWALLOC_SOPS_CHECK(cond)                    \
  do {                                               \
    if (!(cond)) return this->fail(#cond, __LINE__); \
  } while (false)

// The operation under test as a generic lambda over `x`: called once with the lowalloc string and
// once with the model (a copy of it).
#define LOWALLOC_SOPS_FN(...) [&](auto& x) -> decltype(auto) { return __VA_ARGS__; }

// A construction as a generic lambda: emplaces into `out` (a std::optional of the lowalloc string
// or of std::string); `side` is the target string of that side, for the arguments.
#define LOWALLOC_SOPS_MAKE(...) \
  [&](auto& out, auto& side) {  \
    static_cast<void>(side);    \
    out.emplace(__VA_ARGS__);   \
  }

template <class S>
class string_ops {
 public:
  using model = std::string;
  static constexpr std::size_t npos = std::string::npos;

  static_assert(std::is_same_v<typename S::value_type, char>);
  static_assert(std::is_same_v<typename S::size_type, std::size_t>);
  static_assert(S::npos == npos);
  static_assert(std::is_convertible_v<const S&, std::string_view>, "implicit string_view");
  static_assert(std::is_nothrow_constructible_v<std::string_view, const S&>);
  static_assert(std::is_nothrow_default_constructible_v<S>);
  static_assert(std::is_nothrow_move_constructible_v<S>);
  static_assert(std::is_nothrow_swappable_v<S>);
  static_assert(std::is_constructible_v<std::string, const S&> &&
                    !std::is_convertible_v<const S&, std::string>,
                "explicit conversion to std::string");

  string_ops() : smax_(S().max_size()), inline_cap_(S().capacity()) {}

  /// Applies one random operation and checks both strings. False on the first mismatch;
  /// failure() then says where. Do not call step() again after a failure.
  template <class Source>
  bool step(Source& src) {
    ++step_;
    op_ = "(none)";
    has_before_ = false;
    // A size regime: the strings are kept near `limit_` characters, which changes now and then so
    // that the inline capacity of every small_string (23, 31, 63) and fixed_string's 64 are
    // crossed often, from both sides.
    if (src.below(128) == 0) {
      static constexpr std::size_t limits[] = {8, 24, 32, 48, 64, 64, 100, 150};
      limit_ = limits[src.below(std::size(limits))];
    }
    bool ok = true;
    const std::size_t which = src.below(16);
    if (which < 11) {
      target t{a_, ra_, b_, rb_};
      ok = single_op(t, src);
    } else if (which < 13) {
      target t{b_, rb_, a_, ra_};
      ok = single_op(t, src);
    } else if (src.below(2) == 0) {
      ok = pair_op(a_, ra_, b_, rb_, src);
    } else {
      ok = pair_op(b_, rb_, a_, ra_, src);
    }
    return ok && check_all();
  }

  const std::string& failure() const { return failure_; }
  std::size_t steps() const { return step_; }

 private:
  // The string an operation applies to, its model, and the other string (for arguments).
  struct target {
    S& s;
    model& m;
    const S& o;
    const model& mo;
  };

  // A run of characters for the pointer, view and iterator arguments: `sp` on the lowalloc side,
  // `mp` on the model's, `n` long (up to the terminating '\0' of the source for the const char*
  // forms). External: both point to the same buffer. From the target: `sp` points into the
  // string under test, `mp` into the model's old value.
  struct piece {
    const char* sp;
    const char* mp;
    std::size_t n;
    const char* of(const S&) const { return sp; }
    const char* of(const model&) const { return mp; }
    std::string_view view(const S&) const { return {sp, n}; }
    std::string_view view(const model&) const { return {mp, n}; }
    sv_like like(const S& x) const { return sv_like{view(x)}; }
    sv_like like(const model& x) const { return sv_like{view(x)}; }
    // A string_view for compare(pos, count, sv[, pos2, count2]), which throws out_of_range:
    // libstdc++ 12 declares std::string's overloads noexcept when T is string_view (they would
    // terminate), so the model gets the same view in a class of its own.
    std::string_view throwing_view(const S& x) const { return view(x); }
    sv_like throwing_view(const model& x) const { return like(x); }
  };

  // A basic_string argument: `s` on the lowalloc side, `m` on the model's.
  struct sref {
    const S* s;
    const model* m;
    const S& of(const S&) const { return *s; }
    const model& of(const model&) const { return *m; }
  };

  // An iterator range argument of one of several kinds, over a piece or over the target itself.
  struct range {
    int kind;
    piece p;
    sref self;  // the target: `s` is the string under test, `m` the model's old value
    std::ptrdiff_t i;
    std::ptrdiff_t j;

    // f(first, last) with the iterators of x's side (x: the lowalloc string or a model).
    template <class X, class F>
    decltype(auto) apply(X& x, F&& f) const {
      using input = input_iter<char>;
      const char* q = p.of(x);
      const auto n = static_cast<std::ptrdiff_t>(p.n);
      switch (kind) {
        case 0:  // const char*
          return f(q, q + n);
        case 1:  // single-pass input iterators
          return f(input(q), input(q + n));
        case 2: {  // the target's const_iterators
          const auto& y = self.of(x);
          return f(y.cbegin() + i, y.cbegin() + j);
        }
        case 3: {  // the target's reverse iterators: not contiguous
          const auto& y = self.of(x);
          return f(y.crbegin() + i, y.crbegin() + j);
        }
        default:  // the target's mutable iterators (the model's: const, the values are the same)
          if constexpr (std::is_same_v<X, S>) {
            return f(x.begin() + i, x.begin() + j);
          } else {
            const auto& y = self.of(x);
            return f(y.cbegin() + i, y.cbegin() + j);
          }
      }
    }
  };

  // ---- checks --------------------------------------------------------------------------------

  bool fail(const char* what, int line) {
    if (failure_.empty()) {
      failure_ = "step " + std::to_string(step_) + ", operation " + op_ +
                 ": check failed (string_ops.hpp:" + std::to_string(line) + "): " + what +
                 "\n  a " + printable(std::string_view(a_.data(), a_.size())) + "\n    model " +
                 printable(ra_) + "\n  b " + printable(std::string_view(b_.data(), b_.size())) +
                 "\n    model " + printable(rb_) + detail_ +
                 (has_before_ ? "\n  the target before the operation: " + printable(before_) : "");
    }
    return false;
  }

  template <class X>
  static bool at_throws(const X& x, std::size_t pos) {
    return capture([&] { static_cast<void>(x.at(pos)); }) == thrown::out_of_range;
  }

  // A string in a valid state (a moved-from one, say): size, termination, capacity agree.
  bool valid(const S& s) {
    LOWALLOC_SOPS_CHECK(s.data() != nullptr && s.data() == s.c_str());
    LOWALLOC_SOPS_CHECK(s.c_str()[s.size()] == '\0');
    LOWALLOC_SOPS_CHECK(s.size() <= s.capacity() && s.capacity() <= s.max_size());
    LOWALLOC_SOPS_CHECK(s.end() - s.begin() == static_cast<std::ptrdiff_t>(s.size()));
    return true;
  }

  // Everything observable about `s` agrees with `m`.
  bool same(const S& s, const model& m) {
    const std::size_t n = m.size();
    LOWALLOC_SOPS_CHECK(s.size() == n && s.length() == n && s.empty() == (n == 0));
    const char* d = s.data();
    LOWALLOC_SOPS_CHECK(d != nullptr && d == s.c_str());
    LOWALLOC_SOPS_CHECK(std::char_traits<char>::compare(d, m.data(), n) == 0);
    LOWALLOC_SOPS_CHECK(d[n] == '\0');
    LOWALLOC_SOPS_CHECK(s.capacity() >= n && s.max_size() >= s.capacity());
    LOWALLOC_SOPS_CHECK(s.max_size() == smax_);
    // fixed_string: capacity() == max_size() == N, always.
    LOWALLOC_SOPS_CHECK(smax_ != inline_cap_ || s.capacity() == smax_);
    LOWALLOC_SOPS_CHECK(s.begin() + static_cast<std::ptrdiff_t>(n) == s.end());
    LOWALLOC_SOPS_CHECK(s.cbegin() == s.begin() && s.cend() == s.end());
    LOWALLOC_SOPS_CHECK(n == 0 || &*s.begin() == d);
    if (n != 0) {
      LOWALLOC_SOPS_CHECK(&s.front() == d && &s.back() == d + (n - 1));
    }
    // The costlier checks on every 8th step.
    if (step_ % 8 == 0) {
      const std::string_view v = s;  // the implicit conversion
      LOWALLOC_SOPS_CHECK(v.data() == d && v.size() == n);
      LOWALLOC_SOPS_CHECK(std::string(s) == m);  // the explicit one
      LOWALLOC_SOPS_CHECK(std::equal(s.rbegin(), s.rend(), m.rbegin(), m.rend()));
      LOWALLOC_SOPS_CHECK(std::equal(s.crbegin(), s.crend(), m.crbegin(), m.crend()));
      for (std::size_t i = 0; i < n; ++i) {
        LOWALLOC_SOPS_CHECK(&s.at(i) == d + i && &s[i] == d + i);
      }
      LOWALLOC_SOPS_CHECK(&s[n] == d + n && s[n] == '\0');
      LOWALLOC_SOPS_CHECK(at_throws(s, n) && at_throws(s, n + 1) && at_throws(s, npos));
      LOWALLOC_SOPS_CHECK(std::hash<S>()(s) == std::hash<std::string_view>()(m));
      static_cast<void>(s.get_allocator());
    }
    return true;
  }

  bool check_all() {
    if (!same(a_, ra_)) return false;
    return same(b_, rb_);
  }

  // ---- running an operation on both sides ----------------------------------------------------

  template <class X, class R>
  static void record(outcome& o, const X& x, R&& r) {
    using D = std::remove_cv_t<std::remove_reference_t<R>>;
    using Str = std::remove_cv_t<X>;
    if constexpr (std::is_lvalue_reference_v<R> && std::is_base_of_v<D, Str>) {
      if (&r == static_cast<const D*>(&x)) {
        o.what = outcome::kind::self;
      } else {
        o.what = outcome::kind::text;
        o.text.assign(r.data(), r.size());
      }
    } else if constexpr (std::is_same_v<D, typename Str::iterator> ||
                         std::is_same_v<D, typename Str::const_iterator>) {
      const typename Str::const_iterator it = r;
      o.what = outcome::kind::offset;
      o.value = static_cast<std::size_t>(it - x.cbegin());
    } else if constexpr (std::is_same_v<D, bool>) {
      o.what = outcome::kind::boolean;
      o.value = r ? 1 : 0;
    } else if constexpr (std::is_same_v<D, char>) {
      o.what = outcome::kind::character;
      o.value = static_cast<unsigned char>(r);
    } else if constexpr (std::is_same_v<D, int>) {
      o.what = outcome::kind::sign;
      o.value = r < 0 ? 0 : r == 0 ? 1 : 2;
    } else if constexpr (std::is_same_v<D, std::size_t>) {
      o.what = outcome::kind::size;
      o.value = r;
    } else {
      o.what = outcome::kind::text;
      o.text.assign(r.data(), r.size());
    }
  }

  template <class X, class F>
  static outcome run(X& x, F& f) {
    outcome o;
    o.ex = capture([&] {
      if constexpr (std::is_void_v<decltype(f(x))>) {
        f(x);
      } else {
        record(o, x, f(x));
      }
    });
    if (o.ex != thrown::none) o = outcome{o.ex, outcome::kind::none, 0, {}};
    return o;
  }

  bool mismatch(const char* what, int line, const outcome& os, const outcome& om) {
    detail_ = "\n  lowalloc " + describe(os) + "\n  std      " + describe(om);
    return fail(what, line);
  }
#define LOWALLOC_SOPS_CHECK_OUTCOME(cond, os, om)          \
  do {                                                     \
    if (!(cond)) return mismatch(#cond, __LINE__, os, om); \
  } while (false)

  // Applies fs to the lowalloc string and fm to a copy of the model, whose arguments come from
  // the model itself (the old value). `need`: the capacity the operation asks for besides its
  // result's size (reserve, resize_and_overwrite).
  template <class FS, class FM>
  bool mutate(target& t, FS&& fs, FM&& fm, std::size_t need = 0) {
    model m2 = t.m;
    const outcome om = run(m2, fm);
    const outcome os = run(t.s, fs);
    before_ = t.m;
    has_before_ = true;
    if (om.ex == thrown::none && std::max(m2.size(), need) > smax_) {
      // Past max_size(): std::length_error, and no effect.
      LOWALLOC_SOPS_CHECK_OUTCOME(os.ex == thrown::length_error, os, om);
      return same(t.s, t.m);
    }
    LOWALLOC_SOPS_CHECK_OUTCOME(os == om, os, om);
    if (om.ex == thrown::none) t.m = std::move(m2);
    return true;
  }
  template <class F>
  bool both(target& t, F&& f, std::size_t need = 0) {
    return mutate(t, f, f, need);
  }

  // A const operation: the same result on both sides.
  template <class FS, class FM>
  bool observe(const target& t, FS&& fs, FM&& fm) {
    const S& s = t.s;
    const model& m = t.m;
    const outcome om = run(m, fm);
    const outcome os = run(s, fs);
    LOWALLOC_SOPS_CHECK_OUTCOME(os == om, os, om);
    return true;
  }
  template <class F>
  bool observe(const target& t, F&& f) {
    return observe(t, f, f);
  }

  // A construction: f(out, side) on both sides. A result longer than max_size() must throw
  // std::length_error. Now and then the new string replaces the target (move assignment).
  template <class Source, class F>
  bool construct(target& t, Source& src, F&& f) {
    std::optional<model> v;
    std::optional<S> u;
    const thrown em = capture([&] { f(v, t.m); });
    const thrown es = capture([&] { f(u, t.s); });
    outcome om{em, outcome::kind::none, 0, {}};
    outcome os{es, outcome::kind::none, 0, {}};
    if (em == thrown::none) om.text = *v;
    if (es == thrown::none) os.text.assign(u->data(), u->size());
    if (em == thrown::none && v->size() > smax_) {
      LOWALLOC_SOPS_CHECK_OUTCOME(es == thrown::length_error, os, om);
      return true;
    }
    LOWALLOC_SOPS_CHECK_OUTCOME(os == om, os, om);
    if (em != thrown::none) return true;
    if (!same(*u, *v)) return false;
    if (src.below(2) == 0) {
      t.s = std::move(*u);
      t.m = std::move(*v);
      if (!valid(*u)) return false;
    }
    return true;
  }

  // ---- choices -------------------------------------------------------------------------------

  template <class Source>
  static char character(Source& src) {
    static constexpr char alphabet[] = {'a', 'b', 'c', 'a', 'b', '\0', 'x', '\xe9'};
    return alphabet[src.below(std::size(alphabet))];
  }
  template <class Source>
  std::size_t text_length(Source& src) const {
    return src.below(3) == 0 ? src.below(limit_ / 4 + 5) : src.below(limit_ + 12);
  }
  template <class Source>
  std::string text(Source& src, std::size_t len) {
    std::string out(len, '\0');
    for (char& ch : out) ch = character(src);
    return out;
  }
  // A position argument: 0, size(), size() + 1, npos, beyond, or inside.
  template <class Source>
  static std::size_t position(Source& src, std::size_t n) {
    switch (src.below(16)) {
      case 0:
      case 1:
        return 0;
      case 2:
      case 3:
        return n;
      case 4:
        return n + 1;
      case 5:
        return npos;
      case 6:
        return n + 2 + src.below(8);
      default:
        return src.below(n + 1);
    }
  }
  // A count the callee clamps (erase, substr, compare, the sub-strings of insert/append/...).
  template <class Source>
  static std::size_t count(Source& src, std::size_t n) {
    switch (src.below(8)) {
      case 0:
        return 0;
      case 1:
        return npos;
      case 2:
        return n;
      default:
        return src.below(n + 3);
    }
  }
  // How many copies of a character to add; npos now and then (std::length_error everywhere).
  template <class Source>
  std::size_t fill_count(Source& src) const {
    if (src.below(64) == 0) return npos;
    return src.below(3) == 0 ? src.below(limit_ + 8) : src.below(limit_ / 4 + 4);
  }
  // An iterator offset in [0, n].
  template <class Source>
  static std::ptrdiff_t offset(Source& src, std::size_t n) {
    switch (src.below(4)) {
      case 0:
        return 0;
      case 1:
        return static_cast<std::ptrdiff_t>(n);
      default:
        return static_cast<std::ptrdiff_t>(src.below(n + 1));
    }
  }
  // [i, j) inside [0, n]. (A pair, not structured bindings: clang 14 cannot capture those.)
  template <class Source>
  static std::pair<std::ptrdiff_t, std::ptrdiff_t> span(Source& src, std::size_t n) {
    const std::size_t i = src.below(n + 1);
    const std::size_t j = i + (src.below(4) == 0 ? n - i : src.below(n - i + 1));
    return {static_cast<std::ptrdiff_t>(i), static_cast<std::ptrdiff_t>(j)};
  }

  // A piece of one of the external buffers (slot 0 or 1), of the target or of the other string.
  template <class Source>
  piece pick_piece(Source& src, const target& t, int slot = 0) {
    // [off, off + len) of a source of n characters; now and then with its terminating '\0'
    // (s.append(s.c_str(), s.size() + 1) is valid).
    const auto sub = [&](const char* sp, const char* mp, std::size_t n) {
      const std::size_t off = src.below(3) == 0 ? 0 : src.below(n + 1);
      const std::size_t k = src.below(16);
      const std::size_t len = k == 0 ? n - off + 1 : k < 6 ? n - off : src.below(n - off + 1);
      return piece{sp + off, mp + off, len};
    };
    switch (src.below(8)) {
      case 0:
      case 1:
      case 2:
      case 3: {
        std::string& e = ext_[slot];
        e = text(src, text_length(src));
        return sub(e.c_str(), e.c_str(), e.size());
      }
      case 4:
      case 5:
      case 6:
        return sub(t.s.c_str(), t.m.c_str(), t.m.size());
      default:
        return sub(t.o.c_str(), t.mo.c_str(), t.mo.size());
    }
  }

  // A basic_string argument: the target itself, the other string, or a fresh one.
  template <class Source>
  sref pick_string(Source& src, const target& t) {
    switch (src.below(4)) {
      case 0:
        return {&t.s, &t.m};
      case 1:
        return {&t.o, &t.mo};
      default:
        tmp_model_ = text(src, std::min(text_length(src), smax_));
        tmp_ = S(tmp_model_.data(), tmp_model_.size());
        return {&tmp_, &tmp_model_};
    }
  }

  template <class Source>
  range pick_range(Source& src, const target& t) {
    range r{static_cast<int>(src.below(5)), pick_piece(src, t), {&t.s, &t.m}, 0, 0};
    const auto ij = span(src, t.m.size());
    const std::ptrdiff_t i = ij.first;
    const std::ptrdiff_t j = ij.second;
    r.i = i;
    r.j = j;
    return r;
  }

  // Calls f(il) with an initializer_list<char> of 0, 1, 3 or 7 characters.
  template <class Source, class F>
  static bool with_list(Source& src, F&& f) {
    char c[7];
    for (char& ch : c) ch = character(src);
    const std::initializer_list<char> l0 = {};
    const std::initializer_list<char> l1 = {c[0]};
    const std::initializer_list<char> l3 = {c[0], c[1], c[2]};
    const std::initializer_list<char> l7 = {c[0], c[1], c[2], c[3], c[4], c[5], c[6]};
    switch (src.below(4)) {
      case 0:
        return f(l0);
      case 1:
        return f(l1);
      case 2:
        return f(l3);
      default:
        return f(l7);
    }
  }

  // Documented: a moved-from lowalloc string is empty (and usable). std::string's state is not
  // looked at. Throws, so that the operation reports another exception than std's.
  template <class X>
  static void moved_from(X& x) {
    if constexpr (std::is_same_v<X, S>) {
      if (!x.empty() || x.c_str()[0] != '\0') throw std::logic_error("moved-from string not empty");
      x = "usable";
      if (x.size() != 6) throw std::logic_error("moved-from string not usable");
    }
  }

  template <class X>
  static auto alloc_of(const X&) {
    return typename X::allocator_type();
  }

  // ---- operations on one string --------------------------------------------------------------

  template <class Source>
  bool single_op(target& t, Source& src) {
    // Past the regime's limit: shrink. Below it: grow, more often the farther below.
    if (t.m.size() > limit_ + 8) return erase_op(t, src, true);
    if (src.below(4) < (t.m.size() < limit_ / 2 ? 3u : t.m.size() < limit_ ? 1u : 0u)) {
      return src.below(2) == 0 ? append_op(t, src) : insert_op(t, src);
    }
    switch (src.below(14)) {
      case 0:
        return construct_op(t, src);
      case 1:
        return assign_op(t, src);
      case 2:
        return insert_op(t, src);
      case 3:
        return erase_op(t, src, false);
      case 4:
        return append_op(t, src);
      case 5:
        return replace_op(t, src);
      case 6:
      case 7:
        return find_op(t, src);
      case 8:
        return compare_op(t, src);
      case 9:
        return access_op(t, src);
      case 10:
      case 11:
        return misc_op(t, src);
      case 12:
        return stream_op(t, src);
      default:
        return affix_op(t, src);
    }
  }

  template <class Source>
  bool construct_op(target& t, Source& src) {
    const bool al = src.below(2) == 0;  // the allocator-extended form
    switch (src.below(18)) {
      case 0: {
        op_ = "S(count, ch[, alloc])";
        const std::size_t k = fill_count(src);
        const char ch = character(src);
        if (al) return construct(t, src, LOWALLOC_SOPS_MAKE(k, ch, alloc_of(side)));
        return construct(t, src, LOWALLOC_SOPS_MAKE(k, ch));
      }
      case 1: {
        op_ = "S(const S&, pos[, alloc])";
        const sref a = pick_string(src, t);
        const std::size_t p = position(src, a.m->size());
        if (al) return construct(t, src, LOWALLOC_SOPS_MAKE(a.of(side), p, alloc_of(side)));
        return construct(t, src, LOWALLOC_SOPS_MAKE(a.of(side), p));
      }
      case 2: {
        op_ = "S(const S&, pos, count[, alloc])";
        const sref a = pick_string(src, t);
        const std::size_t p = position(src, a.m->size());
        const std::size_t k = count(src, a.m->size());
        if (al) return construct(t, src, LOWALLOC_SOPS_MAKE(a.of(side), p, k, alloc_of(side)));
        return construct(t, src, LOWALLOC_SOPS_MAKE(a.of(side), p, k));
      }
      case 3: {
        op_ = "S(const char*, count[, alloc])";
        const piece p = pick_piece(src, t);
        if (al) return construct(t, src, LOWALLOC_SOPS_MAKE(p.of(side), p.n, alloc_of(side)));
        return construct(t, src, LOWALLOC_SOPS_MAKE(p.of(side), p.n));
      }
      case 4: {
        op_ = "S(const char*[, alloc])";
        const piece p = pick_piece(src, t);
        if (al) return construct(t, src, LOWALLOC_SOPS_MAKE(p.of(side), alloc_of(side)));
        return construct(t, src, LOWALLOC_SOPS_MAKE(p.of(side)));
      }
      case 5: {
        op_ = "S t = const char* (implicit)";
        const piece p = pick_piece(src, t);
        return construct(t, src, [&](auto& out, auto& side) {
          using X = std::remove_const_t<std::remove_reference_t<decltype(side)>>;
          X tmp = p.of(side);
          out.emplace(std::move(tmp));
        });
      }
      case 6: {
        op_ = "S(first, last[, alloc])";
        const range r = pick_range(src, t);
        return construct(t, src, [&](auto& out, auto& side) {
          r.apply(side, [&](auto first, auto last) {
            if (al) {
              out.emplace(first, last, alloc_of(side));
            } else {
              out.emplace(first, last);
            }
          });
        });
      }
      case 7: {
        op_ = "S(initializer_list[, alloc])";
        return with_list(src, [&](std::initializer_list<char> il) {
          if (al) return construct(t, src, LOWALLOC_SOPS_MAKE(il, alloc_of(side)));
          return construct(t, src, LOWALLOC_SOPS_MAKE(il));
        });
      }
      case 8: {
        op_ = "S(const S&[, alloc])";
        const sref a = pick_string(src, t);
        if (al) return construct(t, src, LOWALLOC_SOPS_MAKE(a.of(side), alloc_of(side)));
        return construct(t, src, LOWALLOC_SOPS_MAKE(a.of(side)));
      }
      case 9: {
        op_ = "S(S&&[, alloc]) from a copy";
        const sref a = pick_string(src, t);
        return construct(t, src, [&](auto& out, auto& side) {
          using X = std::remove_const_t<std::remove_reference_t<decltype(side)>>;
          X tmp(a.of(side));
          if (al) {
            out.emplace(std::move(tmp), alloc_of(side));
          } else {
            out.emplace(std::move(tmp));
          }
          moved_from(tmp);
        });
      }
      case 10: {
        op_ = "S(string_view[, alloc]) (explicit)";
        const piece p = pick_piece(src, t);
        if (al) return construct(t, src, LOWALLOC_SOPS_MAKE(p.view(side), alloc_of(side)));
        return construct(t, src, LOWALLOC_SOPS_MAKE(p.view(side)));
      }
      case 11: {
        op_ = "S(sv_like)";
        const piece p = pick_piece(src, t);
        return construct(t, src, LOWALLOC_SOPS_MAKE(p.like(side)));
      }
      case 12: {
        op_ = "S(string_view, pos, count[, alloc])";
        const piece p = pick_piece(src, t);
        const std::size_t q = position(src, p.n);
        const std::size_t k = count(src, p.n);
        if (al) return construct(t, src, LOWALLOC_SOPS_MAKE(p.view(side), q, k, alloc_of(side)));
        return construct(t, src, LOWALLOC_SOPS_MAKE(p.view(side), q, k));
      }
      case 13: {
        op_ = "S(const std::string&)";
        ext_[0] = text(src, text_length(src));
        return construct(t, src, LOWALLOC_SOPS_MAKE(ext_[0]));
      }
      case 14: {
        op_ = "S(const std::string&, pos[, count])";
        ext_[0] = text(src, text_length(src));
        const std::size_t q = position(src, ext_[0].size());
        const std::size_t k = count(src, ext_[0].size());
        if (src.below(2) == 0) return construct(t, src, LOWALLOC_SOPS_MAKE(ext_[0], q));
        return construct(t, src, LOWALLOC_SOPS_MAKE(ext_[0], q, k));
      }
      case 15: {
        op_ = "S()[, alloc]";
        if (al) return construct(t, src, LOWALLOC_SOPS_MAKE(alloc_of(side)));
        return construct(t, src, [&](auto& out, auto&) { out.emplace(); });
      }
      case 16: {
        op_ = "std::string(s), std::pmr::string(s) (explicit), string_view sv = s";
        const std::string x1(t.s);
        const std::string x2 = static_cast<std::string>(t.s);
        const std::pmr::string x3(t.s);
        const std::string_view v = t.s;
        LOWALLOC_SOPS_CHECK(x1 == t.m && x2 == t.m && v == t.m && std::string_view(x3) == t.m);
        return true;
      }
      default: {
        op_ = "S(first, last) of std::string iterators";
        ext_[0] = text(src, text_length(src));
        const auto ij = span(src, ext_[0].size());
        const std::ptrdiff_t i = ij.first;
        const std::ptrdiff_t j = ij.second;
        const auto first = ext_[0].cbegin() + i;
        const auto last = ext_[0].cbegin() + j;
        return construct(t, src, LOWALLOC_SOPS_MAKE(first, last));
      }
    }
  }

  template <class Source>
  bool assign_op(target& t, Source& src) {
    switch (src.below(18)) {
      case 0: {
        op_ = "assign(count, ch)";
        const std::size_t k = fill_count(src);
        const char ch = character(src);
        return both(t, LOWALLOC_SOPS_FN(x.assign(k, ch)));
      }
      case 1: {
        op_ = "assign(const S&)";
        const sref a = pick_string(src, t);
        return both(t, LOWALLOC_SOPS_FN(x.assign(a.of(x))));
      }
      case 2: {
        op_ = "assign(const S&, pos[, count])";
        const sref a = pick_string(src, t);
        const std::size_t p = position(src, a.m->size());
        const std::size_t k = count(src, a.m->size());
        if (src.below(3) == 0) return both(t, LOWALLOC_SOPS_FN(x.assign(a.of(x), p)));
        return both(t, LOWALLOC_SOPS_FN(x.assign(a.of(x), p, k)));
      }
      case 3: {
        op_ = "assign(S&&) from a copy";
        const sref a = pick_string(src, t);
        return both(t, [&](auto& x) -> decltype(auto) {
          std::remove_reference_t<decltype(x)> tmp(a.of(x));
          decltype(auto) r = x.assign(std::move(tmp));
          moved_from(tmp);
          return r;
        });
      }
      case 4: {
        op_ = "assign(const char*, count)";
        const piece p = pick_piece(src, t);
        return both(t, LOWALLOC_SOPS_FN(x.assign(p.of(x), p.n)));
      }
      case 5: {
        op_ = "assign(const char*)";
        const piece p = pick_piece(src, t);
        return both(t, LOWALLOC_SOPS_FN(x.assign(p.of(x))));
      }
      case 6: {
        op_ = "assign(first, last)";
        const range r = pick_range(src, t);
        return both(t, LOWALLOC_SOPS_FN(r.apply(x, [&](auto f0, auto f1) -> decltype(auto) {
                      return x.assign(f0, f1);
                    })));
      }
      case 7: {
        op_ = "assign(initializer_list)";
        return with_list(src, [&](std::initializer_list<char> il) {
          return both(t, LOWALLOC_SOPS_FN(x.assign(il)));
        });
      }
      case 8: {
        op_ = "assign(string_view)";
        const piece p = pick_piece(src, t);
        return both(t, LOWALLOC_SOPS_FN(x.assign(p.view(x))));
      }
      case 9: {
        op_ = "assign(sv_like / std::string)";
        const piece p = pick_piece(src, t);
        if (src.below(2) == 0) return both(t, LOWALLOC_SOPS_FN(x.assign(p.like(x))));
        ext_[1].assign(p.mp, p.n);
        return both(t, LOWALLOC_SOPS_FN(x.assign(ext_[1])));
      }
      case 10: {
        op_ = "assign(string_view, pos[, count])";
        const piece p = pick_piece(src, t);
        const std::size_t q = position(src, p.n);
        const std::size_t k = count(src, p.n);
        if (src.below(3) == 0) return both(t, LOWALLOC_SOPS_FN(x.assign(p.view(x), q)));
        return both(t, LOWALLOC_SOPS_FN(x.assign(p.view(x), q, k)));
      }
      case 11: {
        op_ = "assign(2, 120) (integers: count and character, not iterators)";
        return both(t, LOWALLOC_SOPS_FN(x.assign(2, 120)));
      }
      case 12: {
        op_ = "operator=(const S&)";
        const sref a = pick_string(src, t);
        return both(t, LOWALLOC_SOPS_FN(x = a.of(x)));
      }
      case 13: {
        op_ = "operator=(S&&) from a copy";
        const sref a = pick_string(src, t);
        return both(t, [&](auto& x) -> decltype(auto) {
          std::remove_reference_t<decltype(x)> tmp(a.of(x));
          decltype(auto) r = (x = std::move(tmp));
          moved_from(tmp);
          return r;
        });
      }
      case 14: {
        op_ = "operator=(const char*)";
        const piece p = pick_piece(src, t);
        return both(t, LOWALLOC_SOPS_FN(x = p.of(x)));
      }
      case 15: {
        op_ = "operator=(char)";
        const char ch = character(src);
        return both(t, LOWALLOC_SOPS_FN(x = ch));
      }
      case 16: {
        op_ = "operator=(initializer_list)";
        return with_list(
            src, [&](std::initializer_list<char> il) { return both(t, LOWALLOC_SOPS_FN(x = il)); });
      }
      default: {
        op_ = "operator=(string_view / sv_like / std::string)";
        const piece p = pick_piece(src, t);
        switch (src.below(3)) {
          case 0:
            return both(t, LOWALLOC_SOPS_FN(x = p.view(x)));
          case 1:
            return both(t, LOWALLOC_SOPS_FN(x = p.like(x)));
          default:
            ext_[1].assign(p.mp, p.n);
            return both(t, LOWALLOC_SOPS_FN(x = ext_[1]));
        }
      }
    }
  }

  template <class Source>
  bool insert_op(target& t, Source& src) {
    const std::size_t n = t.m.size();
    const std::size_t p = position(src, n);
    const std::ptrdiff_t d = offset(src, n);
    switch (src.below(13)) {
      case 0: {
        op_ = "insert(pos, count, ch)";
        const std::size_t k = fill_count(src);
        const char ch = character(src);
        return both(t, LOWALLOC_SOPS_FN(x.insert(p, k, ch)));
      }
      case 1: {
        op_ = "insert(pos, const char*)";
        const piece q = pick_piece(src, t);
        return both(t, LOWALLOC_SOPS_FN(x.insert(p, q.of(x))));
      }
      case 2: {
        op_ = "insert(pos, const char*, count)";
        const piece q = pick_piece(src, t);
        return both(t, LOWALLOC_SOPS_FN(x.insert(p, q.of(x), q.n)));
      }
      case 3: {
        op_ = "insert(pos, const S&)";
        const sref a = pick_string(src, t);
        return both(t, LOWALLOC_SOPS_FN(x.insert(p, a.of(x))));
      }
      case 4: {
        op_ = "insert(pos, const S&, subpos[, sublen])";
        const sref a = pick_string(src, t);
        const std::size_t q = position(src, a.m->size());
        const std::size_t k = count(src, a.m->size());
        if (src.below(3) == 0) return both(t, LOWALLOC_SOPS_FN(x.insert(p, a.of(x), q)));
        return both(t, LOWALLOC_SOPS_FN(x.insert(p, a.of(x), q, k)));
      }
      case 5: {
        op_ = "insert(const_iterator, ch)";
        const char ch = character(src);
        return both(t, LOWALLOC_SOPS_FN(x.insert(x.cbegin() + d, ch)));
      }
      case 6: {
        op_ = "insert(const_iterator, count, ch)";
        const std::size_t k = fill_count(src);
        const char ch = character(src);
        return both(t, LOWALLOC_SOPS_FN(x.insert(x.cbegin() + d, k, ch)));
      }
      case 7: {
        op_ = "insert(const_iterator, first, last)";
        const range r = pick_range(src, t);
        return both(t, LOWALLOC_SOPS_FN(r.apply(x, [&](auto f0, auto f1) -> decltype(auto) {
                      return x.insert(x.cbegin() + d, f0, f1);
                    })));
      }
      case 8: {
        op_ = "insert(const_iterator, initializer_list)";
        return with_list(src, [&](std::initializer_list<char> il) {
          return both(t, LOWALLOC_SOPS_FN(x.insert(x.cbegin() + d, il)));
        });
      }
      case 9: {
        op_ = "insert(pos, string_view)";
        const piece q = pick_piece(src, t);
        return both(t, LOWALLOC_SOPS_FN(x.insert(p, q.view(x))));
      }
      case 10: {
        op_ = "insert(pos, sv_like / std::string)";
        const piece q = pick_piece(src, t);
        if (src.below(2) == 0) return both(t, LOWALLOC_SOPS_FN(x.insert(p, q.like(x))));
        ext_[1].assign(q.mp, q.n);
        return both(t, LOWALLOC_SOPS_FN(x.insert(p, ext_[1])));
      }
      case 11: {
        op_ = "insert(pos, string_view, subpos[, sublen])";
        const piece q = pick_piece(src, t);
        const std::size_t sp = position(src, q.n);
        const std::size_t k = count(src, q.n);
        if (src.below(3) == 0) return both(t, LOWALLOC_SOPS_FN(x.insert(p, q.view(x), sp)));
        return both(t, LOWALLOC_SOPS_FN(x.insert(p, q.view(x), sp, k)));
      }
      default: {
        op_ = "insert(begin() + d, x[i]) (a character of the string itself)";
        if (n == 0) return true;
        const std::size_t i = src.below(n);
        return both(t, LOWALLOC_SOPS_FN(x.insert(x.begin() + d, t.m[i])));
      }
    }
  }

  template <class Source>
  bool erase_op(target& t, Source& src, bool shrink) {
    const std::size_t n = t.m.size();
    switch (src.below(shrink ? 9 : 12)) {
      case 0: {
        op_ = "erase(pos[, count])";
        const std::size_t p = position(src, n);
        const std::size_t k = count(src, n);
        if (src.below(3) == 0) return both(t, LOWALLOC_SOPS_FN(x.erase(p)));
        return both(t, LOWALLOC_SOPS_FN(x.erase(p, k)));
      }
      case 1: {
        op_ = "erase(const_iterator)";
        if (n == 0) return true;
        const auto d = static_cast<std::ptrdiff_t>(src.below(n));
        return both(t, LOWALLOC_SOPS_FN(x.erase(x.cbegin() + d)));
      }
      case 2: {
        op_ = "erase(first, last)";
        const auto ij = span(src, n);
        const std::ptrdiff_t i = ij.first;
        const std::ptrdiff_t j = ij.second;
        return both(t, LOWALLOC_SOPS_FN(x.erase(x.cbegin() + i, x.cbegin() + j)));
      }
      case 3: {
        op_ = "pop_back()";
        if (n == 0) return true;
        return both(t, [&](auto& x) { x.pop_back(); });
      }
      case 4: {
        op_ = "resize(count) (shorter)";
        const std::size_t k = src.below(n + 1);
        return both(t, [&](auto& x) { x.resize(k); });
      }
      case 5: {
        op_ = "resize(count, ch) (shorter)";
        const std::size_t k = src.below(n + 1);
        const char ch = character(src);
        return both(t, [&](auto& x) { x.resize(k, ch); });
      }
      case 6: {
        op_ = "erase(s, ch) (non-member, by ADL or as std::erase)";
        const char ch = src.below(2) == 0 && n != 0 ? t.m[src.below(n)] : character(src);
        const bool qualified = src.below(2) == 0;
        return mutate(
            t, [&](S& x) { return qualified ? std_erase(x, ch) : erase(x, ch); },
            [&](model& x) {
              const auto it = std::remove(x.begin(), x.end(), ch);
              const auto removed = static_cast<std::size_t>(x.end() - it);
              x.erase(it, x.end());
              return removed;
            });
      }
      case 7: {
        op_ = "erase_if(s, pred) (non-member, by ADL or as std::erase_if)";
        const char lo = character(src);
        const auto pred = [lo](char ch) { return ch <= lo; };
        const bool qualified = src.below(2) == 0;
        return mutate(
            t, [&](S& x) { return qualified ? std_erase_if(x, pred) : erase_if(x, pred); },
            [&](model& x) {
              const auto it = std::remove_if(x.begin(), x.end(), pred);
              const auto removed = static_cast<std::size_t>(x.end() - it);
              x.erase(it, x.end());
              return removed;
            });
      }
      case 8: {
        op_ = "clear()";
        return both(t, [&](auto& x) { x.clear(); });
      }
      case 9: {
        op_ = "erase()";
        return both(t, LOWALLOC_SOPS_FN(x.erase()));
      }
      case 10: {
        op_ = "resize(count)";
        const std::size_t k = src.below(32) == 0 ? npos : src.below(limit_ + 16);
        return both(t, [&](auto& x) { x.resize(k); });
      }
      default: {
        op_ = "resize(count, ch)";
        const std::size_t k = src.below(32) == 0 ? npos : src.below(limit_ + 16);
        const char ch = character(src);
        return both(t, [&](auto& x) { x.resize(k, ch); });
      }
    }
  }

  template <class Source>
  bool append_op(target& t, Source& src) {
    switch (src.below(17)) {
      case 0: {
        op_ = "append(count, ch)";
        const std::size_t k = fill_count(src);
        const char ch = character(src);
        return both(t, LOWALLOC_SOPS_FN(x.append(k, ch)));
      }
      case 1: {
        op_ = "append(const S&)";
        const sref a = pick_string(src, t);
        return both(t, LOWALLOC_SOPS_FN(x.append(a.of(x))));
      }
      case 2: {
        op_ = "append(const S&, pos[, count])";
        const sref a = pick_string(src, t);
        const std::size_t p = position(src, a.m->size());
        const std::size_t k = count(src, a.m->size());
        if (src.below(3) == 0) return both(t, LOWALLOC_SOPS_FN(x.append(a.of(x), p)));
        return both(t, LOWALLOC_SOPS_FN(x.append(a.of(x), p, k)));
      }
      case 3: {
        op_ = "append(const char*, count)";
        const piece p = pick_piece(src, t);
        return both(t, LOWALLOC_SOPS_FN(x.append(p.of(x), p.n)));
      }
      case 4: {
        op_ = "append(const char*)";
        const piece p = pick_piece(src, t);
        return both(t, LOWALLOC_SOPS_FN(x.append(p.of(x))));
      }
      case 5: {
        op_ = "append(first, last)";
        const range r = pick_range(src, t);
        return both(t, LOWALLOC_SOPS_FN(r.apply(x, [&](auto f0, auto f1) -> decltype(auto) {
                      return x.append(f0, f1);
                    })));
      }
      case 6: {
        op_ = "append(initializer_list)";
        return with_list(src, [&](std::initializer_list<char> il) {
          return both(t, LOWALLOC_SOPS_FN(x.append(il)));
        });
      }
      case 7: {
        op_ = "append(string_view / sv_like / std::string)";
        const piece p = pick_piece(src, t);
        switch (src.below(3)) {
          case 0:
            return both(t, LOWALLOC_SOPS_FN(x.append(p.view(x))));
          case 1:
            return both(t, LOWALLOC_SOPS_FN(x.append(p.like(x))));
          default:
            ext_[1].assign(p.mp, p.n);
            return both(t, LOWALLOC_SOPS_FN(x.append(ext_[1])));
        }
      }
      case 8: {
        op_ = "append(string_view, pos[, count])";
        const piece p = pick_piece(src, t);
        const std::size_t q = position(src, p.n);
        const std::size_t k = count(src, p.n);
        if (src.below(3) == 0) return both(t, LOWALLOC_SOPS_FN(x.append(p.view(x), q)));
        return both(t, LOWALLOC_SOPS_FN(x.append(p.view(x), q, k)));
      }
      case 9: {
        op_ = "operator+=(const S&)";
        const sref a = pick_string(src, t);
        return both(t, LOWALLOC_SOPS_FN(x += a.of(x)));
      }
      case 10: {
        op_ = "operator+=(char)";
        const char ch = character(src);
        return both(t, LOWALLOC_SOPS_FN(x += ch));
      }
      case 11: {
        op_ = "operator+=(const char*)";
        const piece p = pick_piece(src, t);
        return both(t, LOWALLOC_SOPS_FN(x += p.of(x)));
      }
      case 12: {
        op_ = "operator+=(initializer_list)";
        return with_list(src, [&](std::initializer_list<char> il) {
          return both(t, LOWALLOC_SOPS_FN(x += il));
        });
      }
      case 13: {
        op_ = "operator+=(string_view / sv_like / std::string)";
        const piece p = pick_piece(src, t);
        switch (src.below(3)) {
          case 0:
            return both(t, LOWALLOC_SOPS_FN(x += p.view(x)));
          case 1:
            return both(t, LOWALLOC_SOPS_FN(x += p.like(x)));
          default:
            ext_[1].assign(p.mp, p.n);
            return both(t, LOWALLOC_SOPS_FN(x += ext_[1]));
        }
      }
      case 14: {
        op_ = "append(3, 65) (integers: count and character, not iterators)";
        return both(t, LOWALLOC_SOPS_FN(x.append(3, 65)));
      }
      default: {
        op_ = "push_back(ch)";
        const char ch = character(src);
        return both(t, [&](auto& x) { x.push_back(ch); });
      }
    }
  }

  template <class Source>
  bool replace_op(target& t, Source& src) {
    const std::size_t n = t.m.size();
    const std::size_t p = position(src, n);
    const std::size_t k = count(src, n);
    const auto ij = span(src, n);
    const std::ptrdiff_t i = ij.first;
    const std::ptrdiff_t j = ij.second;
    const bool by_iter = src.below(2) == 0;  // replace(first, last, ...) rather than (pos, count)
    switch (src.below(10)) {
      case 0: {
        const sref a = pick_string(src, t);
        if (by_iter) {
          op_ = "replace(first, last, const S&)";
          return both(t, LOWALLOC_SOPS_FN(x.replace(x.cbegin() + i, x.cbegin() + j, a.of(x))));
        }
        op_ = "replace(pos, count, const S&)";
        return both(t, LOWALLOC_SOPS_FN(x.replace(p, k, a.of(x))));
      }
      case 1: {
        op_ = "replace(pos, count, const S&, pos2[, count2])";
        const sref a = pick_string(src, t);
        const std::size_t q = position(src, a.m->size());
        const std::size_t k2 = count(src, a.m->size());
        if (by_iter) return both(t, LOWALLOC_SOPS_FN(x.replace(p, k, a.of(x), q)));
        return both(t, LOWALLOC_SOPS_FN(x.replace(p, k, a.of(x), q, k2)));
      }
      case 2: {
        op_ = "replace(first, last, first2, last2)";
        const range r = pick_range(src, t);
        return both(t, LOWALLOC_SOPS_FN(r.apply(x, [&](auto f0, auto f1) -> decltype(auto) {
                      return x.replace(x.cbegin() + i, x.cbegin() + j, f0, f1);
                    })));
      }
      case 3: {
        const piece q = pick_piece(src, t);
        if (by_iter) {
          op_ = "replace(first, last, const char*, count2)";
          return both(t, LOWALLOC_SOPS_FN(x.replace(x.cbegin() + i, x.cbegin() + j, q.of(x), q.n)));
        }
        op_ = "replace(pos, count, const char*, count2)";
        return both(t, LOWALLOC_SOPS_FN(x.replace(p, k, q.of(x), q.n)));
      }
      case 4: {
        const piece q = pick_piece(src, t);
        if (by_iter) {
          op_ = "replace(first, last, const char*)";
          return both(t, LOWALLOC_SOPS_FN(x.replace(x.cbegin() + i, x.cbegin() + j, q.of(x))));
        }
        op_ = "replace(pos, count, const char*)";
        return both(t, LOWALLOC_SOPS_FN(x.replace(p, k, q.of(x))));
      }
      case 5: {
        const std::size_t k2 = fill_count(src);
        const char ch = character(src);
        if (by_iter) {
          op_ = "replace(first, last, count2, ch)";
          return both(t, LOWALLOC_SOPS_FN(x.replace(x.cbegin() + i, x.cbegin() + j, k2, ch)));
        }
        op_ = "replace(pos, count, count2, ch)";
        return both(t, LOWALLOC_SOPS_FN(x.replace(p, k, k2, ch)));
      }
      case 6: {
        op_ = "replace(first, last, initializer_list)";
        return with_list(src, [&](std::initializer_list<char> il) {
          return both(t, LOWALLOC_SOPS_FN(x.replace(x.cbegin() + i, x.cbegin() + j, il)));
        });
      }
      case 7: {
        const piece q = pick_piece(src, t);
        if (by_iter) {
          op_ = "replace(first, last, string_view)";
          return both(t, LOWALLOC_SOPS_FN(x.replace(x.cbegin() + i, x.cbegin() + j, q.view(x))));
        }
        op_ = "replace(pos, count, string_view)";
        return both(t, LOWALLOC_SOPS_FN(x.replace(p, k, q.view(x))));
      }
      case 8: {
        const piece q = pick_piece(src, t);
        if (by_iter) {
          op_ = "replace(first, last, sv_like)";
          return both(t, LOWALLOC_SOPS_FN(x.replace(x.cbegin() + i, x.cbegin() + j, q.like(x))));
        }
        op_ = "replace(pos, count, std::string) (the string_view-convertible overload)";
        ext_[1].assign(q.mp, q.n);
        return both(t, LOWALLOC_SOPS_FN(x.replace(p, k, ext_[1])));
      }
      default: {
        op_ = "replace(pos, count, string_view, pos2[, count2])";
        const piece q = pick_piece(src, t);
        const std::size_t q2 = position(src, q.n);
        const std::size_t k2 = count(src, q.n);
        if (by_iter) return both(t, LOWALLOC_SOPS_FN(x.replace(p, k, q.view(x), q2)));
        return both(t, LOWALLOC_SOPS_FN(x.replace(p, k, q.view(x), q2, k2)));
      }
    }
  }

  // One of the six find functions, with the arguments given.
  template <class X, class... A>
  static std::size_t find_fn(std::size_t fn, const X& x, const A&... a) {
    switch (fn) {
      case 0:
        return x.find(a...);
      case 1:
        return x.rfind(a...);
      case 2:
        return x.find_first_of(a...);
      case 3:
        return x.find_last_of(a...);
      case 4:
        return x.find_first_not_of(a...);
      default:
        return x.find_last_not_of(a...);
    }
  }

  template <class Source>
  bool find_op(target& t, Source& src) {
    static constexpr const char* names[] = {
        "find", "rfind", "find_first_of", "find_last_of", "find_first_not_of", "find_last_not_of"};
    const std::size_t fn = src.below(6);
    op_ = names[fn];
    const std::size_t p = position(src, t.m.size());
    const bool dflt = src.below(4) == 0;  // the default position
    switch (src.below(6)) {
      case 0: {
        const sref a = pick_string(src, t);
        if (dflt) return observe(t, LOWALLOC_SOPS_FN(find_fn(fn, x, a.of(x))));
        return observe(t, LOWALLOC_SOPS_FN(find_fn(fn, x, a.of(x), p)));
      }
      case 1: {
        const piece q = pick_piece(src, t);
        return observe(t, LOWALLOC_SOPS_FN(find_fn(fn, x, q.of(x), p, q.n)));
      }
      case 2: {
        const piece q = pick_piece(src, t);
        if (dflt) return observe(t, LOWALLOC_SOPS_FN(find_fn(fn, x, q.of(x))));
        return observe(t, LOWALLOC_SOPS_FN(find_fn(fn, x, q.of(x), p)));
      }
      case 3: {
        const char ch =
            src.below(2) == 0 && !t.m.empty() ? t.m[src.below(t.m.size())] : character(src);
        if (dflt) return observe(t, LOWALLOC_SOPS_FN(find_fn(fn, x, ch)));
        return observe(t, LOWALLOC_SOPS_FN(find_fn(fn, x, ch, p)));
      }
      case 4: {
        const piece q = pick_piece(src, t);
        if (dflt) return observe(t, LOWALLOC_SOPS_FN(find_fn(fn, x, q.view(x))));
        return observe(t, LOWALLOC_SOPS_FN(find_fn(fn, x, q.view(x), p)));
      }
      default: {
        const piece q = pick_piece(src, t);
        if (src.below(2) == 0) return observe(t, LOWALLOC_SOPS_FN(find_fn(fn, x, q.like(x), p)));
        ext_[1].assign(q.mp, q.n);
        return observe(t, LOWALLOC_SOPS_FN(find_fn(fn, x, ext_[1], p)));
      }
    }
  }

  template <class Source>
  bool compare_op(target& t, Source& src) {
    const std::size_t n = t.m.size();
    const std::size_t p = position(src, n);
    const std::size_t k = count(src, n);
    switch (src.below(10)) {
      case 0: {
        op_ = "compare(const S&)";
        const sref a = pick_string(src, t);
        return observe(t, LOWALLOC_SOPS_FN(x.compare(a.of(x))));
      }
      case 1: {
        op_ = "compare(pos1, count1, const S&)";
        const sref a = pick_string(src, t);
        return observe(t, LOWALLOC_SOPS_FN(x.compare(p, k, a.of(x))));
      }
      case 2: {
        op_ = "compare(pos1, count1, const S&, pos2[, count2])";
        const sref a = pick_string(src, t);
        const std::size_t q = position(src, a.m->size());
        const std::size_t k2 = count(src, a.m->size());
        if (src.below(3) == 0) return observe(t, LOWALLOC_SOPS_FN(x.compare(p, k, a.of(x), q)));
        return observe(t, LOWALLOC_SOPS_FN(x.compare(p, k, a.of(x), q, k2)));
      }
      case 3: {
        op_ = "compare(const char*)";
        const piece q = pick_piece(src, t);
        return observe(t, LOWALLOC_SOPS_FN(x.compare(q.of(x))));
      }
      case 4: {
        op_ = "compare(pos1, count1, const char*)";
        const piece q = pick_piece(src, t);
        return observe(t, LOWALLOC_SOPS_FN(x.compare(p, k, q.of(x))));
      }
      case 5: {
        op_ = "compare(pos1, count1, const char*, count2)";
        const piece q = pick_piece(src, t);
        return observe(t, LOWALLOC_SOPS_FN(x.compare(p, k, q.of(x), q.n)));
      }
      case 6: {
        op_ = "compare(string_view / sv_like / std::string)";
        const piece q = pick_piece(src, t);
        switch (src.below(3)) {
          case 0:
            return observe(t, LOWALLOC_SOPS_FN(x.compare(q.view(x))));
          case 1:
            return observe(t, LOWALLOC_SOPS_FN(x.compare(q.like(x))));
          default:
            ext_[1].assign(q.mp, q.n);
            return observe(t, LOWALLOC_SOPS_FN(x.compare(ext_[1])));
        }
      }
      case 7: {
        op_ = "compare(pos1, count1, string_view)";
        const piece q = pick_piece(src, t);
        return observe(t, LOWALLOC_SOPS_FN(x.compare(p, k, q.throwing_view(x))));
      }
      case 8: {
        op_ = "compare(pos1, count1, string_view, pos2[, count2])";
        const piece q = pick_piece(src, t);
        const std::size_t q2 = position(src, q.n);
        const std::size_t k2 = count(src, q.n);
        if (src.below(3) == 0) {
          return observe(t, LOWALLOC_SOPS_FN(x.compare(p, k, q.throwing_view(x), q2)));
        }
        return observe(t, LOWALLOC_SOPS_FN(x.compare(p, k, q.throwing_view(x), q2, k2)));
      }
      default: {
        op_ = "compare(pos1, count1, sv_like, pos2, count2)";
        const piece q = pick_piece(src, t);
        const std::size_t q2 = position(src, q.n);
        const std::size_t k2 = count(src, q.n);
        return observe(t, LOWALLOC_SOPS_FN(x.compare(p, k, q.like(x), q2, k2)));
      }
    }
  }

  // lowalloc makes erase, erase_if and getline visible in namespace std too (unless
  // LOWALLOC_NO_STD_OVERLOADS), so that code written for std::string keeps compiling.
  template <class P>
  static auto std_erase_if(S& x, P pred) {
#ifndef LOWALLOC_NO_STD_OVERLOADS
    return std::erase_if(x, pred);
#else
    return erase_if(x, pred);
#endif
  }
  static auto std_erase(S& x, char ch) {
#ifndef LOWALLOC_NO_STD_OVERLOADS
    return std::erase(x, ch);
#else
    return erase(x, ch);
#endif
  }
  static std::istream& std_getline(std::istream& is, S& x) {
#ifndef LOWALLOC_NO_STD_OVERLOADS
    return std::getline(is, x);
#else
    return getline(is, x);
#endif
  }

  // The C++20/23 members, against hand-written std equivalents.
  static bool model_starts(std::string_view s, std::string_view x) {
    return s.size() >= x.size() && s.compare(0, x.size(), x) == 0;
  }
  static bool model_ends(std::string_view s, std::string_view x) {
    return s.size() >= x.size() && s.compare(s.size() - x.size(), x.size(), x) == 0;
  }
  static bool model_contains(std::string_view s, std::string_view x) {
    return s.find(x) != std::string_view::npos;
  }

  // copy(dest, count[, pos]) into a buffer with guards; returns the count and the whole buffer.
  template <class X>
  static std::string copy_out(const X& x, std::size_t k, std::size_t p, bool with_pos) {
    std::string buf(x.size() + 8, '#');
    const std::size_t r = with_pos ? x.copy(&buf[0], k, p) : x.copy(&buf[0], k);
    return std::to_string(r) + ":" + buf;
  }

  template <class Source>
  bool access_op(target& t, Source& src) {
    const std::size_t n = t.m.size();
    const std::size_t p = position(src, n);
    const std::size_t k = count(src, n);
    switch (src.below(9)) {
      case 0:
      case 1: {
        const std::size_t which = src.below(3);
        op_ = which == 0 ? "starts_with" : which == 1 ? "ends_with" : "contains";
        const auto fm = [which](std::string_view s, std::string_view x) {
          return which == 0   ? model_starts(s, x)
                 : which == 1 ? model_ends(s, x)
                              : model_contains(s, x);
        };
        const auto fs = [which](const S& s, const auto& x) {
          return which == 0 ? s.starts_with(x) : which == 1 ? s.ends_with(x) : s.contains(x);
        };
        switch (src.below(4)) {
          case 0: {  // a character
            const char ch = character(src);
            return observe(
                t, [&](const S& x) { return fs(x, ch); },
                [&](const model& x) { return fm(x, std::string_view(&ch, 1)); });
          }
          case 1: {  // a string_view
            const piece q = pick_piece(src, t);
            return observe(
                t, [&](const S& x) { return fs(x, q.view(x)); },
                [&](const model& x) { return fm(x, q.view(x)); });
          }
          case 2: {  // a const char*
            const piece q = pick_piece(src, t);
            return observe(
                t, [&](const S& x) { return fs(x, q.of(x)); },
                [&](const model& x) { return fm(x, std::string_view(q.of(x))); });
          }
          default: {  // a basic_string, through its string_view
            const sref a = pick_string(src, t);
            return observe(
                t, [&](const S& x) { return fs(x, a.of(x)); },
                [&](const model& x) { return fm(x, a.of(x)); });
          }
        }
      }
      case 2: {
        op_ = "substr([pos[, count]])";
        switch (src.below(3)) {
          case 0:
            return observe(t, LOWALLOC_SOPS_FN(x.substr()));
          case 1:
            return observe(t, LOWALLOC_SOPS_FN(x.substr(p)));
          default:
            return observe(t, LOWALLOC_SOPS_FN(x.substr(p, k)));
        }
      }
      case 3: {
        op_ = "copy(dest, count[, pos])";
        const bool with_pos = src.below(4) != 0;
        return observe(t, LOWALLOC_SOPS_FN(copy_out(x, k, p, with_pos)));
      }
      case 4: {
        op_ = "at(pos) const";
        return observe(t, LOWALLOC_SOPS_FN(x.at(p)));
      }
      case 5: {
        op_ = "at(pos)";
        return both(t, LOWALLOC_SOPS_FN(x.at(p)));
      }
      case 6: {
        op_ = "operator[], front(), back(), iteration";
        if (n == 0) return true;
        const std::size_t i = src.below(n);
        const S& s = t.s;
        LOWALLOC_SOPS_CHECK(s[i] == t.m[i] && t.s[i] == t.m[i]);
        LOWALLOC_SOPS_CHECK(s.front() == t.m.front() && s.back() == t.m.back());
        LOWALLOC_SOPS_CHECK(t.s.front() == t.m.front() && t.s.back() == t.m.back());
        LOWALLOC_SOPS_CHECK(std::equal(t.s.begin(), t.s.end(), t.m.begin(), t.m.end()));
        LOWALLOC_SOPS_CHECK(*(t.s.rbegin() + static_cast<std::ptrdiff_t>(i)) == t.m[n - 1 - i]);
        return true;
      }
      case 7: {
        op_ = "std::hash";
        LOWALLOC_SOPS_CHECK(std::hash<S>()(t.s) == std::hash<std::string_view>()(t.m));
        const S c(t.s);
        LOWALLOC_SOPS_CHECK(std::hash<S>()(c) == std::hash<S>()(t.s));
        return true;
      }
      default: {
        op_ = "data() (non-const, C++17)";
        if (n == 0) return true;
        const std::size_t i = src.below(n);
        const char ch = character(src);
        return both(t, LOWALLOC_SOPS_FN(x.data()[i] = ch));
      }
    }
  }

  template <class Source>
  bool misc_op(target& t, Source& src) {
    const std::size_t n = t.m.size();
    switch (src.below(10)) {
      case 0: {
        op_ = "reserve(count)";
        const std::size_t k = src.below(32) == 0 ? npos : src.below(2 * limit_ + 16);
        if (!both(
                t, [&](auto& x) { x.reserve(k); }, k == npos ? 0 : k)) {
          return false;
        }
        LOWALLOC_SOPS_CHECK(k > smax_ || t.s.capacity() >= k);
        return true;
      }
      case 1: {
        op_ = "shrink_to_fit()";
        if (!both(t, [&](auto& x) { x.shrink_to_fit(); })) return false;
        // Documented: an inline-sized string goes back inline (capacity() == N - 1).
        LOWALLOC_SOPS_CHECK(t.m.size() > inline_cap_ || t.s.capacity() == inline_cap_);
        return true;
      }
      case 2: {
        op_ = "x[i] = ch, at(i) = ch, front() = ch, back() = ch, *it = ch";
        if (n == 0) return true;
        const std::size_t i = src.below(n);
        const auto d = static_cast<std::ptrdiff_t>(i);
        const char ch = character(src);
        switch (src.below(6)) {
          case 0:
            return both(t, LOWALLOC_SOPS_FN(x[i] = ch));
          case 1:
            return both(t, LOWALLOC_SOPS_FN(x.at(i) = ch));
          case 2:
            return both(t, LOWALLOC_SOPS_FN(x.front() = ch));
          case 3:
            return both(t, LOWALLOC_SOPS_FN(x.back() = ch));
          case 4:
            return both(t, LOWALLOC_SOPS_FN(*(x.begin() + d) = ch));
          default:
            return both(t, LOWALLOC_SOPS_FN(*(x.rbegin() + d) = ch));
        }
      }
      case 3: {
        op_ = "std::reverse, std::sort, std::fill over iterators";
        const auto ij = span(src, n);
        const std::ptrdiff_t i = ij.first;
        const std::ptrdiff_t j = ij.second;
        const char ch = character(src);
        switch (src.below(3)) {
          case 0:
            return both(t, [&](auto& x) { std::reverse(x.begin() + i, x.begin() + j); });
          case 1:
            return both(t, [&](auto& x) { std::sort(x.rbegin() + i, x.rbegin() + j); });
          default:
            return both(t, [&](auto& x) { std::fill(x.begin() + i, x.begin() + j, ch); });
        }
      }
      case 4:
      case 5:
        return overwrite_op(t, src);
      case 6: {
        op_ = "grow past max_size()";
        const std::size_t max = t.s.max_size();
        if (max == npos) return true;
        const std::size_t over = max + 1;
        thrown e;
        switch (src.below(5)) {
          case 0:
            e = capture([&] { t.s.resize(over); });
            break;
          case 1:
            e = capture([&] { t.s.reserve(over); });
            break;
          case 2:
            e = capture([&] { t.s.append(max - n + 1, 'g'); });
            break;
          case 3:
            e = capture([&] { t.s.insert(n / 2, max - n + 1, 'g'); });
            break;
          default:
            e = capture([&] { S u(over, 'g'); });
            break;
        }
        LOWALLOC_SOPS_CHECK(e == thrown::length_error);
        return true;
      }
      case 7: {
        op_ = "max_size(), capacity(), get_allocator(), reserve() (C++17)";
        LOWALLOC_SOPS_CHECK(t.s.max_size() == smax_ && t.s.capacity() >= n);
        const typename S::allocator_type al = t.s.get_allocator();
        static_cast<void>(al);
#if !LOWALLOC_HAS_CXX20
        // Deprecated in C++20; in C++17 a non-binding shrink request, like shrink_to_fit().
        t.s.reserve();
        LOWALLOC_SOPS_CHECK(n > inline_cap_ || t.s.capacity() == inline_cap_);
#endif
        return true;
      }
      default: {
        op_ = "insert(pos, count, ch) with pos > size() and a huge count: out_of_range first";
        const std::size_t p = n + 1 + src.below(3);
        const std::size_t k = src.below(2) == 0 ? npos : smax_ + 1;
        return both(t, LOWALLOC_SOPS_FN(x.insert(p, k, 'z')));
      }
    }
  }

  // resize_and_overwrite(count, op) against its definition: op sees the first min(size(), count)
  // characters, may change them, writes [w0, w) and returns how many to keep.
  template <class Source>
  bool overwrite_op(target& t, Source& src) {
    op_ = "resize_and_overwrite(count, op)";
    const std::size_t n = t.m.size();
    const std::size_t k = src.below(32) == 0 ? npos : src.below(limit_ + 24);
    const std::size_t kept = std::min(n, k);
    const std::size_t w0 = src.below(kept + 1);  // op rewrites [w0, w)
    const std::size_t w = k == npos ? 0 : kept + src.below(k - kept + 1);
    const std::size_t r = src.below(w + 1);  // and keeps [0, r)
    const char ch = character(src);
    std::size_t calls = 0;
    bool args_ok = true;
    // The operation, the same on both sides.
    const auto op = [&](char* p, std::size_t cnt) {
      ++calls;
      args_ok = args_ok && cnt == k && p != nullptr;
      for (std::size_t i = 0; i < w0; ++i) p[i] = static_cast<char>(p[i] ^ 1);
      for (std::size_t i = w0; i < w; ++i) p[i] = static_cast<char>(ch + static_cast<char>(i));
      return r;
    };
    const bool ok = mutate(
        t, [&](S& x) { x.resize_and_overwrite(k, op); },
        [&](model& x) {
          if (k > x.max_size()) throw std::length_error("resize_and_overwrite");
          model y(x, 0, kept);
          y.resize(k);
          y.resize(op(&y[0], k));
          x = std::move(y);
        },
        k);
    if (!ok) return false;
    LOWALLOC_SOPS_CHECK(args_ok);
    // Called once by the model when it succeeds; once more by lowalloc when the result fits.
    LOWALLOC_SOPS_CHECK(calls == (k > smax_ ? (k > t.m.max_size() ? 0u : 1u) : 2u));
    return true;
  }

  // What is left in a stream, whatever its state.
  static std::string rest(std::istream& is) {
    is.clear();
    return std::string(std::istreambuf_iterator<char>(is), std::istreambuf_iterator<char>());
  }

  template <class Source>
  std::string stream_text(Source& src) {
    // Now and then without white space (and without '\n'): long words and lines.
    static constexpr char alphabet[] = {'a', 'b', '\0', 'x', 'b', ' ', '\n', '\t'};
    const std::size_t letters = src.below(4) == 0 ? 5 : std::size(alphabet);
    std::string out(src.below(4) == 0 ? src.below(2 * limit_ + 32) : src.below(24), '\0');
    for (char& ch : out) ch = alphabet[src.below(letters)];
    return out;
  }

  template <class Source>
  bool stream_op(target& t, Source& src) {
    switch (src.below(7)) {
      case 0: {
        op_ = "os << setw(w) << s";
        const auto w = static_cast<std::streamsize>(src.below(2) == 0 ? src.below(limit_ + 8) : 0);
        const bool left = src.below(2) == 0;
        std::ostringstream o1, o2;
        if (left) {
          o1 << std::left;
          o2 << std::left;
        }
        o1.fill('.');
        o2.fill('.');
        o1.width(w);
        o2.width(w);
        const std::ostream* ret = nullptr;
        LOWALLOC_SOPS_CHECK(capture([&] { ret = &(o1 << t.s); }) == thrown::none);
        o2 << t.m;
        LOWALLOC_SOPS_CHECK(ret == &o1 && o1.str() == o2.str() && o1.width() == 0);
        return true;
      }
      case 1:
      case 2: {
        op_ = "is >> setw(w) >> s";
        const std::string in = stream_text(src);
        const std::size_t w = src.below(3) == 0 ? src.below(limit_ + 8) : 0;
        std::istringstream i1(in), i2(in);
        i1.width(static_cast<std::streamsize>(w));
        const std::istream* ret = nullptr;
        LOWALLOC_SOPS_CHECK(capture([&] { ret = &(i1 >> t.s); }) == thrown::none);
        LOWALLOC_SOPS_CHECK(ret == &i1);
        const auto space = [](char ch) { return ch == ' ' || ch == '\n' || ch == '\t'; };
        const std::size_t first = std::min(
            static_cast<std::size_t>(std::find_if_not(in.begin(), in.end(), space) - in.begin()),
            in.size());
        const std::size_t word =
            static_cast<std::size_t>(
                std::find_if(in.begin() + static_cast<std::ptrdiff_t>(first), in.end(), space) -
                in.begin()) -
            first;
        if (w > smax_ && word > smax_) {
          // std: up to width() characters, appended one by one: the one past max_size() throws
          // std::length_error, and the stream sets badbit. The string holds the first max_size().
          t.m = in.substr(first, smax_);
          LOWALLOC_SOPS_CHECK(i1.bad());
          return true;
        }
        // std: at most width() characters, or max_size() when width() is 0.
        const std::size_t limit = w != 0 ? std::min(w, smax_) : smax_ < t.m.max_size() ? smax_ : 0;
        i2.width(static_cast<std::streamsize>(limit));
        model m2 = t.m;
        i2 >> m2;
        t.m = std::move(m2);
        LOWALLOC_SOPS_CHECK(i1.width() == (i2.width() == 0 ? 0 : static_cast<std::streamsize>(w)));
        LOWALLOC_SOPS_CHECK(i1.fail() == i2.fail() && i1.bad() == i2.bad());
        // eofbit: when the word ended the input. (When the width or max_size() stopped it just
        // before the end, whether end-of-file counts as seen is left open.)
        if (word < (w != 0 ? std::min(w, smax_) : smax_)) LOWALLOC_SOPS_CHECK(i1.eof() == i2.eof());
        LOWALLOC_SOPS_CHECK(rest(i1) == rest(i2));
        return true;
      }
      case 3:
      case 4:
      case 5: {
        const bool delim = src.below(2) == 0;
        op_ = delim ? "getline(is, s, delim)" : "getline(is, s)";
        const char d = delim ? character(src) : '\n';
        const std::string in = stream_text(src);
        std::istringstream i1(in), i2(in);
        const std::istream* ret = nullptr;
        LOWALLOC_SOPS_CHECK(capture([&] {
                              ret = delim               ? &getline(i1, t.s, d)
                                    : src.below(2) == 0 ? &getline(i1, t.s)
                                                        : &std_getline(i1, t.s);
                            }) == thrown::none);
        LOWALLOC_SOPS_CHECK(ret == &i1);
        const std::size_t line = std::min(in.find(d), in.size());
        if (line < smax_) {
          model m2 = t.m;
          std::getline(i2, m2, d);
          t.m = std::move(m2);
          LOWALLOC_SOPS_CHECK(i1.fail() == i2.fail() && i1.bad() == i2.bad());
          LOWALLOC_SOPS_CHECK(i1.eof() == i2.eof());
          LOWALLOC_SOPS_CHECK(rest(i1) == rest(i2));
        } else {
          // max_size() characters are stored, and then failbit. (A line of exactly max_size()
          // characters: whether the delimiter or end-of-file is seen first is unspecified.)
          t.m = in.substr(0, smax_);
          if (line > smax_) {
            LOWALLOC_SOPS_CHECK(i1.fail() && !i1.bad());
            LOWALLOC_SOPS_CHECK(rest(i1) == in.substr(smax_));
          }
        }
        return true;
      }
      default: {
        op_ = "getline(std::istringstream(text), s) (an rvalue stream)";
        const std::string in = stream_text(src);
        LOWALLOC_SOPS_CHECK(capture([&] { getline(std::istringstream(in), t.s); }) == thrown::none);
        if (std::min(in.find('\n'), in.size()) < smax_) {
          model m2 = t.m;
          std::getline(std::istringstream(in), m2);
          t.m = std::move(m2);
        } else {
          t.m = in.substr(0, smax_);
        }
        return true;
      }
    }
  }

  // ---- operator+ and the relational operators --------------------------------------------------

  // x OP y and y OP x for the six operators (and <=>), as bits.
  template <class X, class Y>
  static unsigned relations(const X& x, const Y& y) {
    unsigned bits = 0;
    unsigned bit = 1;
    const auto put = [&](bool b) {
      if (b) bits |= bit;
      bit <<= 1;
    };
    put(x == y);
    put(x != y);
    put(x < y);
    put(x <= y);
    put(x > y);
    put(x >= y);
    put(y == x);
    put(y != x);
    put(y < x);
    put(y <= x);
    put(y > x);
    put(y >= x);
#if LOWALLOC_HAS_THREE_WAY_COMPARISON
    const auto c = x <=> y;
    put(c < 0);
    put(c == 0);
    put(c > 0);
    const auto d = y <=> x;
    put(d < 0);
    put(d == 0);
    put(d > 0);
#endif
    return bits;
  }

  // x against y as a lowalloc string, a std::string, a string_view and a const char*.
  bool relational(const S& x, const model& rx, const S& y, const model& ry) {
    op_ = "==, !=, <, <=, >, >=, <=> against S, std::string, string_view, const char*";
    LOWALLOC_SOPS_CHECK(relations(x, y) == relations(rx, ry));
    LOWALLOC_SOPS_CHECK(relations(x, ry) == relations(rx, ry));
    LOWALLOC_SOPS_CHECK(relations(x, std::string_view(ry)) == relations(rx, std::string_view(ry)));
    const char* p = y.c_str();
    LOWALLOC_SOPS_CHECK(relations(x, p) == relations(rx, p));
    // Another storage: the operators take any two basic_strings of the same character type.
    const lowalloc::small_string<40> z{std::string_view(ry)};
    LOWALLOC_SOPS_CHECK(relations(x, z) == relations(rx, ry));
    return true;
  }

  template <class F>
  bool plus(F&& f, S& x, model& rx, S& y, model& ry, const piece& p, char ch) {
    std::optional<model> v;
    std::optional<S> u;
    const thrown em = capture([&] { f(v, rx, ry, p.mp, ch); });
    const thrown es = capture([&] { f(u, x, y, p.sp, ch); });
    outcome om{em, outcome::kind::none, 0, {}};
    outcome os{es, outcome::kind::none, 0, {}};
    if (em == thrown::none) om.text = *v;
    if (es == thrown::none) os.text.assign(u->data(), u->size());
    if (em == thrown::none && v->size() > smax_) {
      LOWALLOC_SOPS_CHECK_OUTCOME(es == thrown::length_error, os, om);
      return true;
    }
    LOWALLOC_SOPS_CHECK_OUTCOME(os == om, os, om);
    return em != thrown::none || same(*u, *v);
  }

  template <class Source>
  bool plus_op(S& x, model& rx, S& y, model& ry, Source& src) {
    target t{x, rx, y, ry};
    const piece p = pick_piece(src, t);
    const char ch = character(src);
    // The operands: l and r are x and y (or copies of them for the rvalue forms), q a const char*.
    using X = std::remove_reference_t<decltype(x)>;
    switch (src.below(13)) {
      case 0:
        op_ = "S + S";
        return plus([&](auto& o, auto& l, auto& r, auto, char) { o.emplace(l + r); }, x, rx, y, ry,
                    p, ch);
      case 1:
        op_ = "S + S (the same object)";
        return plus([&](auto& o, auto& l, auto&, auto, char) { o.emplace(l + l); }, x, rx, y, ry, p,
                    ch);
      case 2:
        op_ = "S + const char*";
        return plus([&](auto& o, auto& l, auto&, auto q, char) { o.emplace(l + q); }, x, rx, y, ry,
                    p, ch);
      case 3:
        op_ = "S + char";
        return plus([&](auto& o, auto& l, auto&, auto, char c) { o.emplace(l + c); }, x, rx, y, ry,
                    p, ch);
      case 4:
        op_ = "const char* + S";
        return plus([&](auto& o, auto&, auto& r, auto q, char) { o.emplace(q + r); }, x, rx, y, ry,
                    p, ch);
      case 5:
        op_ = "char + S";
        return plus([&](auto& o, auto&, auto& r, auto, char c) { o.emplace(c + r); }, x, rx, y, ry,
                    p, ch);
      case 6:
        op_ = "S&& + S";
        return plus(
            [&](auto& o, auto& l, auto& r, auto, char) {
              using T = std::remove_reference_t<decltype(l)>;
              o.emplace(T(l) + r);
            },
            x, rx, y, ry, p, ch);
      case 7:
        op_ = "S + S&&";
        return plus(
            [&](auto& o, auto& l, auto& r, auto, char) {
              using T = std::remove_reference_t<decltype(l)>;
              o.emplace(l + T(r));
            },
            x, rx, y, ry, p, ch);
      case 8:
        if (src.below(2) == 0) {
          op_ = "S&& + S&&";
          return plus(
              [&](auto& o, auto& l, auto& r, auto, char) {
                using T = std::remove_reference_t<decltype(l)>;
                o.emplace(T(l) + T(r));
              },
              x, rx, y, ry, p, ch);
        }
        // The right operand has room for the result (and the left one may not): its buffer can be
        // reused.
        op_ = "S&& + S&& (the right one with spare capacity)";
        return plus(
            [&](auto& o, auto& l, auto& r, auto, char) {
              using T = std::remove_reference_t<decltype(l)>;
              T u(l);
              T v(r);
              // Spare capacity by growing and shrinking back. (Not v.reserve(): GCC 12 then warns
              // -Wrestrict, a false positive, in small_storage::reserve at -O3.)
              const std::size_t n = v.size();
              v.append(std::min(l.size() + 5, smax_ - n), 'r');
              v.resize(n);
              o.emplace(std::move(u) + std::move(v));
            },
            x, rx, y, ry, p, ch);
      case 9:
        op_ = "S&& + const char*";
        return plus(
            [&](auto& o, auto& l, auto&, auto q, char) {
              using T = std::remove_reference_t<decltype(l)>;
              o.emplace(T(l) + q);
            },
            x, rx, y, ry, p, ch);
      case 10:
        op_ = "S&& + char";
        return plus(
            [&](auto& o, auto& l, auto&, auto, char c) {
              using T = std::remove_reference_t<decltype(l)>;
              o.emplace(T(l) + c);
            },
            x, rx, y, ry, p, ch);
      case 11:
        op_ = "const char* + S&&";
        return plus(
            [&](auto& o, auto&, auto& r, auto q, char) {
              using T = std::remove_reference_t<decltype(r)>;
              o.emplace(q + T(r));
            },
            x, rx, y, ry, p, ch);
      default:
        op_ = "char + S&&";
        static_assert(std::is_same_v<decltype(std::declval<X&>() + std::declval<X&>()), S>);
        return plus(
            [&](auto& o, auto&, auto& r, auto, char c) {
              using T = std::remove_reference_t<decltype(r)>;
              o.emplace(c + T(r));
            },
            x, rx, y, ry, p, ch);
    }
  }

  // Something to compare x with: y becomes x, or x changed a little.
  template <class Source>
  bool near_copy(const S& x, const model& rx, S& y, model& ry, Source& src) {
    y = x;
    ry = rx;
    const char ch = character(src);
    switch (ry.size() < smax_ ? src.below(5) : src.below(4)) {
      case 0:
        break;
      case 1:
        if (!ry.empty()) {
          y.pop_back();
          ry.pop_back();
        }
        break;
      case 2:
        if (ry.size() < smax_) {
          y.push_back(ch);
          ry.push_back(ch);
        }
        break;
      case 3:
        if (!ry.empty()) {
          const std::size_t i = src.below(ry.size());
          y[i] = ch;
          ry[i] = ch;
        }
        break;
      default:
        y.push_back('\0');
        ry.push_back('\0');
        break;
    }
    return same(y, ry);
  }

  template <class Source>
  bool pair_op(S& x, model& rx, S& y, model& ry, Source& src) {
    switch (src.below(14)) {
      case 0:
        op_ = "x.swap(y)";
        x.swap(y);
        rx.swap(ry);
        return true;
      case 1:
        op_ = "swap(x, y) (ADL)";
        swap(x, y);
        rx.swap(ry);
        return true;
      case 2:
        op_ = "std::swap(x, y)";
        std::swap(x, y);
        rx.swap(ry);
        return true;
      case 3:
        op_ = "x = y";
        x = y;
        rx = ry;
        return true;
      case 4: {
        op_ = "x = std::move(y)";
        x = std::move(y);
        rx = ry;
        ry.clear();
        LOWALLOC_SOPS_CHECK(y.empty());  // documented: a moved-from string is empty
        return valid(y);
      }
      case 5: {
        op_ = "S t(std::move(x)); x = std::move(t)";
        S t(std::move(x));
        LOWALLOC_SOPS_CHECK(x.empty());  // documented: a moved-from string is empty
        if (!valid(x) || !same(t, rx)) return false;
        x = std::move(t);
        LOWALLOC_SOPS_CHECK(t.empty());
        return valid(t);
      }
      case 6: {
        op_ = "x = x, x.swap(x), swap(x, x)";
        const S& self = x;
        x = self;
        x.swap(x);
        swap(x, x);
        return true;
      }
      case 7:
      case 8:
        if (!near_copy(x, rx, y, ry, src)) return false;
        return relational(x, rx, y, ry);
      case 9:
        return relational(x, rx, y, ry);
      default:
        return plus_op(x, rx, y, ry, src);
    }
  }

  // starts_with / ends_with / contains with a prefix, suffix or infix of the string itself, so
  // that the answer is often true; and the other pieces' views.
  template <class Source>
  bool affix_op(target& t, Source& src) {
    const std::size_t n = t.m.size();
    const auto ij = span(src, n);
    const std::ptrdiff_t i = ij.first;
    const std::ptrdiff_t j = ij.second;
    const auto ui = static_cast<std::size_t>(i);
    const auto uj = static_cast<std::size_t>(j);
    switch (src.below(3)) {
      case 0: {
        op_ = "starts_with(prefix)";
        ext_[1] = t.m.substr(0, uj);
        if (src.below(2) == 0) ext_[1] += character(src);
        return observe(
            t, [&](const S& x) { return x.starts_with(std::string_view(ext_[1])); },
            [&](const model& x) { return model_starts(x, ext_[1]); });
      }
      case 1: {
        op_ = "ends_with(suffix)";
        ext_[1] = t.m.substr(ui);
        if (src.below(2) == 0) ext_[1].insert(ext_[1].begin(), character(src));
        return observe(
            t, [&](const S& x) { return x.ends_with(std::string_view(ext_[1])); },
            [&](const model& x) { return model_ends(x, ext_[1]); });
      }
      default: {
        op_ = "contains(infix), find(infix)";
        ext_[1] = t.m.substr(ui, uj - ui);
        if (!ext_[1].empty() && src.below(2) == 0) ext_[1][src.below(ext_[1].size())] = 'c';
        if (!observe(
                t, [&](const S& x) { return x.contains(std::string_view(ext_[1])); },
                [&](const model& x) { return model_contains(x, ext_[1]); })) {
          return false;
        }
        return observe(t, LOWALLOC_SOPS_FN(x.find(ext_[1].c_str(), ui, ext_[1].size())));
      }
    }
  }

  S a_;
  model ra_;
  S b_;
  model rb_;
  S tmp_;
  model tmp_model_;
  std::string ext_[2];
  const std::size_t smax_;        // S().max_size()
  const std::size_t inline_cap_;  // S().capacity(): N - 1 for small_string<N>, N for fixed
  std::size_t limit_ = 24;
  std::size_t step_ = 0;
  const char* op_ = "(none)";
  std::string detail_;
  model before_;             // the value of the target of the last mutate(), before it
  bool has_before_ = false;  // in this step
  std::string failure_;
};

#undef LOWALLOC_SOPS_CHECK_OUTCOME
#undef LOWALLOC_SOPS_MAKE
#undef LOWALLOC_SOPS_FN
#undef LOWALLOC_SOPS_CHECK

}  // namespace lowalloc_test

#endif  // LOWALLOC_TESTS_SUPPORT_STRING_OPS_HPP
