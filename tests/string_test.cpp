// lowalloc::basic_string: every member and non-member checked against std::basic_string itself
// (typed over small_string<16/24/32/64>, fixed_string<64> and small_wstring<8>, at lengths below,
// at and above the inline capacity, inline and on the heap), then the layout and allocation
// promises, streams, std::pmr and uses-allocator construction, hashing, the other character types
// and a user-written storage.
#include <lowalloc/alloc_count.hpp>
#include <lowalloc/string.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <iomanip>
#include <iterator>
#include <limits>
#include <memory>
#include <memory_resource>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <typeinfo>
#include <unordered_set>
#include <utility>
#include <vector>
#if defined(__cpp_lib_three_way_comparison)
#include <compare>
#endif
#if LOWALLOC_HAS_RANGES
#include <concepts>  // std::ranges::swap
#endif

// GCC 12 at -O2/-O3 under C++20 reports -Wrestrict inside libstdc++'s own std::string append,
// insert and assign (GCC bug 105651) on the reference strings this file compares against.
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ == 12
#pragma GCC diagnostic ignored "-Wrestrict"
#endif

namespace {

using lowalloc::fixed_string;
using lowalloc::small_string;

constexpr std::size_t npos = std::string::npos;

// ---- layout -------------------------------------------------------------------------------------

static_assert(sizeof(small_string<24>) == 24);
static_assert(sizeof(small_string<32>) == 32);
static_assert(sizeof(small_string<40>) == 40);
static_assert(sizeof(small_string<64>) == 64);
static_assert(sizeof(small_string<128>) == 128);
static_assert(sizeof(small_string<256>) == 256);
static_assert(sizeof(small_string<>) == 32);
static_assert(sizeof(small_string<16>) == 24);  // the smallest object; still 15 characters inline
static_assert(sizeof(fixed_string<1>) <= 2);
static_assert(sizeof(fixed_string<15>) <= 16);
static_assert(sizeof(fixed_string<31>) <= 32);
static_assert(sizeof(fixed_string<64>) <= 65);
static_assert(sizeof(fixed_string<255>) <= 256);
static_assert(sizeof(fixed_string<256>) <= 257);
static_assert(sizeof(fixed_string<1000>) <= 1001);

// std::basic_string's types and constants.
static_assert(std::is_same_v<small_string<>::value_type, char>);
static_assert(std::is_same_v<small_string<>::traits_type, std::char_traits<char>>);
static_assert(std::is_same_v<small_string<>::size_type, std::size_t>);
static_assert(std::is_same_v<small_string<>::difference_type, std::ptrdiff_t>);
static_assert(std::is_same_v<small_string<>::allocator_type, std::allocator<char>>);
static_assert(std::is_same_v<fixed_string<8>::allocator_type, std::allocator<char>>);
static_assert(small_string<>::npos == npos);
static_assert(fixed_string<8>::npos == npos);
static_assert(std::is_same_v<std::iterator_traits<small_string<>::iterator>::iterator_category,
                             std::random_access_iterator_tag>);
static_assert(std::is_convertible_v<small_string<>::iterator, small_string<>::const_iterator>);
static_assert(std::is_same_v<lowalloc::pmr::small_string<>::allocator_type,
                             std::pmr::polymorphic_allocator<char>>);

static_assert(std::is_nothrow_default_constructible_v<small_string<>>);
static_assert(std::is_nothrow_move_constructible_v<small_string<>>);
static_assert(std::is_nothrow_move_assignable_v<small_string<>>);
static_assert(std::is_nothrow_swappable_v<small_string<>>);
static_assert(std::is_nothrow_default_constructible_v<fixed_string<16>>);
static_assert(std::is_nothrow_move_constructible_v<fixed_string<16>>);
static_assert(std::is_nothrow_swappable_v<fixed_string<16>>);

// Conversions: implicit to the view, explicit to std::basic_string (as std does the reverse).
static_assert(std::is_convertible_v<small_string<>, std::string_view>);
static_assert(std::is_convertible_v<const small_string<>&, std::string_view>);
static_assert(std::is_convertible_v<fixed_string<8>, std::string_view>);
static_assert(!std::is_convertible_v<small_string<>, std::string>);
static_assert(std::is_constructible_v<std::string, small_string<>>);
static_assert(std::is_constructible_v<std::pmr::string, small_string<>>);
static_assert(!std::is_convertible_v<fixed_string<8>, std::string>);
static_assert(std::is_constructible_v<std::string, fixed_string<8>>);
static_assert(std::is_constructible_v<small_string<>, std::string>);
static_assert(std::is_constructible_v<small_string<>, std::string, std::size_t, std::size_t>);
static_assert(std::is_convertible_v<const char*, small_string<>>);
// Like std::basic_string: a view converts explicitly only.
static_assert(std::is_constructible_v<small_string<>, std::string_view>);
static_assert(!std::is_convertible_v<std::string_view, small_string<>>);

// ---- helpers ------------------------------------------------------------------------------------

template <class C>
std::basic_string<C> widen(std::string_view s) {
  std::basic_string<C> out;
  for (char c : s) out.push_back(static_cast<C>(static_cast<unsigned char>(c)));
  return out;
}

// n letters of the alphabet from `seed` on: distinct within 26, periodic beyond.
template <class C>
std::basic_string<C> text(std::size_t n, std::size_t seed = 0) {
  std::basic_string<C> out;
  for (std::size_t i = 0; i < n; ++i) out.push_back(static_cast<C>('a' + (i + seed) % 26));
  return out;
}

template <class C>
std::string show(std::basic_string_view<C> s) {
  std::string out = "\"";
  for (C c : s) {
    const auto u = static_cast<std::uint32_t>(static_cast<std::make_unsigned_t<C>>(c));
    if (u >= 32 && u < 127) {
      out.push_back(static_cast<char>(u));
    } else {
      out += "\\x{" + std::to_string(u) + "}";
    }
  }
  return out + "\"";
}
template <class C>
std::string show(const std::basic_string<C>& s) {
  return show(std::basic_string_view<C>(s));
}

// `s` holds exactly `expected` and keeps every invariant of a string: NUL-terminated, data() ==
// c_str(), size() <= capacity(), at least the inline capacity, iterators spanning size().
template <class S>
::testing::AssertionResult same(const S& s,
                                const std::basic_string<typename S::value_type>& expected) {
  using C = typename S::value_type;
  const std::basic_string_view<C> v(s.data(), s.size());
  if (s.size() != expected.size() || v != std::basic_string_view<C>(expected)) {
    return ::testing::AssertionFailure() << show(v) << " (size " << s.size() << "), expected "
                                         << show(expected) << " (size " << expected.size() << ")";
  }
  if (s.c_str() != s.data()) return ::testing::AssertionFailure() << "c_str() != data()";
  if (s.c_str()[s.size()] != C()) return ::testing::AssertionFailure() << "not NUL-terminated";
  if (s.length() != s.size()) return ::testing::AssertionFailure() << "length() != size()";
  if (s.empty() != (s.size() == 0)) return ::testing::AssertionFailure() << "empty() is wrong";
  if (s.size() > s.capacity()) {
    return ::testing::AssertionFailure() << "size " << s.size() << " > capacity " << s.capacity();
  }
  if (s.capacity() < S().capacity()) {
    return ::testing::AssertionFailure()
           << "capacity " << s.capacity() << " below the inline " << S().capacity();
  }
  if (s.size() > s.max_size()) return ::testing::AssertionFailure() << "size > max_size";
  if (static_cast<std::size_t>(s.end() - s.begin()) != s.size() ||
      static_cast<std::size_t>(s.cend() - s.cbegin()) != s.size() ||
      static_cast<std::size_t>(s.rend() - s.rbegin()) != s.size() || &*s.begin() != s.data()) {
    return ::testing::AssertionFailure() << "iterators do not span the string";
  }
  if (std::basic_string_view<C>(s) != v) return ::testing::AssertionFailure() << "view differs";
  return ::testing::AssertionSuccess();
}

template <class S>
struct snapshot {
  std::basic_string<typename S::value_type> value;
  std::size_t capacity;
  const typename S::value_type* data;
};
template <class S>
snapshot<S> take(const S& s) {
  return {std::basic_string<typename S::value_type>(s.data(), s.size()), s.capacity(), s.data()};
}
// The strong guarantee: nothing observable changed.
template <class S>
::testing::AssertionResult unchanged(const S& s, const snapshot<S>& before) {
  ::testing::AssertionResult r = same(s, before.value);
  if (!r) return r;
  if (s.capacity() != before.capacity) {
    return ::testing::AssertionFailure()
           << "capacity " << s.capacity() << ", was " << before.capacity;
  }
  if (s.data() != before.data) return ::testing::AssertionFailure() << "the buffer changed";
  return ::testing::AssertionSuccess();
}

enum class outcome { ok, out_of_range, length_error };
std::ostream& operator<<(std::ostream& os, outcome o) {
  return os << (o == outcome::ok             ? "completed"
                : o == outcome::out_of_range ? "threw std::out_of_range"
                                             : "threw std::length_error");
}

// Runs op(s, a) and reports how it ended; a result that is not void becomes `result`.
template <class Op, class T, class A>
outcome attempt(Op& op, T& s, const A& a, long long& result) {
  try {
    if constexpr (std::is_void_v<decltype(op(s, a))>) {
      op(s, a);
      result = 0;
    } else {
      result = static_cast<long long>(op(s, a));
    }
    return outcome::ok;
  } catch (const std::out_of_range&) {
    return outcome::out_of_range;
  } catch (const std::length_error&) {
    return outcome::length_error;
  }
}

// A position at the start, in the middle, at the end and past the end of a string of size n.
std::size_t position(std::size_t n, int where) {
  switch (where) {
    case 0:
      return 0;
    case 1:
      return n / 2;
    case 2:
      return n;
    default:
      return n + 1;
  }
}
constexpr int kWheres[] = {0, 1, 2, 3};
// The same places as iterators (clamped to end()).
template <class T>
auto iter(T& s, int where) {
  return s.begin() + static_cast<std::ptrdiff_t>(std::min(position(s.size(), where), s.size()));
}
template <class T>
long long offset(const T& s, typename T::const_iterator it) {
  return static_cast<long long>(it - s.cbegin());
}
int sign(long long x) { return (x > 0) - (x < 0); }

// A single-pass iterator over a buffer: the input-iterator overloads.
template <class C>
class input_iter {
 public:
  using iterator_category = std::input_iterator_tag;
  using value_type = C;
  using difference_type = std::ptrdiff_t;
  using pointer = const C*;
  using reference = const C&;
  explicit input_iter(const C* p) : p_(p) {}
  reference operator*() const { return *p_; }
  input_iter& operator++() {
    ++p_;
    return *this;
  }
  input_iter operator++(int) {
    input_iter t = *this;
    ++p_;
    return t;
  }
  friend bool operator==(input_iter a, input_iter b) { return a.p_ == b.p_; }
  friend bool operator!=(input_iter a, input_iter b) { return a.p_ != b.p_; }

 private:
  const C* p_;
};

// ---- light assertions for the typed tests -------------------------------------------------------

// The typed tests run for seven string types, so each of their assertions is compiled seven
// times. gtest's EXPECT_* expands to a good deal of code at every use; these LOWALLOC_CHECK_*
// expand to one call (the message is built only on failure), which keeps the compile time of this
// file in check (under ASan especially). Same meaning as EXPECT_*, and << adds context.
class check_result {
 public:
  check_result(bool ok, const char* file, int line) noexcept : ok_(ok), file_(file), line_(line) {}
  check_result(check_result&& o) noexcept
      : ok_(std::exchange(o.ok_, true)),
        file_(o.file_),
        line_(o.line_),
        message_(std::move(o.message_)) {}
  check_result(const check_result&) = delete;
  check_result& operator=(const check_result&) = delete;
  check_result& operator=(check_result&&) = delete;
  ~check_result() {
    if (!ok_) ADD_FAILURE_AT(file_, line_) << message_;
  }
  bool ok() const noexcept { return ok_; }
  template <class T>
  check_result& operator<<(const T& x) {
    if (!ok_) message_ += (::testing::Message() << x).GetString();
    return *this;
  }

 private:
  bool ok_;
  const char* file_;
  int line_;
  std::string message_;
};

check_result check_true(bool ok, const char* expr, const char* file, int line) {
  check_result r(ok, file, line);
  r << "expected true: " << expr << ". ";
  return r;
}
check_result check_true(const ::testing::AssertionResult& ok, const char* expr, const char* file,
                        int line) {
  check_result r(static_cast<bool>(ok), file, line);
  r << "expected true: " << expr << ": " << ok.message() << ". ";
  return r;
}
template <class A, class B, class Op>
check_result check_op(const A& a, const B& b, Op op, const char* expr, const char* file, int line) {
  check_result r(op(a, b), file, line);
  if (!r.ok()) {
    r << "expected " << expr << ", with " << ::testing::PrintToString(a) << " and "
      << ::testing::PrintToString(b) << ". ";
  }
  return r;
}
// Runs f and reports whether it threw Expected.
template <class Expected, class F>
check_result check_throw(F f, const char* expr, const char* what, const char* file, int line) {
  const char* got = "nothing";
  try {
    f();
  } catch (const Expected&) {
    return check_result(true, file, line);
  } catch (const std::exception& e) {
    got = typeid(e).name();
  } catch (...) {
    got = "a non-std exception";
  }
  check_result r(false, file, line);
  r << expr << " should throw " << what << "; it threw " << got << ". ";
  return r;
}

#define LOWALLOC_CHECK_TRUE(...) check_true((__VA_ARGS__), #__VA_ARGS__, __FILE__, __LINE__)
#define LOWALLOC_CHECK_FALSE(...) \
  check_true(!(__VA_ARGS__), "!(" #__VA_ARGS__ ")", __FILE__, __LINE__)
#define LOWALLOC_CHECK_OP(a, b, op, text) \
  check_op((a), (b), op(), #a " " text " " #b, __FILE__, __LINE__)
#define LOWALLOC_CHECK_EQ(a, b) LOWALLOC_CHECK_OP(a, b, std::equal_to<>, "==")
#define LOWALLOC_CHECK_NE(a, b) LOWALLOC_CHECK_OP(a, b, std::not_equal_to<>, "!=")
#define LOWALLOC_CHECK_LT(a, b) LOWALLOC_CHECK_OP(a, b, std::less<>, "<")
#define LOWALLOC_CHECK_LE(a, b) LOWALLOC_CHECK_OP(a, b, std::less_equal<>, "<=")
#define LOWALLOC_CHECK_GT(a, b) LOWALLOC_CHECK_OP(a, b, std::greater<>, ">")
#define LOWALLOC_CHECK_GE(a, b) LOWALLOC_CHECK_OP(a, b, std::greater_equal<>, ">=")
#define LOWALLOC_CHECK_THROW(statement, exception) \
  check_throw<exception>([&] { statement; }, #statement, #exception, __FILE__, __LINE__)

// ---- a user-written storage ---------------------------------------------------------------------

// Follows the storage concept documented at the top of <lowalloc/string.hpp>: everything on the
// heap through new[] (an empty string has capacity 0), and it counts its calls.
struct storage_calls {
  long reserves = 0;
  long allocations = 0;
  long set_sizes = 0;
  long swaps = 0;
};
storage_calls& calls() {
  static storage_calls c;
  return c;
}

template <class C>
class counting_storage {
 public:
  using value_type = C;
  using size_type = std::size_t;

  counting_storage() noexcept = default;
  counting_storage(const counting_storage& o) {
    if (o.size_ != 0) {
      heap_ = allocate(o.size_);
      cap_ = o.size_;
    }
    std::copy(o.data(), o.data() + o.size_ + 1, data());
    size_ = o.size_;
  }
  counting_storage(counting_storage&& o) noexcept
      : heap_(std::exchange(o.heap_, nullptr)),
        size_(std::exchange(o.size_, 0)),
        cap_(std::exchange(o.cap_, 0)) {}
  counting_storage& operator=(const counting_storage& o) {
    if (o.size_ <= capacity()) {
      std::copy(o.data(), o.data() + o.size_ + 1, data());  // (self-assignment too)
      size_ = o.size_;
    } else {
      counting_storage t(o);
      swap(t);
    }
    return *this;
  }
  counting_storage& operator=(counting_storage&& o) noexcept {
    counting_storage t(std::move(o));
    swap(t);
    return *this;
  }
  ~counting_storage() { delete[] heap_; }

  void swap(counting_storage& o) noexcept {
    ++calls().swaps;
    std::swap(heap_, o.heap_);
    std::swap(size_, o.size_);
    std::swap(cap_, o.cap_);
  }
  C* data() noexcept { return heap_ != nullptr ? heap_ : &empty_; }
  const C* data() const noexcept { return heap_ != nullptr ? heap_ : &empty_; }
  size_type size() const noexcept { return size_; }
  size_type capacity() const noexcept { return heap_ != nullptr ? cap_ : 0; }
  size_type max_size() const noexcept { return size_type{1} << 31; }
  void set_size(size_type n) noexcept {
    ++calls().set_sizes;
    size_ = n;
    data()[n] = C();
  }
  void reserve(size_type n) {
    ++calls().reserves;
    if (n <= capacity()) return;
    if (n > max_size()) throw std::length_error("counting_storage::reserve");
    C* p = allocate(n);
    std::copy(data(), data() + size_ + 1, p);
    delete[] heap_;
    heap_ = p;
    cap_ = n;
  }
  void shrink_to_fit() {}

 private:
  static C* allocate(size_type n) {
    ++calls().allocations;
    return new C[n + 1];
  }
  C* heap_ = nullptr;
  size_type size_ = 0;
  size_type cap_ = 0;
  C empty_ = C();
};
using counting_string = lowalloc::basic_string<char, counting_storage<char>>;

// ---- typed tests: the whole interface against std::basic_string ---------------------------------

enum class kind { small, fixed, custom };

template <class S, std::size_t Inline, kind K>
struct param {
  using str = S;
  static constexpr std::size_t inline_capacity = Inline;
  static constexpr kind storage = K;
};
using params = ::testing::Types<
    param<small_string<24>, 23, kind::small>, param<small_string<32>, 31, kind::small>,
    param<small_string<64>, 63, kind::small>, param<small_string<16>, 15, kind::small>,
    param<fixed_string<64>, 64, kind::fixed>, param<lowalloc::small_wstring<8>, 7, kind::small>,
    param<counting_string, 0, kind::custom>>;
struct param_names {
  template <class P>
  static std::string GetName(int) {
    using C = typename P::str::value_type;
    std::string name = std::is_same_v<C, char> ? "" : "w";
    if (P::storage == kind::custom) return name + "custom_storage";
    name += P::storage == kind::fixed ? "fixed" : "small";
    return name +
           std::to_string(P::storage == kind::fixed ? P::inline_capacity : P::inline_capacity + 1);
  }
};

template <class P>
class StringT : public ::testing::Test {
 public:
  using str_type = typename P::str;
  using char_type = typename str_type::value_type;
  using ref_type = std::basic_string<char_type>;
  using view_type = std::basic_string_view<char_type>;
  static constexpr std::size_t kInline = P::inline_capacity;  // capacity() when inline
  static constexpr bool kFixed = P::storage == kind::fixed;
  static constexpr bool kSmall = P::storage == kind::small;
  static constexpr std::size_t kMax = kFixed ? kInline : npos;  // longest string the tests build

  static constexpr char_type ch(char c) { return static_cast<char_type>(c); }
  static ref_type txt(std::size_t n, std::size_t seed = 0) { return text<char_type>(n, seed); }
  static ref_type w(std::string_view s) { return widen<char_type>(s); }
  static str_type make_s(const ref_type& t) { return str_type(t.data(), t.size()); }

  // Empty, one, just below, at and just above the inline capacity, well onto the heap.
  static std::vector<std::size_t> lengths() {
    std::vector<std::size_t> out;
    for (std::size_t n : {std::size_t{0}, std::size_t{1}, kInline - 1, kInline, kInline + 1,
                          2 * kInline + 3, std::size_t{40}}) {
      if (n <= kMax && n != npos) out.push_back(n);
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
  }
  // Arguments: empty, one character, short, about the inline capacity, long.
  static std::vector<ref_type> args() {
    return {ref_type(), w("x"), w("hello"), txt(kInline, 3), txt(2 * kInline + 1, 7)};
  }

  // natural: as built by appending; reserved: on the heap with spare room even when short.
  enum class layout { natural, reserved };
  static str_type make(std::size_t n, layout l) {
    str_type s;
    if (l == layout::reserved) s.reserve(std::min(s.max_size(), std::max(n + 8, kInline + 1)));
    const ref_type t = txt(n);
    s.append(t.data(), t.size());
    return s;
  }

  // Runs the mutation op(s, a) on std::basic_string and on str_type, from every starting length and
  // layout, with `arg` as a (same-typed) argument; both must end alike: the same value and result,
  // or the same exception with str_type unchanged. A fixed_string whose result would exceed N must
  // throw std::length_error instead. str_type allocates at most once, and not at all when the
  // result fits the capacity it had (or when it is a fixed_string).
  template <class Op>
  static void mutation(const char* what, const ref_type& arg, Op op) {
    check_mutation(what, arg,
                   std::function<long long(ref_type&, const ref_type&)>(
                       [op](ref_type& s, const ref_type& a) mutable {
                         long long r = 0;
                         const outcome o = attempt(op, s, a, r);
                         if (o == outcome::out_of_range) throw std::out_of_range("std");
                         if (o == outcome::length_error) throw std::length_error("std");
                         return r;
                       }),
                   std::function<outcome(str_type&, const str_type&, long long&)>(
                       [op](str_type& s, const str_type& a, long long& r) mutable {
                         return attempt(op, s, a, r);
                       }));
  }
  template <class Op>
  static void mutation(const char* what, Op op) {
    mutation(what, ref_type(), op);
  }

  static void check_mutation(
      const char* what, const ref_type& arg_text,
      const std::function<long long(ref_type&, const ref_type&)>& on_std,
      const std::function<outcome(str_type&, const str_type&, long long&)>& on_s) {
    const ref_type ref_arg = arg_text.substr(0, std::min(arg_text.size(), kMax));
    const str_type arg = make_s(ref_arg);
    for (std::size_t len : lengths()) {
      for (layout l : {layout::natural, layout::reserved}) {
        // (Built only for a failure message: a SCOPED_TRACE here would cost more than the test.)
        const auto context = [&] {
          return ::testing::Message() << what << " on a string of length " << len
                                      << (l == layout::reserved ? " with reserved room" : "")
                                      << ", argument " << show(ref_arg) << ": ";
        };
        ref_type ref = txt(len);
        long long ref_result = 0;
        outcome expected = outcome::ok;
        try {
          ref_result = on_std(ref, ref_arg);
        } catch (const std::out_of_range&) {
          expected = outcome::out_of_range;
        } catch (const std::length_error&) {
          expected = outcome::length_error;
        }
        str_type s = make(len, l);
        const snapshot<str_type> before = take(s);
        if (expected == outcome::ok && ref.size() > s.max_size()) expected = outcome::length_error;
        long long result = 0;
        lowalloc::alloc_counter scope;
        const outcome got = on_s(s, arg, result);
        const std::size_t allocations = scope.allocations();
        EXPECT_EQ(got, expected) << context();
        if (got != outcome::ok) {
          // (Throwing allocates the exception object: the count says nothing here.)
          EXPECT_TRUE(unchanged(s, before)) << context() << "after it threw";
          continue;
        }
        if (expected != outcome::ok) continue;
        EXPECT_TRUE(same(s, ref)) << context();
        EXPECT_EQ(result, ref_result) << context() << "returned a different value";
        if (kFixed) {
          EXPECT_EQ(allocations, 0u) << context();
          EXPECT_EQ(s.capacity(), kInline) << context();
        } else {
          EXPECT_LE(allocations, 1u) << context() << "one operation, one allocation at most";
          if (ref.size() <= before.capacity) {
            EXPECT_EQ(allocations, 0u)
                << context() << "the result fit the capacity " << before.capacity;
          }
          if (before.capacity == kInline && ref.size() <= kInline) {
            EXPECT_EQ(s.capacity(), kInline) << context() << "left the inline storage needlessly";
          }
        }
      }
    }
  }

  // Runs every operation of a family: op(which, s, a) performs operation `which` (named
  // names[which]); one lambda per family keeps the number of instantiations (and the compile
  // time) down.
  template <std::size_t K, class Op>
  static void mutations(const char* const (&names)[K], const ref_type& arg, Op op,
                        std::size_t first = 0, std::size_t last = K) {
    for (std::size_t i = first; i < last; ++i) {
      mutation(names[i], arg, [i, op](auto& s, const auto& a) { return op(i, s, a); });
    }
  }
  template <std::size_t K, class Op>
  static void queries(const char* const (&names)[K], const ref_type& arg, Op op,
                      std::size_t first = 0, std::size_t last = K) {
    for (std::size_t i = first; i < last; ++i) {
      query(names[i], arg, [i, op](const auto& s, const auto& a) { return op(i, s, a); });
    }
  }

  // A query op(s, a) returns the same value (or throws the same exception) on both, and never
  // allocates.
  template <class Op>
  static void query(const char* what, const ref_type& arg_text, Op op) {
    const ref_type ref_arg = arg_text.substr(0, std::min(arg_text.size(), kMax));
    const str_type arg = make_s(ref_arg);
    for (std::size_t len : lengths()) {
      const auto context = [&] {
        return ::testing::Message() << what << " on a string of length " << len << ", argument "
                                    << show(ref_arg) << ": ";
      };
      ref_type ref = txt(len);
      str_type s = make(len, layout::natural);
      long long want = 0, got = 0;
      const outcome expected = attempt(op, ref, ref_arg, want);
      lowalloc::alloc_counter scope;
      const outcome o = attempt(op, s, arg, got);
      const std::size_t allocations = scope.allocations();
      EXPECT_EQ(o, expected) << context();
      if (o == outcome::ok && expected == outcome::ok) {
        EXPECT_EQ(got, want) << context();
        EXPECT_EQ(allocations, 0u) << context();
      }
    }
  }
};
TYPED_TEST_SUITE(StringT, params, param_names);

// What goes through string_view and does not depend on the layout (search, comparison, element
// access, hashing, conversions) runs over fewer types: one of each kind.
template <class P>
class StringV : public StringT<P> {};
using view_params = ::testing::Types<
    param<small_string<24>, 23, kind::small>, param<fixed_string<64>, 64, kind::fixed>,
    param<lowalloc::small_wstring<8>, 7, kind::small>, param<counting_string, 0, kind::custom>>;
TYPED_TEST_SUITE(StringV, view_params, param_names);

TYPED_TEST(StringT, DefaultConstructedIsEmptyInlineAndDoesNotAllocate) {
  using S = typename TestFixture::str_type;
  lowalloc::alloc_counter scope;
  S s;
  const S t{};
  const std::size_t allocations = scope.allocations();
  LOWALLOC_CHECK_EQ(allocations, 0u);
  LOWALLOC_CHECK_TRUE(same(s, {}));
  LOWALLOC_CHECK_TRUE(same(t, {}));
  LOWALLOC_CHECK_EQ(s.capacity(), TestFixture::kInline);
  LOWALLOC_CHECK_EQ(s.begin(), s.end());
  LOWALLOC_CHECK_EQ(s[0], typename S::value_type());  // s[size()] is the terminator
  if (TestFixture::kFixed) {
    LOWALLOC_CHECK_EQ(s.max_size(), TestFixture::kInline);
  } else {
    LOWALLOC_CHECK_GE(s.max_size(), std::size_t{1} << 30);
    LOWALLOC_CHECK_LT(s.max_size(), npos);
  }
  LOWALLOC_CHECK_EQ(s.get_allocator(), typename S::allocator_type());
}

TYPED_TEST(StringT, ConstructorsMatchStd) {
  using S = typename TestFixture::str_type;
  using C = typename TestFixture::char_type;
  using ref_t = typename TestFixture::ref_type;
  using view_t = typename TestFixture::view_type;
  const auto a = typename S::allocator_type();
  for (std::size_t n : TestFixture::lengths()) {
    SCOPED_TRACE(::testing::Message() << "length " << n);
    const ref_t t = TestFixture::txt(n);
    const view_t v(t);
    LOWALLOC_CHECK_TRUE(same(S(t.c_str()), t));
    LOWALLOC_CHECK_TRUE(same(S(t.c_str(), a), t));
    LOWALLOC_CHECK_TRUE(same(S(t.data(), n), t));
    LOWALLOC_CHECK_TRUE(same(S(t.data(), n, a), t));
    LOWALLOC_CHECK_TRUE(same(S(n, TestFixture::ch('z')), ref_t(n, TestFixture::ch('z'))));
    LOWALLOC_CHECK_TRUE(same(S(n, TestFixture::ch('z'), a), ref_t(n, TestFixture::ch('z'))));
    LOWALLOC_CHECK_TRUE(same(S(t.begin(), t.end()), t));
    LOWALLOC_CHECK_TRUE(same(S(t.begin(), t.end(), a), t));
    LOWALLOC_CHECK_TRUE(same(S(input_iter<C>(t.data()), input_iter<C>(t.data() + n)), t));
    LOWALLOC_CHECK_TRUE(same(S(v), t));
    LOWALLOC_CHECK_TRUE(same(S(v, a), t));
    LOWALLOC_CHECK_TRUE(same(S(v, n / 2, 3), t.substr(n / 2, 3)));
    LOWALLOC_CHECK_TRUE(same(S(v, n / 3, npos, a), t.substr(n / 3)));
    LOWALLOC_CHECK_TRUE(same(S(t), t));  // from std::basic_string
    LOWALLOC_CHECK_TRUE(same(S(t, n / 2), t.substr(n / 2)));
    LOWALLOC_CHECK_TRUE(same(S(t, 1 % (n + 1), 4), t.substr(1 % (n + 1), 4)));
    const S src(t.data(), n);
    LOWALLOC_CHECK_TRUE(same(S(src), t));
    LOWALLOC_CHECK_TRUE(same(S(src, a), t));
    LOWALLOC_CHECK_TRUE(same(S(src, n / 2), t.substr(n / 2)));
    LOWALLOC_CHECK_TRUE(same(S(src, n / 2, a), t.substr(n / 2)));
    LOWALLOC_CHECK_TRUE(same(S(src, n / 4, 5), t.substr(n / 4, 5)));
    LOWALLOC_CHECK_TRUE(same(S(src, n / 4, 5, a), t.substr(n / 4, 5)));
    LOWALLOC_CHECK_TRUE(same(S(src, n), ref_t()));
    LOWALLOC_CHECK_THROW(S(src, n + 1), std::out_of_range);
    LOWALLOC_CHECK_THROW(S(src, n + 1, 2), std::out_of_range);
    LOWALLOC_CHECK_THROW(S(t, n + 1, 2), std::out_of_range);
    LOWALLOC_CHECK_THROW(S(v, n + 1, 2), std::out_of_range);
    S moved_from(src);
    const S moved(std::move(moved_from));
    LOWALLOC_CHECK_TRUE(same(moved, t));
    // Documented in <lowalloc/string.hpp>: "a moved-from string is empty".
    LOWALLOC_CHECK_TRUE(same(moved_from, ref_t()));  // NOLINT(bugprone-use-after-move)
    S assigned_from(src);
    S assigned;
    assigned = std::move(assigned_from);
    LOWALLOC_CHECK_TRUE(same(assigned, t));
    LOWALLOC_CHECK_TRUE(same(assigned_from, ref_t()));  // NOLINT(bugprone-use-after-move)
    S moved_from2(src);
    LOWALLOC_CHECK_TRUE(same(S(std::move(moved_from2), a), t));
  }
  const std::initializer_list<C> il = {TestFixture::ch('a'), C(), TestFixture::ch('b')};
  LOWALLOC_CHECK_TRUE(same(S(il), ref_t(il)));
  LOWALLOC_CHECK_TRUE(same(S(il, a), ref_t(il)));
  LOWALLOC_CHECK_TRUE(same(S(TestFixture::w("abc").c_str()), TestFixture::w("abc")));
  const S from_literal = TestFixture::w("implicit").c_str();  // implicit from const CharT*
  LOWALLOC_CHECK_TRUE(same(from_literal, TestFixture::w("implicit")));
  // (count, ch) is not (first, last): S(3, 'x') is "xxx" for an integer count too.
  LOWALLOC_CHECK_TRUE(same(S(3, TestFixture::ch('x')), TestFixture::w("xxx")));
  LOWALLOC_CHECK_TRUE(
      same(S(static_cast<unsigned char>(2), TestFixture::ch('x')), TestFixture::w("xx")));
}

TYPED_TEST(StringT, ConstructionAllocatesOnlyWhenTheTextDoesNotFitInline) {
  using S = typename TestFixture::str_type;
  using ref_t = typename TestFixture::ref_type;
  constexpr std::size_t K = TestFixture::kInline;
  const ref_t fits = TestFixture::txt(K);
  {
    lowalloc::alloc_counter scope;
    S a(fits.c_str());
    S b(fits.data(), K);
    S c(K, TestFixture::ch('c'));
    S d(fits.begin(), fits.end());
    S e{typename TestFixture::view_type(fits)};
    S f(fits);
    S g(a);
    S h(std::move(b));
    S i(a, K / 2);
    S j;
    j = a;
    S k2;
    k2 = std::move(c);
    S l;
    l.assign(fits.data(), K);
    const std::size_t allocations = scope.allocations();
    LOWALLOC_CHECK_EQ(allocations, 0u) << "strings of up to the inline capacity never allocate";
    for (const S* x : {&a, &d, &e, &f, &g, &h, &j, &l}) LOWALLOC_CHECK_TRUE(same(*x, fits));
    LOWALLOC_CHECK_TRUE(same(k2, ref_t(K, TestFixture::ch('c'))));
    LOWALLOC_CHECK_EQ(a.capacity(), K);
  }
  if (TestFixture::kFixed) return;  // a fixed_string cannot hold more
  const ref_t spills = TestFixture::txt(K + 1);
  const ref_t longer = TestFixture::txt(5 * K + 7);
  for (const ref_t* t : {&spills, &longer}) {
    SCOPED_TRACE(::testing::Message() << "length " << t->size());
    LOWALLOC_EXPECT_ALLOCATIONS(1, S a(t->c_str()));
    LOWALLOC_EXPECT_ALLOCATIONS(1, S a(t->data(), t->size()));
    LOWALLOC_EXPECT_ALLOCATIONS(1, S a(t->size(), TestFixture::ch('c')));
    LOWALLOC_EXPECT_ALLOCATIONS(1, S a(t->begin(), t->end()));
    LOWALLOC_EXPECT_ALLOCATIONS(1, S a(*t));
    const S heap(*t);
    LOWALLOC_CHECK_GE(heap.capacity(), t->size());
    LOWALLOC_EXPECT_ALLOCATIONS(1, S a(heap));  // a copy of a heap string
    if (TestFixture::kSmall) {
      LOWALLOC_EXPECT_ALLOCATIONS(0, S a(heap, 2 + t->size() - K));  // the tail fits inline
    }
    S source(heap);
    const auto* buffer = source.data();
    lowalloc::alloc_counter scope;
    S moved(std::move(source));  // a move hands the buffer over
    const std::size_t allocations = scope.allocations();
    LOWALLOC_CHECK_EQ(allocations, 0u);
    LOWALLOC_CHECK_EQ(moved.data(), buffer);
    LOWALLOC_CHECK_TRUE(same(moved, *t));
    LOWALLOC_CHECK_TRUE(
        same(source, ref_t(source.data(), source.size())));  // NOLINT: valid after move
    S target(TestFixture::txt(3).c_str());
    scope.reset();
    target = std::move(moved);
    const std::size_t assign_allocations = scope.allocations();
    LOWALLOC_CHECK_EQ(assign_allocations, 0u);
    LOWALLOC_CHECK_EQ(target.data(), buffer);
  }
}

TYPED_TEST(StringT, AssignMatchesStd) {
  using view_t = typename TestFixture::view_type;
  static constexpr const char* kOps[] = {
      "s = a",                            // 0
      "s = a.c_str()",                    // 1
      "s = view",                         // 2
      "assign(a)",                        // 3
      "assign(a, 1, 3)",                  // 4
      "assign(a, 2)",                     // 5
      "assign(a, size, 1)",               // 6
      "assign(a, size + 1, 1)",           // 7
      "assign(p, n)",                     // 8
      "assign(p)",                        // 9
      "assign(first, last)",              // 10
      "assign(view)",                     // 11
      "assign(view, 1, 2)",               // 12
      "assign(view, size + 1, 2)",        // 13
      "s = std::basic_string",            // 14
      "assign(std::basic_string)",        // 15
      "assign(std::basic_string, 1, 2)",  // 16
      "assign(inline, c)",                // 17
      "assign(inline + 1, c)",            // 18
      "assign(0, c)",                     // 19
      "assign(npos, c)",                  // 20
      "s = c",                            // 21
      "s = {...}",                        // 22
      "assign({...})",                    // 23
      "s = s (self)",                     // 24
      "assign(s)",                        // 25
      "assign(s, 1, npos)",               // 26
      "assign(s.c_str() + size / 2)",     // 27
      "assign(s.data(), size / 2)",       // 28
      "assign(s.begin() + 1, s.end())",   // 29
      "assign(view of s, 1, 4)",          // 30
  };
  typename TestFixture::ref_type std_arg;
  const auto op = [&std_arg](std::size_t which, auto& s, const auto& a) {
    constexpr std::size_t K = TestFixture::kInline;
    const auto q = TestFixture::ch('q');
    switch (which) {
      case 0:
        s = a;
        break;
      case 1:
        s = a.c_str();
        break;
      case 2:
        s = view_t(a);
        break;
      case 3:
        s.assign(a);
        break;
      case 4:
        s.assign(a, 1, 3);
        break;
      case 5:
        s.assign(a, 2);
        break;
      case 6:
        s.assign(a, a.size(), 1);
        break;
      case 7:
        s.assign(a, a.size() + 1, 1);
        break;
      case 8:
        s.assign(a.data(), a.size() / 2);
        break;
      case 9:
        s.assign(a.c_str());
        break;
      case 10:
        s.assign(a.begin(), a.end());
        break;
      case 11:
        s.assign(view_t(a));
        break;
      case 12:
        s.assign(view_t(a), 1, 2);
        break;
      case 13:
        s.assign(view_t(a), a.size() + 1, 2);
        break;
      case 14:
        s = std_arg;
        break;
      case 15:
        s.assign(std_arg);
        break;
      case 16:
        s.assign(std_arg, 1, 2);
        break;
      case 17:
        s.assign(K, q);
        break;
      case 18:
        s.assign(K + 1, q);
        break;
      case 19:
        s.assign(0, q);
        break;
      case 20:
        s.assign(npos, q);
        break;
      case 21:
        s = TestFixture::ch('c');
        break;
      case 22:
        s = {TestFixture::ch('a'), TestFixture::ch('b')};
        break;
      case 23:
        s.assign({TestFixture::ch('a'), TestFixture::ch('b'), q});
        break;
      case 24: {
        const auto& self = s;
        s = self;
        break;
      }
      case 25:
        s.assign(s);
        break;
      case 26:
        s.assign(s, 1, npos);
        break;
      case 27:
        s.assign(s.c_str() + s.size() / 2);
        break;
      case 28:
        s.assign(s.data(), s.size() / 2);
        break;
      case 29:
        s.assign(iter(s, 1), s.end());
        break;
      case 30:
        s.assign(view_t(s), 1 % (s.size() + 1), 4);
        break;
    }
    return 0LL;
  };
  // The forms that take an argument for every argument, the others once.
  for (const auto& arg : TestFixture::args()) {
    std_arg = arg.substr(0, std::min(arg.size(), TestFixture::kMax));
    this->mutations(kOps, arg, op, 0, 17);
  }
  this->mutations(kOps, {}, op, 17);
}

TYPED_TEST(StringT, AppendMatchesStd) {
  using C = typename TestFixture::char_type;
  using view_t = typename TestFixture::view_type;
  static constexpr const char* kOps[] = {
      "append(a)",                          // 0
      "append(a, 1, 3)",                    // 1
      "append(a, 2)",                       // 2
      "append(a, size + 1, 1)",             // 3
      "append(p)",                          // 4
      "append(p, n)",                       // 5
      "append(first, last)",                // 6
      "append(view)",                       // 7
      "append(view, 1, 2)",                 // 8
      "append(view, size + 1)",             // 9
      "s += a",                             // 10
      "s += p",                             // 11
      "s += view",                          // 12
      "append(std::basic_string)",          // 13
      "s += std::basic_string",             // 14
      "append(3, c)",                       // 15
      "append(inline + 1, c)",              // 16
      "append(npos, c)",                    // 17
      "append(max_size(), c)",              // 18
      "append({...})",                      // 19
      "s += c",                             // 20
      "s += {...}",                         // 21
      "push_back(c)",                       // 22
      "push_back(NUL)",                     // 23
      "append(s)",                          // 24
      "s += s",                             // 25
      "append(s, 1, npos)",                 // 26
      "append(s.c_str())",                  // 27
      "append(s.data() + size / 2, rest)",  // 28
      "append(s.begin(), s.end())",         // 29
      "append(view of s)",                  // 30
      "push_back(s[0])",                    // 31
  };
  typename TestFixture::ref_type std_arg;
  const auto op = [&std_arg](std::size_t which, auto& s, const auto& a) {
    constexpr std::size_t K = TestFixture::kInline;
    const auto q = TestFixture::ch('q');
    switch (which) {
      case 0:
        s.append(a);
        break;
      case 1:
        s.append(a, 1, 3);
        break;
      case 2:
        s.append(a, 2);
        break;
      case 3:
        s.append(a, a.size() + 1, 1);
        break;
      case 4:
        s.append(a.c_str());
        break;
      case 5:
        s.append(a.data(), a.size() / 2);
        break;
      case 6:
        s.append(a.begin(), a.end());
        break;
      case 7:
        s.append(view_t(a));
        break;
      case 8:
        s.append(view_t(a), 1, 2);
        break;
      case 9:
        s.append(view_t(a), a.size() + 1);
        break;
      case 10:
        s += a;
        break;
      case 11:
        s += a.c_str();
        break;
      case 12:
        s += view_t(a);
        break;
      case 13:
        s.append(std_arg);
        break;
      case 14:
        s += std_arg;
        break;
      case 15:
        s.append(3, q);
        break;
      case 16:
        s.append(K + 1, q);
        break;
      case 17:
        s.append(npos, q);
        break;
      case 18:
        if (!s.empty()) s.append(s.max_size(), q);
        break;
      case 19:
        s.append({TestFixture::ch('a'), TestFixture::ch('b')});
        break;
      case 20:
        s += TestFixture::ch('c');
        break;
      case 21:
        s += {TestFixture::ch('c')};
        break;
      case 22:
        s.push_back(TestFixture::ch('p'));
        break;
      case 23:
        s.push_back(C());
        break;
      case 24:
        s.append(s);
        break;
      case 25:
        s += s;
        break;
      case 26:
        if (!s.empty()) s.append(s, 1, npos);
        break;
      case 27:
        s.append(s.c_str());
        break;
      case 28:
        s.append(s.data() + s.size() / 2, s.size() - s.size() / 2);
        break;
      case 29:
        s.append(s.begin(), s.end());
        break;
      case 30:
        s.append(view_t(s));
        break;
      case 31:
        if (!s.empty()) s.push_back(s[0]);
        break;
    }
    return 0LL;
  };
  // The forms that take an argument for every argument, the others once.
  for (const auto& arg : TestFixture::args()) {
    std_arg = arg.substr(0, std::min(arg.size(), TestFixture::kMax));
    this->mutations(kOps, arg, op, 0, 15);
  }
  this->mutations(kOps, {}, op, 15);
}

TYPED_TEST(StringT, InputIteratorsMatchStd) {
  // Input iterators cannot tell their length: no single-allocation promise, only the values.
  using S = typename TestFixture::str_type;
  using C = typename TestFixture::char_type;
  for (std::size_t len : TestFixture::lengths()) {
    for (const auto& arg : TestFixture::args()) {
      auto ref = TestFixture::txt(len);
      S s(ref.data(), ref.size());
      const auto* first = arg.data();
      const auto* last = arg.data() + std::min(arg.size(), TestFixture::kMax - ref.size());
      ref.append(input_iter<C>(first), input_iter<C>(last));
      s.append(input_iter<C>(first), input_iter<C>(last));
      LOWALLOC_CHECK_TRUE(same(s, ref));
      if (ref.empty() || arg.empty() || ref.size() + 2 > TestFixture::kMax) continue;
      ref.insert(ref.begin() + 1, input_iter<C>(first), input_iter<C>(first + 1));
      const auto it = s.insert(s.begin() + 1, input_iter<C>(first), input_iter<C>(first + 1));
      LOWALLOC_CHECK_EQ(it - s.begin(), 1);
      LOWALLOC_CHECK_TRUE(same(s, ref));
      ref.replace(ref.begin(), ref.begin() + 1, input_iter<C>(first), input_iter<C>(first + 1));
      s.replace(s.begin(), s.begin() + 1, input_iter<C>(first), input_iter<C>(first + 1));
      LOWALLOC_CHECK_TRUE(same(s, ref));
      ref.replace(ref.begin() + 1, ref.end(), input_iter<C>(first), input_iter<C>(last));
      s.replace(s.begin() + 1, s.end(), input_iter<C>(first), input_iter<C>(last));
      LOWALLOC_CHECK_TRUE(same(s, ref));
      ref.assign(input_iter<C>(first), input_iter<C>(last));
      s.assign(input_iter<C>(first), input_iter<C>(last));
      LOWALLOC_CHECK_TRUE(same(s, ref));
    }
  }
}

TYPED_TEST(StringT, InsertMatchesStd) {
  using C = typename TestFixture::char_type;
  using view_t = typename TestFixture::view_type;
  static constexpr const char* kOps[] = {
      "insert(pos, a)",                                // 0
      "insert(pos, a, 1, 2)",                          // 1
      "insert(pos, a, size + 1, 2)",                   // 2
      "insert(pos, p)",                                // 3
      "insert(pos, p, n)",                             // 4
      "insert(pos, view)",                             // 5
      "insert(pos, view, 1, npos)",                    // 6
      "insert(it, first, last)",                       // 7
      "insert(pos, 2, c)",                             // 8
      "insert(pos, npos, c)",                          // 9
      "insert(it, c)",                                 // 10
      "insert(const_it, c)",                           // 11
      "insert(it, 3, c)",                              // 12
      "insert(it, {...})",                             // 13
      "insert(pos, s)",                                // 14
      "insert(pos, s, 1, 3)",                          // 15
      "insert(pos, s.c_str())",                        // 16
      "insert(pos, s.data() + size / 2, size / 2)",    // 17
      "insert(it, s.begin(), s.end())",                // 18
      "insert(pos, view of s)",                        // 19
      "insert(0, 1, c) (a literal 0 is no iterator)",  // 20
  };
  const auto args = TestFixture::args();
  for (int where : kWheres) {
    SCOPED_TRACE(::testing::Message() << "position " << where);
    const auto op = [where](std::size_t which, auto& s, const auto& a) -> long long {
      using T = std::decay_t<decltype(s)>;
      const auto c = TestFixture::ch('c');
      const std::size_t pos = position(s.size(), where);
      switch (which) {
        case 0:
          s.insert(pos, a);
          break;
        case 1:
          s.insert(pos, a, 1, 2);
          break;
        case 2:
          s.insert(pos, a, a.size() + 1, 2);
          break;
        case 3:
          s.insert(pos, a.c_str());
          break;
        case 4:
          s.insert(pos, a.data(), std::min<std::size_t>(a.size(), 3));
          break;
        case 5:
          s.insert(pos, view_t(a));
          break;
        case 6:
          s.insert(pos, view_t(a), 1, npos);
          break;
        case 7:
          return offset(s, s.insert(iter(s, where), a.begin(), a.end()));
        case 8:
          s.insert(pos, 2, c);
          break;
        case 9:
          s.insert(pos, npos, c);
          break;
        case 10:
          return offset(s, s.insert(iter(s, where), c));
        case 11:
          return offset(s, s.insert(typename T::const_iterator(iter(s, where)), c));
        case 12:
          return offset(s, s.insert(iter(s, where), 3, c));
        case 13:
          return offset(s, s.insert(iter(s, where), {TestFixture::ch('a'), C()}));
        case 14:
          s.insert(pos, s);
          break;
        case 15:
          s.insert(pos, s, 1, 3);
          break;
        case 16:
          s.insert(pos, s.c_str());
          break;
        case 17:
          s.insert(pos, s.data() + s.size() / 2, s.size() / 2);
          break;
        case 18:
          return offset(s, s.insert(iter(s, where), s.begin(), s.end()));
        case 19:
          s.insert(pos, view_t(s));
          break;
        case 20:
          s.insert(0, 1, c);
          break;
      }
      return 0;
    };
    // The forms that take an argument for every argument (past the end, where they throw
    // whatever it is, for one), the others once.
    for (std::size_t k = 0; k < args.size(); ++k) {
      if (where != 3 || k == 1) this->mutations(kOps, args[k], op, 0, 8);
    }
    this->mutations(kOps, {}, op, 8);
  }
}

TYPED_TEST(StringT, EraseMatchesStd) {
  static constexpr const char* kOps[] = {
      "erase(pos)",        // 0
      "erase(pos, 3)",     // 1
      "erase(pos, 0)",     // 2
      "&erase(pos, 1)",    // 3
      "erase(it)",         // 4
      "erase(it, end)",    // 5
      "erase(begin, it)",  // 6
      "erase()",           // 7
      "clear()",           // 8
      "pop_back()",        // 9
  };
  for (int where : kWheres) {
    SCOPED_TRACE(::testing::Message() << "position " << where);
    this->mutations(kOps, {}, [where](std::size_t which, auto& s, const auto&) -> long long {
      const std::size_t pos = position(s.size(), where);
      switch (which) {
        case 0:
          s.erase(pos);
          break;
        case 1:
          s.erase(pos, 3);
          break;
        case 2:
          s.erase(pos, 0);
          break;
        case 3:
          return &s.erase(pos, 1) == &s;
        case 4:
          return s.empty() || where >= 2 ? -1 : offset(s, s.erase(iter(s, where)));
        case 5:
          return offset(s, s.erase(iter(s, where), s.end()));
        case 6:
          return offset(s, s.erase(s.begin(), iter(s, where)));
        case 7:
          s.erase();
          break;
        case 8:
          s.clear();
          break;
        case 9:
          if (!s.empty()) s.pop_back();
          break;
      }
      return 0;
    });
  }
  // clear() keeps the capacity, like std::string.
  auto s = TestFixture::make(TestFixture::kMax == npos ? 3 * TestFixture::kInline + 3 : 10,
                             TestFixture::layout::natural);
  const auto capacity = s.capacity();
  s.clear();
  LOWALLOC_CHECK_EQ(s.capacity(), capacity);
  LOWALLOC_CHECK_TRUE(same(s, {}));
}

TYPED_TEST(StringT, ReplaceMatchesStd) {
  using view_t = typename TestFixture::view_type;
  // (pos, count, ...) forms, for every count.
  static constexpr const char* kCounted[] = {
      "replace(pos, n, a)",               // 0
      "replace(pos, n, a, 1, 3)",         // 1
      "replace(pos, n, a, size + 1, 3)",  // 2
      "replace(pos, n, p, n2)",           // 3
      "replace(pos, n, p)",               // 4
      "replace(pos, n, view)",            // 5
      "replace(pos, n, view, 2, npos)",   // 6
  };
  static constexpr const char* kOthers[] = {
      "replace(i1, i2, a)",                       // 0
      "replace(i1, end, p, n)",                   // 1
      "replace(begin, i2, p)",                    // 2
      "replace(i1, end, view)",                   // 3
      "replace(begin, i2, first, last)",          // 4
      "replace(pos, 1, 3, c)",                    // 5
      "replace(pos, 3, 1, c)",                    // 6
      "replace(pos, 0, inline + 1, c)",           // 7
      "replace(pos, 0, npos, c)",                 // 8
      "replace(i1, end, 2, c)",                   // 9
      "replace(begin, i2, {...})",                // 10
      "replace(pos, 2, s)",                       // 11
      "replace(pos, 2, s, 1, 4)",                 // 12
      "replace(pos, 1, s.data() + size / 2, 3)",  // 13
      "replace(pos, 4, s.c_str())",               // 14
      "replace(pos, 1, s.data(), size)",          // 15
      "replace(i1, end, s.begin(), s.end())",     // 16
      "replace(begin, i2, view of s)",            // 17
  };
  const auto args = TestFixture::args();
  for (int where : kWheres) {
    SCOPED_TRACE(::testing::Message() << "position " << where);
    for (std::size_t count : {std::size_t{0}, std::size_t{2}, npos}) {
      SCOPED_TRACE(::testing::Message() << "count " << count);
      const auto counted = [where, count](std::size_t which, auto& s, const auto& a) {
        const std::size_t pos = position(s.size(), where);
        switch (which) {
          case 0:
            s.replace(pos, count, a);
            break;
          case 1:
            s.replace(pos, count, a, 1, 3);
            break;
          case 2:
            s.replace(pos, count, a, a.size() + 1, 3);
            break;
          case 3:
            s.replace(pos, count, a.data(), a.size() / 2);
            break;
          case 4:
            s.replace(pos, count, a.c_str());
            break;
          case 5:
            s.replace(pos, count, view_t(a));
            break;
          case 6:
            s.replace(pos, count, view_t(a), 2, npos);
            break;
        }
        return 0LL;
      };
      // Past the end they throw whatever the argument is: one argument there.
      for (std::size_t k = 0; k < args.size(); ++k) {
        if (where != 3 || k == 1) this->mutations(kCounted, args[k], counted);
      }
    }
    const auto others = [where](std::size_t which, auto& s, const auto& a) {
      constexpr std::size_t K = TestFixture::kInline;
      const auto c = TestFixture::ch('c');
      const std::size_t pos = position(s.size(), where);
      switch (which) {
        case 0:
          s.replace(iter(s, where), iter(s, std::min(where + 1, 2)), a);
          break;
        case 1:
          s.replace(iter(s, where), s.end(), a.data(), a.size() / 2);
          break;
        case 2:
          s.replace(s.begin(), iter(s, where), a.c_str());
          break;
        case 3:
          s.replace(iter(s, where), s.end(), view_t(a));
          break;
        case 4:
          s.replace(s.begin(), iter(s, where), a.begin(), a.end());
          break;
        case 5:
          s.replace(pos, 1, 3, c);
          break;
        case 6:
          s.replace(pos, 3, 1, c);
          break;
        case 7:
          s.replace(pos, 0, K + 1, c);
          break;
        case 8:
          s.replace(pos, 0, npos, c);
          break;
        case 9:
          s.replace(iter(s, where), s.end(), 2, c);
          break;
        case 10:
          s.replace(s.begin(), iter(s, where), {TestFixture::ch('a'), c});
          break;
        case 11:
          s.replace(pos, 2, s);
          break;
        case 12:
          s.replace(pos, 2, s, 1 % (s.size() + 1), 4);
          break;
        case 13:
          s.replace(pos, 1, s.data() + s.size() / 2,
                    std::min<std::size_t>(3, s.size() - s.size() / 2));
          break;
        case 14:
          s.replace(pos, 4, s.c_str());
          break;
        case 15:
          s.replace(pos, 1, s.data(), s.size());
          break;
        case 16:
          s.replace(iter(s, where), s.end(), s.begin(), s.end());
          break;
        case 17:
          s.replace(s.begin(), iter(s, where), view_t(s));
          break;
      }
      return 0LL;
    };
    for (std::size_t k = 0; k < args.size(); ++k) {
      if (where != 3 || k == 1) this->mutations(kOthers, args[k], others, 0, 5);
    }
    this->mutations(kOthers, {}, others, 5);
  }
}

TYPED_TEST(StringT, ResizeMatchesStd) {
  static constexpr const char* kOps[] = {
      "resize(n)",               // 0
      "resize(n, c)",            // 1
      "resize(size / 2)",        // 2
      "resize(size + 3, c)",     // 3
      "resize(npos)",            // 4
      "resize(npos, c)",         // 5
      "resize(max_size() + 1)",  // 6
  };
  for (std::size_t n : {std::size_t{0}, std::size_t{1}, TestFixture::kInline,
                        TestFixture::kInline + 1, 2 * TestFixture::kInline + 9}) {
    SCOPED_TRACE(::testing::Message() << "n = " << n);
    this->mutations(kOps, {}, [n](std::size_t which, auto& s, const auto&) {
      const auto r = TestFixture::ch('r');
      switch (which) {
        case 0:
          s.resize(n);
          break;
        case 1:
          s.resize(n, r);
          break;
        case 2:
          s.resize(s.size() / 2);
          break;
        case 3:
          s.resize(s.size() + 3, r);
          break;
        case 4:
          s.resize(npos);
          break;
        case 5:
          s.resize(npos, r);
          break;
        case 6:
          s.resize(s.max_size() + 1);
          break;
      }
      return 0LL;
    });
  }
}

TYPED_TEST(StringT, ResizeAndOverwrite) {
  using C = typename TestFixture::char_type;
  using ref_t = typename TestFixture::ref_type;
  for (std::size_t len : TestFixture::lengths()) {
    for (std::size_t n : {std::size_t{0}, std::size_t{3}, TestFixture::kInline,
                          TestFixture::kInline + 4, 3 * TestFixture::kInline}) {
      SCOPED_TRACE(::testing::Message() << "length " << len << ", resize_and_overwrite to " << n);
      auto s = TestFixture::make(len, TestFixture::layout::natural);
      const auto before = take(s);
      const ref_t old = TestFixture::txt(len);
      // The first min(len, n) characters are the old ones; write the rest, keep n - 1.
      const std::size_t keep = n == 0 ? 0 : n - 1;
      ref_t expected = old.substr(0, std::min(len, keep));
      for (std::size_t i = expected.size(); i < keep; ++i) expected.push_back(TestFixture::ch('w'));
      bool prefix_kept = true;
      const auto op = [&](C* p, std::size_t count) {
        LOWALLOC_CHECK_EQ(count, n);
        for (std::size_t i = 0; i < std::min(len, n); ++i) prefix_kept &= p[i] == old[i];
        for (std::size_t i = std::min(len, n); i < count; ++i) p[i] = TestFixture::ch('w');
        return count == 0 ? count : count - 1;
      };
      if (n > s.max_size()) {
        LOWALLOC_CHECK_THROW(s.resize_and_overwrite(n, op), std::length_error);
        LOWALLOC_CHECK_TRUE(unchanged(s, before));
        continue;
      }
      lowalloc::alloc_counter scope;
      s.resize_and_overwrite(n, op);
      const std::size_t allocations = scope.allocations();
      LOWALLOC_CHECK_TRUE(prefix_kept);
      LOWALLOC_CHECK_TRUE(same(s, expected));  // includes the terminator at size()
      LOWALLOC_CHECK_GE(s.capacity(), n);
      LOWALLOC_CHECK_LE(allocations, TestFixture::kFixed || n <= before.capacity ? 0u : 1u);
    }
  }
  // An int result and a callable that returns 0.
  typename TestFixture::str_type s = TestFixture::w("abc").c_str();
  s.resize_and_overwrite(10, [](C*, std::size_t) { return 0; });
  LOWALLOC_CHECK_TRUE(same(s, {}));
  LOWALLOC_CHECK_THROW(s.resize_and_overwrite(npos, [](C*, std::size_t n) { return n; }),
                       std::length_error);
}

TYPED_TEST(StringT, ReserveAndShrinkToFit) {
  using S = typename TestFixture::str_type;
  constexpr std::size_t K = TestFixture::kInline;
  const auto t = TestFixture::txt(std::min<std::size_t>(K, 10));
  S s(t.data(), t.size());
  LOWALLOC_EXPECT_NO_ALLOCATIONS(s.reserve(K));
  LOWALLOC_CHECK_EQ(s.capacity(), K);
  LOWALLOC_EXPECT_NO_ALLOCATIONS(s.reserve(0));
  LOWALLOC_CHECK_EQ(s.capacity(), K);
  LOWALLOC_EXPECT_NO_ALLOCATIONS(s.shrink_to_fit());
  LOWALLOC_CHECK_EQ(s.capacity(), K);
  LOWALLOC_CHECK_TRUE(same(s, t));
  const auto before = take(s);
  LOWALLOC_CHECK_THROW(s.reserve(npos), std::length_error);
  LOWALLOC_CHECK_TRUE(unchanged(s, before));
  LOWALLOC_CHECK_THROW(s.reserve(s.max_size() + 1), std::length_error);
  LOWALLOC_CHECK_TRUE(unchanged(s, before));
  if (TestFixture::kFixed) {
    LOWALLOC_EXPECT_NO_ALLOCATIONS(s.reserve(s.max_size()));
    LOWALLOC_CHECK_TRUE(unchanged(s, before));
  }
  if (!TestFixture::kSmall) return;
  LOWALLOC_EXPECT_ALLOCATIONS(1, s.reserve(K + 1));
  LOWALLOC_CHECK_GE(s.capacity(), K + 1);
  LOWALLOC_CHECK_TRUE(same(s, t));
  LOWALLOC_EXPECT_ALLOCATIONS(1, s.reserve(4 * K));
  const auto heap = take(s);
  LOWALLOC_CHECK_GE(heap.capacity, 4 * K);
  // reserve never shrinks (C++20).
  LOWALLOC_EXPECT_NO_ALLOCATIONS(s.reserve(K + 1));
  LOWALLOC_EXPECT_NO_ALLOCATIONS(s.reserve(0));
  LOWALLOC_CHECK_TRUE(unchanged(s, heap));
  // Appending up to the reserved capacity does not allocate.
  const auto fill = TestFixture::txt(s.capacity() - s.size(), 5);
  LOWALLOC_EXPECT_NO_ALLOCATIONS(s.append(fill));
  LOWALLOC_CHECK_EQ(s.data(), heap.data);
  LOWALLOC_CHECK_TRUE(same(s, t + fill));
  // shrink_to_fit of a heap string whose text fits inline: back inline, no allocation, one free.
  s.resize(t.size());
  lowalloc::alloc_counter scope;
  s.shrink_to_fit();
  const std::size_t allocations = scope.allocations(), deallocations = scope.deallocations();
  LOWALLOC_CHECK_EQ(allocations, 0u);
  LOWALLOC_CHECK_EQ(deallocations, 1u);
  LOWALLOC_CHECK_EQ(s.capacity(), K);
  LOWALLOC_CHECK_TRUE(same(s, t));
  // Exactly the inline capacity goes back inline too.
  S full;
  full.reserve(3 * K);
  full.append(K, TestFixture::ch('f'));
  scope.reset();
  full.shrink_to_fit();
  const std::size_t full_allocations = scope.allocations();
  LOWALLOC_CHECK_EQ(full_allocations, 0u);
  LOWALLOC_CHECK_EQ(full.capacity(), K);
  LOWALLOC_CHECK_TRUE(same(full, typename TestFixture::ref_type(K, TestFixture::ch('f'))));
  // A heap string with spare room shrinks with at most one allocation and keeps its text.
  S big(TestFixture::txt(2 * K + 1));
  big.reserve(8 * K);
  LOWALLOC_EXPECT_AT_MOST_ALLOCATIONS(1, big.shrink_to_fit());
  LOWALLOC_CHECK_TRUE(same(big, TestFixture::txt(2 * K + 1)));
  LOWALLOC_CHECK_LT(big.capacity(), 8 * K);
}

TYPED_TEST(StringT, AppendCrossingTheInlineCapacityAllocatesOnce) {
  if (!TestFixture::kSmall) GTEST_SKIP() << "about the inline capacity of small_string";
  using S = typename TestFixture::str_type;
  constexpr std::size_t K = TestFixture::kInline;
  const auto t = TestFixture::txt(K);
  {
    S s(t.data(), K - 1);
    LOWALLOC_EXPECT_NO_ALLOCATIONS(s.push_back(TestFixture::ch('a')));
    LOWALLOC_CHECK_EQ(s.capacity(), K);
    LOWALLOC_EXPECT_ALLOCATIONS(1, s.push_back(TestFixture::ch('b')));
    LOWALLOC_CHECK_GT(s.capacity(), K);
    LOWALLOC_CHECK_TRUE(same(s, t.substr(0, K - 1) + TestFixture::w("ab")));
  }
  {
    S s(t.data(), K);
    LOWALLOC_EXPECT_ALLOCATIONS(1, s.append(t));  // 2K
    LOWALLOC_EXPECT_ALLOCATIONS(1, s.append(s));  // 4K, from itself
    LOWALLOC_CHECK_TRUE(same(s, t + t + t + t));
  }
  {
    S s(t.data(), K);
    LOWALLOC_EXPECT_ALLOCATIONS(1, s.insert(1, s));
    S r(t.data(), K);
    LOWALLOC_EXPECT_ALLOCATIONS(1, r.replace(1, 1, r.c_str()));
    S u(t.data(), K);
    LOWALLOC_EXPECT_ALLOCATIONS(1, u.resize(10 * K, TestFixture::ch('x')));
    S v(t.data(), 1);
    LOWALLOC_EXPECT_ALLOCATIONS(1, v.insert(v.begin(), 3 * K, TestFixture::ch('x')));
  }
  {
    // Growth one character at a time is geometric.
    S s;
    lowalloc::alloc_counter scope;
    for (std::size_t i = 0; i < 4000; ++i) s.push_back(TestFixture::ch('g'));
    const std::size_t allocations = scope.allocations();
    LOWALLOC_CHECK_LE(allocations, 25u);
    LOWALLOC_CHECK_TRUE(same(s, typename TestFixture::ref_type(4000, TestFixture::ch('g'))));
  }
}

TYPED_TEST(StringV, FindFamilyMatchesStd) {
  using S = typename TestFixture::str_type;
  using ref_t = typename TestFixture::ref_type;
  using view_t = typename TestFixture::view_type;
  // A haystack with repeats, inline and on the heap (or full, for fixed_string).
  const ref_t unit = TestFixture::w("abcabxabcd");
  for (std::size_t len : {std::size_t{0}, std::size_t{7}, TestFixture::kInline,
                          std::min(TestFixture::kMax, 2 * TestFixture::kInline + 5)}) {
    ref_t hay;
    while (hay.size() < len) hay += unit;
    hay.resize(len);
    const S s(hay.data(), hay.size());
    std::vector<ref_t> needles = {ref_t(),
                                  TestFixture::w("a"),
                                  TestFixture::w("abc"),
                                  TestFixture::w("bx"),
                                  TestFixture::w("cd"),
                                  TestFixture::w("zz"),
                                  TestFixture::w("dcba"),
                                  hay,
                                  hay + TestFixture::w("a")};
    needles.push_back(ref_t(1, typename TestFixture::char_type()));
    for (const ref_t& needle : needles) {
      const S ns = needle.size() <= s.max_size() ? S(needle.data(), needle.size()) : S();
      const bool s_form = needle.size() <= s.max_size();
      const view_t nv(needle);
      std::vector<std::size_t> positions;
      for (std::size_t p = 0; p <= len + 2; ++p) positions.push_back(p);
      positions.push_back(npos);
      std::size_t failures = 0;
      const auto check = [&](const char* what, std::size_t pos, std::size_t got, std::size_t want) {
        if (got != want && failures++ < 5) {
          ADD_FAILURE() << what << " of " << show(needle) << " in " << show(hay) << " from " << pos
                        << ": " << got << ", std::basic_string says " << want;
        }
      };
#define LOWALLOC_CHECK_FIND(fn)                                                                    \
  for (std::size_t pos : positions) {                                                              \
    if (s_form) check(#fn "(str, pos)", pos, s.fn(ns, pos), hay.fn(needle, pos));                  \
    check(#fn "(view, pos)", pos, s.fn(nv, pos), hay.fn(nv, pos));                                 \
    check(#fn "(std::basic_string, pos)", pos, s.fn(needle, pos), hay.fn(needle, pos));            \
    check(#fn "(p, pos)", pos, s.fn(needle.c_str(), pos), hay.fn(needle.c_str(), pos));            \
    check(#fn "(p, pos, n)", pos, s.fn(needle.data(), pos, needle.size()),                         \
          hay.fn(needle.data(), pos, needle.size()));                                              \
    if (needle.size() > 1) {                                                                       \
      check(#fn "(p, pos, 1)", pos, s.fn(needle.data(), pos, 1), hay.fn(needle.data(), pos, 1));   \
    }                                                                                              \
    if (!needle.empty()) check(#fn "(c, pos)", pos, s.fn(needle[0], pos), hay.fn(needle[0], pos)); \
  }                                                                                                \
  if (s_form) check(#fn "(str)", 0, s.fn(ns), hay.fn(needle));                                     \
  check(#fn "(p)", 0, s.fn(needle.c_str()), hay.fn(needle.c_str()));                               \
  check(#fn "(view)", 0, s.fn(nv), hay.fn(nv));                                                    \
  if (!needle.empty()) check(#fn "(c)", 0, s.fn(needle[0]), hay.fn(needle[0]));
      LOWALLOC_CHECK_FIND(find)
      LOWALLOC_CHECK_FIND(rfind)
      LOWALLOC_CHECK_FIND(find_first_of)
      LOWALLOC_CHECK_FIND(find_last_of)
      LOWALLOC_CHECK_FIND(find_first_not_of)
      LOWALLOC_CHECK_FIND(find_last_not_of)
#undef LOWALLOC_CHECK_FIND
    }
  }
  // Searching never allocates.
  const auto long_text = TestFixture::txt(TestFixture::kMax == npos ? 100 : TestFixture::kMax);
  const S s(long_text);
  LOWALLOC_EXPECT_NO_ALLOCATIONS(std::size_t r = s.find(long_text.c_str() + 3);
                                 r += s.rfind(TestFixture::ch('c')); (void)r);
}

TYPED_TEST(StringV, CompareMatchesStd) {
  using view_t = typename TestFixture::view_type;
  static constexpr const char* kOps[] = {
      "compare(a)",                       // 0
      "compare(p)",                       // 1
      "compare(view)",                    // 2
      "compare(pos, n, a)",               // 3
      "compare(pos, n, a, pos2, n2)",     // 4
      "compare(pos, n, p)",               // 5
      "compare(pos, n, p, n2)",           // 6
      "compare(pos, n, view)",            // 7
      "compare(pos, n, view, pos2, n2)",  // 8
  };
  std::vector<typename TestFixture::ref_type> args = TestFixture::args();
  args.push_back(TestFixture::txt(4));
  args.push_back(TestFixture::txt(4, 1));
  args.push_back(TestFixture::w("ab"));
  for (int where : kWheres) {
    for (std::size_t count : {std::size_t{0}, std::size_t{4}, npos}) {
      SCOPED_TRACE(::testing::Message() << "position " << where << ", count " << count);
      const auto op = [where, count](std::size_t which, const auto& s, const auto& a) {
        const std::size_t pos = position(s.size(), where);
        switch (which) {
          case 0:
            return sign(s.compare(a));
          case 1:
            return sign(s.compare(a.c_str()));
          case 2:
            return sign(s.compare(view_t(a)));
          case 3:
            return sign(s.compare(pos, count, a));
          case 4:
            return sign(s.compare(pos, count, a, 0, 4)) * 10 +
                   sign(s.compare(0, count, a, position(a.size(), where)));
          case 5:
            return sign(s.compare(pos, count, a.c_str()));
          case 6:
            return sign(s.compare(pos, count, a.data(), a.size() / 2));
          // libstdc++ 12 declares the two string_view forms noexcept, so its out_of_range
          // terminates: positions past the end are checked in ThrowsWhereStdThrows.
          case 7:
            return where == 3 ? 0 : sign(s.compare(pos, count, view_t(a)));
          case 8:
            return where == 3 ? 0
                              : sign(s.compare(0, count, view_t(a), position(a.size(), where), 3));
        }
        return 0;
      };
      // The whole-string forms once per argument; past the end, one argument.
      for (std::size_t k = 0; k < args.size(); ++k) {
        if (where == 0 && count == 0) this->queries(kOps, args[k], op, 0, 3);
        if (where != 3 || k == 1) this->queries(kOps, args[k], op, 3);
      }
    }
  }
}

TYPED_TEST(StringT, SubstrCopyStartsWithEndsWithContains) {
  using S = typename TestFixture::str_type;
  using C = typename TestFixture::char_type;
  using ref_t = typename TestFixture::ref_type;
  using view_t = typename TestFixture::view_type;
  for (std::size_t len : TestFixture::lengths()) {
    const ref_t t = TestFixture::txt(len);
    const S s(t.data(), len);
    for (std::size_t pos = 0; pos <= len + 1; ++pos) {
      for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{3}, npos}) {
        SCOPED_TRACE(::testing::Message() << "length " << len << ", pos " << pos << ", n " << n);
        if (pos > len) {
          LOWALLOC_CHECK_THROW((void)s.substr(pos, n), std::out_of_range);
          C buf[4] = {};
          LOWALLOC_CHECK_THROW((void)s.copy(buf, n == npos ? 4 : n, pos), std::out_of_range);
          continue;
        }
        const ref_t want = t.substr(pos, n);
        lowalloc::alloc_counter scope;
        const S sub = s.substr(pos, n);
        const std::size_t allocations = scope.allocations();
        LOWALLOC_CHECK_TRUE(same(sub, want));
        LOWALLOC_CHECK_EQ(allocations, want.size() <= TestFixture::kInline ? 0u : 1u);
        C buf[8];
        std::fill(std::begin(buf), std::end(buf), TestFixture::ch('#'));
        const std::size_t count = std::min<std::size_t>(n, 6);
        C ref_buf[8];
        std::fill(std::begin(ref_buf), std::end(ref_buf), TestFixture::ch('#'));
        LOWALLOC_CHECK_EQ(s.copy(buf, count, pos), t.copy(ref_buf, count, pos));
        LOWALLOC_CHECK_TRUE(std::equal(std::begin(buf), std::end(buf), std::begin(ref_buf)))
            << "copy() wrote something else (it must not NUL-terminate)";
      }
    }
    LOWALLOC_CHECK_TRUE(same(s.substr(), t));
    // starts_with / ends_with / contains, against string_view arithmetic.
    for (const ref_t& x :
         {ref_t(), t.substr(0, 1), t.substr(0, len / 2), t, t + TestFixture::w("a"),
          t.substr(len / 2), TestFixture::w("zz"), TestFixture::w("ab"), t.substr(len / 3, 2)}) {
      const view_t v(t), xv(x);
      const bool starts = v.substr(0, xv.size()) == xv;
      const bool ends = v.size() >= xv.size() && v.substr(v.size() - xv.size()) == xv;
      const bool contains = v.find(xv) != npos;
      LOWALLOC_CHECK_EQ(s.starts_with(xv), starts) << show(x);
      LOWALLOC_CHECK_EQ(s.starts_with(x.c_str()), starts) << show(x);
      LOWALLOC_CHECK_EQ(s.ends_with(xv), ends) << show(x);
      LOWALLOC_CHECK_EQ(s.ends_with(x.c_str()), ends) << show(x);
      LOWALLOC_CHECK_EQ(s.contains(xv), contains) << show(x);
      LOWALLOC_CHECK_EQ(s.contains(x.c_str()), contains) << show(x);
      if (!x.empty()) {
        LOWALLOC_CHECK_EQ(s.starts_with(x[0]), !t.empty() && t.front() == x[0]);
        LOWALLOC_CHECK_EQ(s.ends_with(x[0]), !t.empty() && t.back() == x[0]);
        LOWALLOC_CHECK_EQ(s.contains(x[0]), t.find(x[0]) != npos);
      }
    }
  }
}

TYPED_TEST(StringV, ElementAccessAndIterators) {
  using S = typename TestFixture::str_type;
  using C = typename TestFixture::char_type;
  for (std::size_t len : TestFixture::lengths()) {
    if (len == 0) continue;
    auto t = TestFixture::txt(len);
    S s(t.data(), len);
    const S& cs = s;
    for (std::size_t i = 0; i < len; ++i) {
      LOWALLOC_CHECK_EQ(s[i], t[i]);
      LOWALLOC_CHECK_EQ(cs[i], t[i]);
      LOWALLOC_CHECK_EQ(s.at(i), t[i]);
      LOWALLOC_CHECK_EQ(cs.at(i), t[i]);
    }
    LOWALLOC_CHECK_EQ(cs[len], C());
    LOWALLOC_CHECK_THROW((void)s.at(len), std::out_of_range);
    LOWALLOC_CHECK_THROW((void)cs.at(len), std::out_of_range);
    LOWALLOC_CHECK_THROW((void)cs.at(npos), std::out_of_range);
    LOWALLOC_CHECK_EQ(s.front(), t.front());
    LOWALLOC_CHECK_EQ(cs.back(), t.back());
    s.front() = TestFixture::ch('F');
    s.back() = TestFixture::ch('B');
    s[len / 2] = TestFixture::ch('M');
    s.data()[0] = TestFixture::ch('D');  // non-const data() (C++17)
    t.front() = TestFixture::ch('F');
    t.back() = TestFixture::ch('B');
    t[len / 2] = TestFixture::ch('M');
    t.data()[0] = TestFixture::ch('D');
    LOWALLOC_CHECK_TRUE(same(s, t));
    LOWALLOC_CHECK_TRUE(std::equal(s.rbegin(), s.rend(), t.rbegin(), t.rend()));
    LOWALLOC_CHECK_TRUE(std::equal(s.crbegin(), s.crend(), t.crbegin(), t.crend()));
    LOWALLOC_CHECK_TRUE(std::equal(cs.begin(), cs.end(), t.begin(), t.end()));
    for (auto it = s.begin(); it != s.end(); ++it) *it = TestFixture::ch('i');
    LOWALLOC_CHECK_TRUE(same(s, typename TestFixture::ref_type(len, TestFixture::ch('i'))));
    std::sort(s.begin(), s.end());
    std::reverse(s.begin(), s.end());
    LOWALLOC_CHECK_EQ(std::count(s.cbegin(), s.cend(), TestFixture::ch('i')),
                      static_cast<std::ptrdiff_t>(len));
  }
}

// Every relational operator, in both argument orders where the types differ, against std.
template <class X, class Y>
void check_relations(const X& x, const Y& y, int expected, const std::string& what) {
  LOWALLOC_CHECK_EQ(x == y, expected == 0) << what;
  LOWALLOC_CHECK_EQ(x != y, expected != 0) << what;
  LOWALLOC_CHECK_EQ(x < y, expected < 0) << what;
  LOWALLOC_CHECK_EQ(x <= y, expected <= 0) << what;
  LOWALLOC_CHECK_EQ(x > y, expected > 0) << what;
  LOWALLOC_CHECK_EQ(x >= y, expected >= 0) << what;
  LOWALLOC_CHECK_EQ(y == x, expected == 0) << what;
  LOWALLOC_CHECK_EQ(y != x, expected != 0) << what;
  LOWALLOC_CHECK_EQ(y<x, expected> 0) << what;
  LOWALLOC_CHECK_EQ(y <= x, expected >= 0) << what;
  LOWALLOC_CHECK_EQ(y > x, expected < 0) << what;
  LOWALLOC_CHECK_EQ(y >= x, expected <= 0) << what;
#if defined(__cpp_lib_three_way_comparison) && defined(__cpp_impl_three_way_comparison)
  static_assert(std::is_same_v<decltype(x <=> y), std::strong_ordering>);
  LOWALLOC_CHECK_EQ((x <=> y) < 0, expected < 0) << what;
  LOWALLOC_CHECK_EQ((x <=> y) == 0, expected == 0) << what;
  LOWALLOC_CHECK_EQ((y <=> x) > 0, expected < 0) << what;
  LOWALLOC_CHECK_EQ((y <=> x) == 0, expected == 0) << what;
#endif
}

TYPED_TEST(StringV, RelationalOperatorsMatchStd) {
  using S = typename TestFixture::str_type;
  using C = typename TestFixture::char_type;
  using ref_t = typename TestFixture::ref_type;
  using view_t = typename TestFixture::view_type;
  const std::vector<ref_t> texts = {
      ref_t(),
      TestFixture::w("a"),
      TestFixture::w("ab"),
      TestFixture::w("abc"),
      TestFixture::w("abd"),
      TestFixture::w("b"),
      ref_t(1, C()),
      TestFixture::txt(TestFixture::kInline),
      TestFixture::txt(std::min(TestFixture::kMax, TestFixture::kInline + 3)),
      ref_t(1, static_cast<C>(0x7f)),
      ref_t(2, TestFixture::ch('z'))};
  for (const ref_t& a : texts) {
    for (const ref_t& b : texts) {
      const int expected = sign(a.compare(b));
      const std::string what = show(a) + " vs " + show(b);
      const S sa(a.data(), a.size()), sb(b.data(), b.size());
      check_relations(sa, sb, expected, what + " (string, string)");
      check_relations(sa, b, expected, what + " (string, std::basic_string)");
      check_relations(sa, view_t(b), expected, what + " (string, view)");
      if (b.find(C()) == npos) check_relations(sa, b.c_str(), expected, what + " (string, p)");
    }
  }
}

TYPED_TEST(StringT, OperatorPlusMatchesStd) {
  using S = typename TestFixture::str_type;
  using ref_t = typename TestFixture::ref_type;
  constexpr std::size_t K = TestFixture::kInline;
  static constexpr const char* kOps[] = {
      "s + s",     "s + p",   "p + s",   "s + c",   "c + s",   "s&& + s",   "s + s&&",
      "s&& + s&&", "s&& + p", "p + s&&", "s&& + c", "c + s&&", "s + s + s",
  };
  // The same expression on std::basic_string and on S.
  const auto plus = [](std::size_t which, const auto& x, const auto& y) {
    using T = std::decay_t<decltype(x)>;
    const auto c = TestFixture::ch('+');
    switch (which) {
      case 0:
        return x + y;
      case 1:
        return x + y.c_str();
      case 2:
        return x.c_str() + y;
      case 3:
        return x + c;
      case 4:
        return c + y;
      case 5:
        return T(x) + y;
      case 6:
        return x + T(y);
      case 7:
        return T(x) + T(y);
      case 8:
        return T(x) + y.c_str();
      case 9:
        return x.c_str() + T(y);
      case 10:
        return T(x) + c;
      case 11:
        return c + T(y);
      default:
        return x + y + x;
    }
  };
  const std::vector<ref_t> texts = {ref_t(), TestFixture::w("x"), TestFixture::txt(K / 2),
                                    TestFixture::txt(K, 3),
                                    TestFixture::txt(std::min(2 * K + 1, TestFixture::kMax), 9)};
  for (const ref_t& a : texts) {
    for (const ref_t& b : texts) {
      const S sa(a.data(), a.size()), sb(b.data(), b.size());
      for (std::size_t which = 0; which < std::size(kOps); ++which) {
        SCOPED_TRACE(::testing::Message()
                     << kOps[which] << " with " << show(a) << " and " << show(b));
        const ref_t want = plus(which, a, b);
        if (want.size() > S().max_size()) {  // a fixed_string
          LOWALLOC_CHECK_THROW(plus(which, sa, sb), std::length_error);
        } else {
          LOWALLOC_CHECK_TRUE(same(plus(which, sa, sb), want));
        }
      }
      // One allocation for the result, none when it fits inline.
      if (a.size() + b.size() <= S().max_size()) {
        lowalloc::alloc_counter scope;
        const S r = sa + sb;
        const std::size_t allocations = scope.allocations();
        LOWALLOC_CHECK_EQ(allocations, a.size() + b.size() <= K ? 0u : 1u)
            << show(a) << " + " << show(b);
        LOWALLOC_CHECK_TRUE(same(r, a + b));
      }
    }
  }
  using C = typename TestFixture::char_type;
  static_assert(std::is_same_v<decltype(std::declval<const S&>() + std::declval<const S&>()), S>);
  static_assert(std::is_same_v<decltype(std::declval<S>() + std::declval<const C*>()), S>);
  static_assert(std::is_same_v<decltype(std::declval<C>() + std::declval<S>()), S>);
}

TYPED_TEST(StringT, OperatorPlusReusesTheRvalueBuffer) {
  if (TestFixture::kFixed) GTEST_SKIP() << "a fixed_string has no buffer to hand over";
  using S = typename TestFixture::str_type;
  constexpr std::size_t K = TestFixture::kInline;
  const auto tail = TestFixture::txt(K, 4);
  const S b(tail);
  const auto run = [&](const char* what, auto add) {
    SCOPED_TRACE(what);
    S a(TestFixture::txt(5).c_str());
    a.reserve(4 * K + 8);
    const auto* buffer = a.data();
    const auto expected = add(typename TestFixture::ref_type(TestFixture::txt(5)), tail);
    lowalloc::alloc_counter scope;
    S r = add(std::move(a), b);
    const std::size_t allocations = scope.allocations();
    LOWALLOC_CHECK_EQ(allocations, 0u);
    LOWALLOC_CHECK_EQ(r.data(), buffer);
    LOWALLOC_CHECK_TRUE(same(r, expected));
  };
  run("std::move(a) + b", [](auto&& x, const auto& y) { return std::move(x) + y; });
  run("std::move(a) + b.c_str()", [](auto&& x, const auto& y) { return std::move(x) + y.c_str(); });
  run("std::move(a) + c",
      [](auto&& x, const auto&) { return std::move(x) + TestFixture::ch('c'); });
  run("std::move(a) + std::move(b)", [](auto&& x, const auto& y) {
    auto yy = y;  // an inline copy: no allocation
    return std::move(x) + std::move(yy);
  });
  // The right operand's buffer, when only it has room.
  const auto prepend = [&](const char* what, auto add) {
    SCOPED_TRACE(what);
    S a(TestFixture::txt(5).c_str());
    a.reserve(4 * K + 8);
    const auto* buffer = a.data();
    const auto expected = add(tail, typename TestFixture::ref_type(TestFixture::txt(5)));
    lowalloc::alloc_counter scope;
    S r = add(b, std::move(a));
    const std::size_t allocations = scope.allocations();
    LOWALLOC_CHECK_EQ(allocations, 0u);
    LOWALLOC_CHECK_EQ(r.data(), buffer);
    LOWALLOC_CHECK_TRUE(same(r, expected));
  };
  prepend("b + std::move(a)", [](const auto& x, auto&& y) { return x + std::move(y); });
  prepend("b.c_str() + std::move(a)",
          [](const auto& x, auto&& y) { return x.c_str() + std::move(y); });
  prepend("c + std::move(a)",
          [](const auto&, auto&& y) { return TestFixture::ch('c') + std::move(y); });
  // A chain reuses the first sum's buffer: 2K exactly, then 4K and 8K by doubling.
  const S p(TestFixture::txt(K).c_str()), q(TestFixture::txt(K, 1).c_str());
  LOWALLOC_EXPECT_AT_MOST_ALLOCATIONS(3, const S r = p + q + p + q + p + q; (void)r);
}

TYPED_TEST(StringT, SwapEveryCombination) {
  using S = typename TestFixture::str_type;
  for (std::size_t n : TestFixture::lengths()) {
    for (std::size_t m : TestFixture::lengths()) {
      const auto tn = TestFixture::txt(n, 1), tm = TestFixture::txt(m, 2);
      S a(tn), b(tm);
      const auto* da = a.data();
      const auto* db = b.data();
      const bool heap_a = a.capacity() > TestFixture::kInline,
                 heap_b = b.capacity() > TestFixture::kInline;
      LOWALLOC_EXPECT_NO_ALLOCATIONS(a.swap(b));
      LOWALLOC_CHECK_TRUE(same(a, tm));
      LOWALLOC_CHECK_TRUE(same(b, tn));
      if (heap_a) {
        LOWALLOC_CHECK_EQ(b.data(), da);
      }
      if (heap_b) {
        LOWALLOC_CHECK_EQ(a.data(), db);
      }
      LOWALLOC_EXPECT_NO_ALLOCATIONS(swap(a, b));
      LOWALLOC_CHECK_TRUE(same(a, tn));
      LOWALLOC_CHECK_TRUE(same(b, tm));
      LOWALLOC_EXPECT_NO_ALLOCATIONS(std::swap(a, b));
      LOWALLOC_CHECK_TRUE(same(a, tm));
      LOWALLOC_CHECK_TRUE(same(b, tn));
      a.swap(a);
      LOWALLOC_CHECK_TRUE(same(a, tm));
    }
  }
  static_assert(noexcept(std::declval<S&>().swap(std::declval<S&>())));
}

TYPED_TEST(StringT, ThrowsWhereStdThrows) {
  using S = typename TestFixture::str_type;
  using C = typename TestFixture::char_type;
  const auto t = TestFixture::txt(std::min<std::size_t>(TestFixture::kInline, 10));
  S s(t);
  const std::size_t n = s.size();
  const S other(TestFixture::w("xy").c_str());
  C buf[4] = {};
  const auto before = take(s);
  LOWALLOC_CHECK_THROW((void)s.at(n), std::out_of_range);
  LOWALLOC_CHECK_THROW((void)s.substr(n + 1), std::out_of_range);
  LOWALLOC_CHECK_THROW(s.insert(n + 1, other), std::out_of_range);
  LOWALLOC_CHECK_THROW(s.insert(n + 1, other.c_str()), std::out_of_range);
  LOWALLOC_CHECK_THROW(s.insert(n + 1, 1, TestFixture::ch('x')), std::out_of_range);
  LOWALLOC_CHECK_THROW(s.insert(0, other, 3, 1), std::out_of_range);
  LOWALLOC_CHECK_THROW(s.replace(n + 1, 1, other), std::out_of_range);
  LOWALLOC_CHECK_THROW(s.replace(n + 1, 0, 2, TestFixture::ch('x')), std::out_of_range);
  LOWALLOC_CHECK_THROW(s.replace(0, 1, other, 3, 1), std::out_of_range);
  LOWALLOC_CHECK_THROW((void)s.compare(n + 1, 1, other), std::out_of_range);
  LOWALLOC_CHECK_THROW((void)s.compare(n + 1, 1, other.c_str()), std::out_of_range);
  LOWALLOC_CHECK_THROW((void)s.compare(0, 1, other, 3, 1), std::out_of_range);
  LOWALLOC_CHECK_THROW((void)s.compare(n + 1, 1, std::basic_string_view<C>(other)),
                       std::out_of_range);
  LOWALLOC_CHECK_THROW((void)s.compare(0, 1, std::basic_string_view<C>(other), 3, 1),
                       std::out_of_range);
  LOWALLOC_CHECK_THROW((void)s.compare(n + 1, 1, other, 0, 1), std::out_of_range);
  LOWALLOC_CHECK_THROW((void)s.compare(n + 1, 1, other.c_str(), 1), std::out_of_range);
  LOWALLOC_CHECK_THROW((void)s.copy(buf, 1, n + 1), std::out_of_range);
  LOWALLOC_CHECK_THROW(s.erase(n + 1), std::out_of_range);
  LOWALLOC_CHECK_THROW(s.append(other, 3, 1), std::out_of_range);
  LOWALLOC_CHECK_THROW(s.assign(other, 3, 1), std::out_of_range);
  LOWALLOC_CHECK_TRUE(unchanged(s, before));
  LOWALLOC_CHECK_THROW(s.resize(npos), std::length_error);
  LOWALLOC_CHECK_THROW(s.reserve(npos), std::length_error);
  LOWALLOC_CHECK_THROW(s.append(npos, TestFixture::ch('x')), std::length_error);
  LOWALLOC_CHECK_THROW(s.insert(0, npos, TestFixture::ch('x')), std::length_error);
  LOWALLOC_CHECK_THROW(s.replace(0, 0, npos, TestFixture::ch('x')), std::length_error);
  LOWALLOC_CHECK_THROW(s.assign(npos, TestFixture::ch('x')), std::length_error);
  LOWALLOC_CHECK_THROW(s.resize(s.max_size() + 1), std::length_error);
  LOWALLOC_CHECK_THROW(s.append(s.max_size() - s.size() + 1, TestFixture::ch('x')),
                       std::length_error);
  LOWALLOC_CHECK_THROW(S(npos, TestFixture::ch('x')), std::length_error);
  LOWALLOC_CHECK_TRUE(unchanged(s, before));
  // The position check comes before the length check, as in std.
  LOWALLOC_CHECK_THROW(s.insert(n + 1, npos, TestFixture::ch('x')), std::out_of_range);
  LOWALLOC_CHECK_THROW(s.replace(n + 1, 0, npos, TestFixture::ch('x')), std::out_of_range);
  LOWALLOC_CHECK_TRUE(unchanged(s, before));
}

TYPED_TEST(StringV, HashIsTheViewHash) {
  using S = typename TestFixture::str_type;
  using view_t = typename TestFixture::view_type;
  for (std::size_t len : TestFixture::lengths()) {
    const auto t = TestFixture::txt(len);
    const S s(t);
    LOWALLOC_CHECK_EQ(std::hash<S>()(s), std::hash<view_t>()(view_t(t)));
    LOWALLOC_CHECK_EQ(std::hash<S>()(s), std::hash<typename TestFixture::ref_type>()(t));
  }
  std::unordered_set<S> set;
  set.insert(S(TestFixture::w("one").c_str()));
  set.insert(S(TestFixture::txt(TestFixture::kMax == npos ? 80 : TestFixture::kMax).c_str()));
  LOWALLOC_CHECK_EQ(set.count(S(TestFixture::w("one").c_str())), 1u);
  LOWALLOC_CHECK_EQ(set.count(S(TestFixture::w("two").c_str())), 0u);
  static_assert(noexcept(std::hash<S>()(std::declval<const S&>())));
}

TYPED_TEST(StringV, NonMemberEraseAndEraseIfReturnCounts) {
  using S = typename TestFixture::str_type;
  using C = typename TestFixture::char_type;
  auto t = TestFixture::w("banana bandana");
  while (t.size() + 14 <= std::min<std::size_t>(TestFixture::kMax, 3 * TestFixture::kInline)) {
    t += TestFixture::w("banana bandana");
  }
  S s(t);
  const auto a = TestFixture::ch('a');
  const auto expected_a = static_cast<std::size_t>(std::count(t.begin(), t.end(), a));
  LOWALLOC_CHECK_EQ(erase(s, a), expected_a);
  t.erase(std::remove(t.begin(), t.end(), a), t.end());
  LOWALLOC_CHECK_TRUE(same(s, t));
  LOWALLOC_CHECK_EQ(erase(s, TestFixture::ch('q')), 0u);
  const auto is_n = [](C c) { return c == TestFixture::ch('n'); };
  const auto expected_n = static_cast<std::size_t>(std::count_if(t.begin(), t.end(), is_n));
  LOWALLOC_CHECK_EQ(erase_if(s, is_n), expected_n);
  t.erase(std::remove_if(t.begin(), t.end(), is_n), t.end());
  LOWALLOC_CHECK_TRUE(same(s, t));
  LOWALLOC_CHECK_EQ(lowalloc::erase_if(s, [](C) { return true; }), t.size());
  LOWALLOC_CHECK_TRUE(same(s, {}));
}

TYPED_TEST(StringV, EmbeddedNuls) {
  using S = typename TestFixture::str_type;
  using C = typename TestFixture::char_type;
  using ref_t = typename TestFixture::ref_type;
  ref_t t = TestFixture::w("ab");
  t.push_back(C());
  t += TestFixture::w("cd");
  t.push_back(C());
  S s(t.data(), t.size());
  LOWALLOC_CHECK_EQ(s.size(), 6u);
  LOWALLOC_CHECK_TRUE(same(s, t));
  LOWALLOC_CHECK_TRUE(s == t);
  LOWALLOC_CHECK_FALSE(s == t.c_str());  // stops at the first NUL
  LOWALLOC_CHECK_TRUE(same(S(t.c_str()), TestFixture::w("ab")));
  LOWALLOC_CHECK_EQ(s.find(C()), 2u);
  LOWALLOC_CHECK_EQ(s.rfind(C()), 5u);
  LOWALLOC_CHECK_EQ(s.find(TestFixture::w("cd")), 3u);
  s.append(t);
  s.insert(1, 2, C());
  t.append(t);
  t.insert(1, 2, C());
  LOWALLOC_CHECK_TRUE(same(s, t));
  LOWALLOC_CHECK_EQ(s.compare(t), 0);
  LOWALLOC_CHECK_TRUE(same(s.substr(2, 3), t.substr(2, 3)));
  S u(t);
  LOWALLOC_CHECK_TRUE(s == u);
  u.back() = TestFixture::ch('x');
  LOWALLOC_CHECK_TRUE(s < u);
  LOWALLOC_CHECK_EQ(erase(u, C()), 5u);  // the last of the six is now 'x'
  LOWALLOC_CHECK_EQ(erase(s, C()), 6u);
}

TYPED_TEST(StringV, ConversionsToViewAndStdString) {
  using S = typename TestFixture::str_type;
  using ref_t = typename TestFixture::ref_type;
  using view_t = typename TestFixture::view_type;
  for (std::size_t len : TestFixture::lengths()) {
    const ref_t t = TestFixture::txt(len);
    const S s(t);
    const auto takes_view = [](view_t v) { return v; };
    LOWALLOC_CHECK_EQ(takes_view(s), view_t(t));
    LOWALLOC_CHECK_EQ(takes_view(s).data(), s.data());
    const view_t v = s;
    LOWALLOC_CHECK_EQ(v.data(), s.data());
    LOWALLOC_CHECK_EQ(v.size(), s.size());
    const ref_t back(s);
    LOWALLOC_CHECK_EQ(back, t);
    LOWALLOC_CHECK_EQ(static_cast<ref_t>(s), t);
    using pmr_ref =
        std::basic_string<typename S::value_type, std::char_traits<typename S::value_type>,
                          std::pmr::polymorphic_allocator<typename S::value_type>>;
    LOWALLOC_CHECK_EQ(view_t(static_cast<pmr_ref>(s)), view_t(t));
    LOWALLOC_CHECK_TRUE(same(S(t, 1 % (len + 1)), t.substr(1 % (len + 1))));
  }
}

// ---- allocation promises beyond the typed tests -------------------------------------------------

TEST(FixedString, NeverAllocates) {
  lowalloc::alloc_counter scope;
  {
    fixed_string<64> a = "hello";
    a += ' ';
    a.append("world");
    a.insert(0, "say: ");
    a.replace(0, 3, "SAY");
    fixed_string<64> b = a;
    b.resize(60, '.');
    fixed_string<64> c = a + "!";
    fixed_string<64> d = a.substr(2, 10);
    c.swap(d);
    a.erase(0, 5);
    a.shrink_to_fit();
    a.reserve(64);
    fixed_string<64> e = std::move(b);
    fixed_string<64> f(40, 'x');
    f = e;
    f.assign(64, 'y');
    f = std::move(c);
    f.resize_and_overwrite(50, [](char* p, std::size_t n) {
      std::fill(p, p + n, 'z');
      return n;
    });
    a = a + a + a;
    a.append(std::string_view("0123456789"));
    const fixed_string<64> g(std::string_view(a), 3, 20);
    const std::size_t found = g.find("lo") + a.rfind('o') + a.find_first_of("wd");
    a.erase(0, found % 3);
    (void)erase(a, 'l');
    const std::string_view view = a;
    f.assign(view.substr(0, 5));
    for (int i = 0; i < 1000; ++i) {
      f.push_back(static_cast<char>('a' + i % 26));
      if (f.size() == f.max_size()) f.clear();
    }
  }
  const std::size_t allocations = scope.allocations();
  EXPECT_EQ(allocations, 0u);
}

TEST(FixedString, CapacityIsN) {
  EXPECT_EQ(fixed_string<1>().max_size(), 1u);
  EXPECT_EQ(fixed_string<1>().capacity(), 1u);
  EXPECT_EQ(fixed_string<15>().max_size(), 15u);
  EXPECT_EQ(fixed_string<15>().capacity(), 15u);
  EXPECT_EQ(fixed_string<256>().capacity(), 256u);
  EXPECT_EQ(fixed_string<1000>().max_size(), 1000u);
  fixed_string<1> one(1, 'x');
  EXPECT_TRUE(same(one, "x"));
  EXPECT_THROW(one.push_back('y'), std::length_error);
  EXPECT_TRUE(same(one, "x"));
  fixed_string<1000> big(1000, 'b');
  EXPECT_EQ(big.size(), 1000u);
  EXPECT_EQ(big.c_str()[1000], '\0');
}

TEST(FixedString, GrowthPastNThrowsLengthErrorAndChangesNothing) {
  using F = fixed_string<16>;
  for (const char* start : {"", "0123456789", "0123456789abcdef"}) {
    SCOPED_TRACE(start);
    F s = start;
    const auto before = take(s);
    const std::size_t room = 16 - s.size();
    const F full(16, 'f');
    const std::string long_text(17, 'l');
    EXPECT_THROW(s.append(room + 1, 'x'), std::length_error);
    EXPECT_THROW(s.append(long_text), std::length_error);
    EXPECT_THROW(s.append(long_text.c_str()), std::length_error);
    EXPECT_THROW(s.append(long_text.data(), room + 1), std::length_error);
    if (room < 16) {
      EXPECT_THROW(s.append(full), std::length_error);
      EXPECT_THROW(s.replace(0, 0, full), std::length_error);
    }
    EXPECT_THROW(s += long_text.c_str(), std::length_error);
    EXPECT_THROW(s.insert(0, room + 1, 'x'), std::length_error);
    EXPECT_THROW(s.insert(s.size(), long_text.c_str()), std::length_error);
    EXPECT_THROW(s.insert(s.begin(), room + 1, 'x'), std::length_error);
    EXPECT_THROW(s.replace(0, 0, room + 1, 'r'), std::length_error);
    EXPECT_THROW(s.resize(17), std::length_error);
    EXPECT_THROW(s.resize(17, 'r'), std::length_error);
    EXPECT_THROW(s.reserve(17), std::length_error);
    EXPECT_THROW(s.assign(17, 'a'), std::length_error);
    EXPECT_THROW(s.assign(long_text), std::length_error);
    EXPECT_THROW(s = long_text.c_str(), std::length_error);
    EXPECT_THROW(s = std::string_view(long_text), std::length_error);
    EXPECT_THROW(s.assign(long_text.begin(), long_text.end()), std::length_error);
    EXPECT_THROW(s.resize_and_overwrite(17, [](char*, std::size_t n) { return n; }),
                 std::length_error);
    if (room == 0) {
      EXPECT_THROW(s.push_back('x'), std::length_error);
      EXPECT_THROW(s += 'x', std::length_error);
      EXPECT_THROW(s.insert(s.begin(), 'x'), std::length_error);
      EXPECT_THROW(s.append(s), std::length_error);
    }
    EXPECT_TRUE(unchanged(s, before));
    // out_of_range first, as std::string would throw it.
    EXPECT_THROW(s.insert(s.size() + 1, long_text.c_str()), std::out_of_range);
    EXPECT_THROW(s.replace(s.size() + 1, 0, full), std::out_of_range);
    EXPECT_TRUE(unchanged(s, before));
    if (room < 16) {
      EXPECT_THROW(s + full, std::length_error);
    }
    EXPECT_THROW(full + s + "x", std::length_error);
    EXPECT_THROW(F{long_text}, std::length_error);
    EXPECT_THROW(F(long_text.c_str()), std::length_error);
    EXPECT_THROW(F(17, 'x'), std::length_error);
    EXPECT_THROW(F(std::string_view(long_text)), std::length_error);
    EXPECT_TRUE(unchanged(s, before));
  }
}

TEST(SmallString, InlineCapacityIsNMinusOne) {
  EXPECT_EQ(small_string<16>().capacity(), 15u);
  EXPECT_EQ(small_string<24>().capacity(), 23u);
  EXPECT_EQ(small_string<32>().capacity(), 31u);
  EXPECT_EQ(small_string<40>().capacity(), 39u);
  EXPECT_EQ(small_string<64>().capacity(), 63u);
  EXPECT_EQ(small_string<128>().capacity(), 127u);
  EXPECT_EQ(small_string<256>().capacity(), 255u);
  EXPECT_EQ(small_string<>().capacity(), 31u);
  // N characters: exactly one allocation; N - 1: none.
  LOWALLOC_EXPECT_NO_ALLOCATIONS(small_string<40> s(39, 'x'));
  LOWALLOC_EXPECT_ALLOCATIONS(1, small_string<40> s(40, 'x'));
  LOWALLOC_EXPECT_NO_ALLOCATIONS(small_string<256> s(255, 'x'));
  LOWALLOC_EXPECT_ALLOCATIONS(1, small_string<256> s(256, 'x'));
  LOWALLOC_EXPECT_NO_ALLOCATIONS(small_string<16> s("fifteen chars!!"));
  LOWALLOC_EXPECT_ALLOCATIONS(1, small_string<16> s("sixteen chars!!!"));
}

TEST(SmallString, MaxSizeIsSane) {
  const small_string<> s;
  EXPECT_GE(s.max_size(), std::size_t{1} << 31);
  EXPECT_LE(s.max_size(),
            std::allocator_traits<std::allocator<char>>::max_size(std::allocator<char>()));
  EXPECT_LE(lowalloc::small_wstring<>().max_size(),
            std::allocator_traits<std::allocator<wchar_t>>::max_size(std::allocator<wchar_t>()));
  EXPECT_GE(lowalloc::small_u32string<>().max_size(), std::size_t{1} << 28);
}

// ---- streams ------------------------------------------------------------------------------------

template <class S>
void check_streams() {
  using C = typename S::value_type;
  using ref_t = std::basic_string<C>;
  using iss = std::basic_istringstream<C>;
  using oss = std::basic_ostringstream<C>;
  const auto w = [](std::string_view x) { return widen<C>(x); };
  // operator<<, with width, fill and adjustment.
  for (std::size_t len :
       {std::size_t{0}, std::size_t{3}, std::min<std::size_t>(S().max_size(), 40)}) {
    const ref_t t = text<C>(len);
    const S s(t);
    oss a, b;
    a << s << w("|").c_str();
    b << t << w("|").c_str();
    a.width(10);
    b.width(10);
    a << s;
    b << t;
    a << std::left << std::setfill(static_cast<C>('*'));
    b << std::left << std::setfill(static_cast<C>('*'));
    a.width(8);
    b.width(8);
    a << s << s;
    b << t << t;
    LOWALLOC_CHECK_EQ(a.str(), b.str());
  }
  // operator>>: whitespace skipping, width, failure at the end; the same state as std after each.
  for (const char* input : {"  hello world\n\tfoo   bar  ", "", "   ", "one", "a\nb\n\nc\n",
                            "averyveryverylongwordthatdoesnotfitinline x", "\x01 \x7f  ab"}) {
    for (std::streamsize width : {0, 1, 3, 100}) {
      SCOPED_TRACE(::testing::Message()
                   << "input " << show(std::string_view(input)) << ", width " << width);
      iss in_s(w(input)), in_r(w(input));
      S s(w("prior").c_str());
      ref_t r = w("prior");
      for (int i = 0; i < 8; ++i) {
        in_s.width(width);
        in_r.width(width);
        in_s >> s;
        in_r >> r;
        LOWALLOC_CHECK_TRUE(same(s, r)) << "read " << i;
        LOWALLOC_CHECK_EQ(in_s.rdstate(), in_r.rdstate()) << "read " << i;
        LOWALLOC_CHECK_EQ(in_s.width(), in_r.width()) << "read " << i;
        if (!in_r) break;
      }
    }
  }
  // getline, with and without a delimiter.
  for (const char* input : {"line one\n\nline three\nlast", "", "\n", "no newline", "a;b;;c;",
                            "averyveryverylongline with spaces that spills\nx"}) {
    for (int delimited = 0; delimited < 2; ++delimited) {
      SCOPED_TRACE(::testing::Message() << "input " << show(std::string_view(input))
                                        << (delimited ? ", delimiter ';'" : ""));
      iss in_s(w(input)), in_r(w(input));
      S s(w("prior").c_str());
      ref_t r = w("prior");
      for (int i = 0; i < 8; ++i) {
        if (delimited) {
          getline(in_s, s, static_cast<C>(';'));
          std::getline(in_r, r, static_cast<C>(';'));
        } else {
          getline(in_s, s);
          std::getline(in_r, r);
        }
        LOWALLOC_CHECK_TRUE(same(s, r)) << "line " << i;
        LOWALLOC_CHECK_EQ(in_s.rdstate(), in_r.rdstate()) << "line " << i;
        if (!in_r) break;
      }
    }
  }
  // From an rvalue stream.
  S s;
  getline(iss(w("first\nsecond")), s);
  LOWALLOC_CHECK_TRUE(same(s, w("first")));
  // Chaining returns the stream.
  iss in(w("x y"));
  S a, b;
  in >> a >> b;
  LOWALLOC_CHECK_TRUE(same(a, w("x")));
  LOWALLOC_CHECK_TRUE(same(b, w("y")));
}

TEST(Streams, MatchStdForNarrowAndWideStrings) {
  check_streams<small_string<24>>();
  check_streams<small_string<16>>();
  check_streams<fixed_string<64>>();
  check_streams<lowalloc::small_wstring<8>>();
  check_streams<counting_string>();
}

// Extraction stops at max_size() characters: operator>> leaves the rest for the next read,
// getline sets failbit unless the delimiter or the end of input comes next ([string.io]).
TEST(Streams, FixedStringStopsAtMaxSize) {
  std::istringstream words("abcdefghijkl mn");
  fixed_string<8> s;
  words >> s;
  EXPECT_TRUE(same(s, "abcdefgh"));
  EXPECT_TRUE(words.good());
  words >> s;
  EXPECT_TRUE(same(s, "ijkl"));
  words >> s;
  EXPECT_TRUE(same(s, "mn"));
  EXPECT_TRUE(words.eof());
  EXPECT_FALSE(words.fail());

  std::istringstream lines("abcdefghijkl\nabcdefgh\nxy");
  getline(lines, s);
  EXPECT_TRUE(same(s, "abcdefgh"));
  EXPECT_TRUE(lines.fail());
  lines.clear();
  getline(lines, s);
  EXPECT_TRUE(same(s, "ijkl"));
  EXPECT_TRUE(lines.good());
  getline(lines, s);  // exactly max_size() characters, then the delimiter: no failure
  EXPECT_TRUE(same(s, "abcdefgh"));
  EXPECT_TRUE(lines.good());
  getline(lines, s);
  EXPECT_TRUE(same(s, "xy"));
  EXPECT_TRUE(lines.eof());
  EXPECT_FALSE(lines.fail());
}

#ifndef LOWALLOC_NO_STD_OVERLOADS
// Documented: std::getline, std::erase and std::erase_if keep compiling after a change of type.
TEST(StdOverloads, GetlineEraseAndEraseIfThroughStd) {
  std::istringstream in("first line\nsecond");
  small_string<> s;
  std::getline(in, s);
  EXPECT_TRUE(same(s, "first line"));
  EXPECT_EQ(std::erase(s, 'i'), 2u);
  EXPECT_TRUE(same(s, "frst lne"));
  EXPECT_EQ(std::erase_if(s, [](char c) { return c == ' '; }), 1u);
  EXPECT_TRUE(same(s, "frstlne"));
  std::getline(in, s, 'c');
  EXPECT_TRUE(same(s, "se"));
  // The std containers' own overloads are unaffected.
  std::vector<int> v = {1, 2, 1};
#if defined(__cpp_lib_erase_if)
  EXPECT_EQ(std::erase(v, 1), 2u);
#endif
  std::string str = "abc";
  std::getline(in, str);
  EXPECT_EQ(str, "ond");
}
#endif

// ---- std::pmr -----------------------------------------------------------------------------------

// Counts what is asked of it and forwards to new/delete.
class counting_resource : public std::pmr::memory_resource {
 public:
  std::size_t allocations = 0;
  std::size_t deallocations = 0;
  std::size_t live_bytes = 0;

 private:
  void* do_allocate(std::size_t bytes, std::size_t align) override {
    ++allocations;
    live_bytes += bytes;
    return std::pmr::new_delete_resource()->allocate(bytes, align);
  }
  void do_deallocate(void* p, std::size_t bytes, std::size_t align) override {
    ++deallocations;
    live_bytes -= bytes;
    std::pmr::new_delete_resource()->deallocate(p, bytes, align);
  }
  bool do_is_equal(const std::pmr::memory_resource& o) const noexcept override {
    return this == &o;
  }
};

using pmr_string = lowalloc::pmr::small_string<32>;
constexpr const char* kLongText =
    "a string much longer than the thirty-one characters that fit inline";

TEST(PmrSmallString, MonotonicBufferOverAStackBufferMakesNoGlobalAllocation) {
  alignas(std::max_align_t) std::array<std::byte, 4096> buffer{};
  std::pmr::monotonic_buffer_resource mr(buffer.data(), buffer.size(),
                                         std::pmr::null_memory_resource());
  const auto in_buffer = [&](const char* p) {
    const auto* b = reinterpret_cast<const std::byte*>(p);
    return b >= buffer.data() && b < buffer.data() + buffer.size();
  };
  bool all_in_buffer = true;
  bool all_from_mr = true;
  lowalloc::alloc_counter scope;
  {
    pmr_string s(&mr);
    s = kLongText;
    s.append(s);
    pmr_string t(s, &mr);
    pmr_string u(kLongText, &mr);
    u.insert(0, "prefix ");
    u.replace(0, 6, t);
    pmr_string v(std::move(u));
    v += 'x';
    pmr_string w(&mr);
    w = v;
    w.reserve(1000);
    pmr_string x(std::move(t), &mr);
    x.shrink_to_fit();
    for (const pmr_string* p : {&s, &v, &w, &x}) {
      all_in_buffer &= in_buffer(p->data());
      all_from_mr &= p->get_allocator().resource() == &mr;
    }
  }
  const std::size_t allocations = scope.allocations();
  EXPECT_EQ(allocations, 0u) << "global allocations with a monotonic_buffer_resource";
  EXPECT_TRUE(all_in_buffer);
  EXPECT_TRUE(all_from_mr);
  static_assert(sizeof(pmr_string) > sizeof(small_string<32>), "the resource pointer");
}

TEST(PmrSmallString, AllocatesFromTheResourceItWasGiven) {
  counting_resource res, other;
  {
    pmr_string s(&res);
    s = "short";
    EXPECT_EQ(res.allocations, 0u);
    s = kLongText;
    EXPECT_EQ(res.allocations, 1u);
    EXPECT_EQ(s.get_allocator().resource(), &res);
    EXPECT_TRUE(same(s, kLongText));
    // Copy construction: select_on_container_copy_construction, as std::pmr::string.
    const std::pmr::string std_s(kLongText, &res);
    const std::pmr::string std_copy(std_s);
    const pmr_string copy(s);
    EXPECT_EQ(copy.get_allocator().resource(), std_copy.get_allocator().resource());
    EXPECT_EQ(copy.get_allocator().resource(), std::pmr::get_default_resource());
    const std::size_t res_allocations = res.allocations;
    // Moving takes the allocator along and allocates nothing.
    pmr_string moved(std::move(s));
    EXPECT_EQ(moved.get_allocator().resource(), &res);
    EXPECT_EQ(res.allocations, res_allocations);
    // Allocator-extended copy and move construction.
    const pmr_string elsewhere(moved, &other);
    EXPECT_EQ(elsewhere.get_allocator().resource(), &other);
    EXPECT_EQ(other.allocations, 1u);
    pmr_string moved_elsewhere(std::move(moved), &other);  // unequal: copies into `other`
    EXPECT_EQ(moved_elsewhere.get_allocator().resource(), &other);
    EXPECT_EQ(other.allocations, 2u);
    EXPECT_TRUE(same(moved_elsewhere, kLongText));
    // Move assignment across resources (no propagation): copies into the target's resource.
    pmr_string target(&res);
    target = std::move(moved_elsewhere);
    EXPECT_EQ(target.get_allocator().resource(), &res);
    EXPECT_EQ(res.allocations, res_allocations + 1);
    EXPECT_TRUE(same(target, kLongText));
    // Copy assignment keeps the target's resource.
    pmr_string target2(&other);
    target2 = target;
    EXPECT_EQ(target2.get_allocator().resource(), &other);
    EXPECT_EQ(other.allocations, 3u);
    // Swap with the same resource exchanges the buffers.
    pmr_string a(kLongText, &res), b("b", &res);
    const char* buffer = a.data();
    a.swap(b);
    EXPECT_EQ(b.data(), buffer);
    EXPECT_TRUE(same(a, "b"));
    // Operations that make new strings from a given one: the resource std::pmr::string picks.
    const std::pmr::string std_b("b", &res);
    EXPECT_EQ((target + b).get_allocator().resource(), (std_s + std_b).get_allocator().resource());
    EXPECT_EQ((target + "x").get_allocator().resource(), (std_s + "x").get_allocator().resource());
    EXPECT_EQ(("x" + target).get_allocator().resource(), ("x" + std_s).get_allocator().resource());
    EXPECT_EQ((target + 'x').get_allocator().resource(), (std_s + 'x').get_allocator().resource());
    EXPECT_EQ(('x' + target).get_allocator().resource(), ('x' + std_s).get_allocator().resource());
    EXPECT_EQ(target.substr(1).get_allocator().resource(),
              std_s.substr(1).get_allocator().resource());
  }
  EXPECT_EQ(res.live_bytes, 0u);
  EXPECT_EQ(other.live_bytes, 0u);
  EXPECT_EQ(res.allocations, res.deallocations);
  EXPECT_EQ(other.allocations, other.deallocations);
}

TEST(PmrSmallString, UsesAllocatorConstructionInAPmrVector) {
  static_assert(std::uses_allocator_v<pmr_string, std::pmr::polymorphic_allocator<pmr_string>>);
  counting_resource res, other;
  {
    std::pmr::vector<pmr_string> v(&res);
    std::pmr::vector<std::pmr::string> w(&res);  // the reference
    v.emplace_back(kLongText);
    w.emplace_back(kLongText);
    v.emplace_back("short");
    w.emplace_back("short");
    pmr_string outside(kLongText, &other);
    const std::pmr::string std_outside(kLongText, &other);
    v.push_back(outside);  // copied with the vector's resource
    w.push_back(std_outside);
    v.push_back(std::move(outside));  // unequal resources: copied into the vector's
    w.push_back(std::pmr::string(std_outside));
    v.emplace_back(std::size_t{40}, 'x');
    w.emplace_back(std::size_t{40}, 'x');
    v.resize(12);  // reallocation moves the elements with the vector's allocator
    w.resize(12);
    v.insert(v.begin(), pmr_string("front", &other));
    w.insert(w.begin(), std::pmr::string("front", &other));
    ASSERT_EQ(v.size(), w.size());
    for (std::size_t i = 0; i < v.size(); ++i) {
      EXPECT_EQ(v[i].get_allocator().resource(), &res) << i;
      EXPECT_EQ(v[i].get_allocator().resource(), w[i].get_allocator().resource()) << i;
      EXPECT_EQ(std::string_view(v[i]), std::string_view(w[i])) << i;
    }
    std::pmr::vector<pmr_string> copy(v, &other);
    for (const auto& s : copy) EXPECT_EQ(s.get_allocator().resource(), &other);
  }
  EXPECT_EQ(res.live_bytes, 0u);
  EXPECT_EQ(other.live_bytes, 0u);
}

// ---- hashing and heterogeneous lookup -----------------------------------------------------------

struct view_hash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const noexcept {
    return std::hash<std::string_view>()(s);
  }
};
struct view_equal {
  using is_transparent = void;
  bool operator()(std::string_view a, std::string_view b) const noexcept { return a == b; }
};

TEST(StringHash, HeterogeneousLookup) {
  std::unordered_set<small_string<>, view_hash, view_equal> set;
  set.insert(small_string<>("alpha"));
  set.emplace(kLongText);
  for (const char* key : {"alpha", kLongText}) {
    const small_string<> s(key);
    EXPECT_EQ(std::hash<small_string<>>()(s), std::hash<std::string_view>()(key));
    EXPECT_EQ(std::hash<small_string<>>()(s), std::hash<std::string>()(std::string(key)));
    EXPECT_EQ(std::hash<small_string<>>()(s), view_hash()(s));
  }
#if defined(__cpp_lib_generic_unordered_lookup)
  lowalloc::alloc_counter scope;
  const bool found = set.find(std::string_view("alpha")) != set.end() &&
                     set.count(std::string_view(kLongText)) == 1 &&
                     set.find(std::string_view("beta")) == set.end();
  const std::size_t allocations = scope.allocations();
  EXPECT_TRUE(found);
  EXPECT_EQ(allocations, 0u) << "a lookup by view makes no temporary string";
  EXPECT_TRUE(set.contains(std::string_view("alpha")));
#endif
  // std::hash works for the other character types and storages too.
  EXPECT_EQ(std::hash<fixed_string<16>>()(fixed_string<16>("alpha")),
            std::hash<std::string_view>()("alpha"));
  EXPECT_EQ(std::hash<lowalloc::small_u16string<>>()(lowalloc::small_u16string<>(u"alpha")),
            std::hash<std::u16string_view>()(u"alpha"));
  EXPECT_EQ(std::hash<lowalloc::small_u32string<>>()(lowalloc::small_u32string<>(U"alpha")),
            std::hash<std::u32string_view>()(U"alpha"));
}

// ---- the other character types ------------------------------------------------------------------

static_assert(sizeof(lowalloc::small_wstring<8>) == 8 * sizeof(wchar_t) ||
              8 * sizeof(wchar_t) < 24);
static_assert(sizeof(lowalloc::small_u16string<16>) == 32);
static_assert(sizeof(lowalloc::small_u16string<32>) == 64);
static_assert(sizeof(lowalloc::small_u16string<12>) == 24);
static_assert(sizeof(lowalloc::small_u16string<8>) == 24);  // the smallest object
static_assert(sizeof(lowalloc::small_u32string<8>) == 32);
static_assert(sizeof(lowalloc::small_u32string<6>) == 24);
static_assert(sizeof(lowalloc::small_u32string<16>) == 64);
static_assert(sizeof(lowalloc::fixed_u16string<10>) <= 11 * sizeof(char16_t));
static_assert(sizeof(lowalloc::fixed_u32string<10>) <= 11 * sizeof(char32_t));
static_assert(sizeof(lowalloc::fixed_wstring<3>) <= 4 * sizeof(wchar_t));
#if defined(__cpp_char8_t)
static_assert(sizeof(lowalloc::small_u8string<32>) == 32);
static_assert(sizeof(lowalloc::small_u8string<24>) == 24);
static_assert(sizeof(lowalloc::fixed_u8string<15>) <= 16);
#endif

// Construct, append across the inline capacity, find, compare, hash and terminate: with code
// units outside ASCII.
template <class S>
void check_character_type(const typename S::value_type* word, std::size_t inline_capacity) {
  using C = typename S::value_type;
  using view_t = std::basic_string_view<C>;
  const view_t w(word);
  S s(word);
  LOWALLOC_CHECK_EQ(s.capacity(), inline_capacity);
  LOWALLOC_CHECK_TRUE(same(s, std::basic_string<C>(w)));
  LOWALLOC_CHECK_TRUE(s == word);
  LOWALLOC_CHECK_TRUE(word == s);
  LOWALLOC_CHECK_TRUE(s == w);
  std::basic_string<C> ref(w);
  while (ref.size() <= inline_capacity) {
    s.append(w);
    ref.append(w);
  }
  LOWALLOC_CHECK_TRUE(same(s, ref));
  LOWALLOC_CHECK_GT(s.capacity(), inline_capacity);
  LOWALLOC_CHECK_EQ(s.find(w, 1), ref.find(w, 1));
  LOWALLOC_CHECK_EQ(s.rfind(w.back()), ref.rfind(w.back()));
  LOWALLOC_CHECK_EQ(s.find_first_not_of(word), npos);
  LOWALLOC_CHECK_GT(s.compare(word), 0);
  LOWALLOC_CHECK_TRUE(S(word) < s);
  LOWALLOC_CHECK_EQ(std::hash<S>()(s), std::hash<view_t>()(view_t(ref)));
  s.resize(1);
  s.shrink_to_fit();
  LOWALLOC_CHECK_EQ(s.capacity(), inline_capacity);
  LOWALLOC_CHECK_TRUE(same(s, ref.substr(0, 1)));
  const S t = s + word + S(word).substr(1);
  LOWALLOC_CHECK_TRUE(
      same(t, ref.substr(0, 1) + std::basic_string<C>(w) + std::basic_string<C>(w.substr(1))));
  LOWALLOC_CHECK_EQ(t.c_str()[t.size()], C());
}

TEST(CharacterTypes, WideUtf16Utf32AndUtf8) {
  check_character_type<lowalloc::small_wstring<8>>(L"\u00e9t\u00e9", 7);
  check_character_type<lowalloc::small_wstring<>>(L"w\u4e2dx", 31);
  check_character_type<lowalloc::small_u16string<16>>(u"\u00e9\u4e2d\U0001F600", 15);
  check_character_type<lowalloc::small_u16string<8>>(u"ab\u4e2d", 7);  // 24 bytes, 7 inline
  check_character_type<lowalloc::small_u32string<8>>(U"\U0001F600x", 7);
  check_character_type<lowalloc::small_u32string<6>>(U"\U0001F600x", 5);
#if defined(__cpp_char8_t)
  check_character_type<lowalloc::small_u8string<32>>(u8"\u00e9t\u00e9 \u4e2d", 31);
  check_character_type<lowalloc::small_u8string<16>>(u8"\u00e9t\u00e9", 15);
#endif
  // N counts code units: 7 char16_t fit a small_u16string<8> without allocating, 8 do not.
  LOWALLOC_EXPECT_NO_ALLOCATIONS(lowalloc::small_u16string<8> s(7, u'x'));
  LOWALLOC_EXPECT_ALLOCATIONS(1, lowalloc::small_u16string<8> s(8, u'x'));
  LOWALLOC_EXPECT_NO_ALLOCATIONS(lowalloc::small_u32string<16> s(15, U'x'));
  LOWALLOC_EXPECT_ALLOCATIONS(1, lowalloc::small_u32string<16> s(16, U'x'));
  // Fixed wide strings: N code units, then std::length_error.
  lowalloc::fixed_u16string<4> f(u"\u4e2d\u4e2d");
  EXPECT_EQ(f.max_size(), 4u);
  EXPECT_EQ(f.capacity(), 4u);
  f += u"ab";
  EXPECT_TRUE(f == u"\u4e2d\u4e2dab");
  EXPECT_EQ(f.c_str()[4], u'\0');
  EXPECT_THROW(f.push_back(u'x'), std::length_error);
  lowalloc::fixed_u32string<3> g(U"\U0001F600");
  g.insert(0, 2, U'-');
  EXPECT_TRUE(g == U"--\U0001F600");
  EXPECT_THROW(g.insert(0, U"x"), std::length_error);
  lowalloc::fixed_wstring<2> h;
  h = L"ab";
  EXPECT_EQ(h.size(), 2u);
  EXPECT_EQ(h.c_str()[2], L'\0');
#if defined(__cpp_char8_t)
  lowalloc::fixed_u8string<4> u8s(u8"\u00e9");  // two code units
  EXPECT_EQ(u8s.size(), 2u);
  EXPECT_THROW(u8s.append(u8"\u4e2d"), std::length_error);  // three more
  EXPECT_EQ(u8s.size(), 2u);
#endif
}

// ---- a user-written storage (also a parameter of the typed tests) -------------------------------
// --------------------------------

TEST(UserStorage, GetsTheWholeInterface) {
  calls() = storage_calls{};
  counting_string s = "hello";
  EXPECT_EQ(calls().allocations, 1);
  s.append(", world");
  s.replace(0, 5, "goodbye");
  s.insert(s.find(','), " cruel");
  EXPECT_TRUE(same(s, "goodbye cruel, world"));
  EXPECT_EQ(s.find("cruel"), 8u);
  EXPECT_EQ(s.rfind('o'), 16u);
  EXPECT_GT(s.compare("goodbye"), 0);
  EXPECT_TRUE(s.starts_with("good"));
  EXPECT_TRUE(s == std::string("goodbye cruel, world"));
  EXPECT_TRUE("goodbye cruel, world" == s);
  const counting_string t = s.substr(8, 5) + '!';
  EXPECT_TRUE(same(t, "cruel!"));
  EXPECT_EQ(std::hash<counting_string>()(t), std::hash<std::string_view>()("cruel!"));
  std::ostringstream out;
  out << t;
  EXPECT_EQ(out.str(), "cruel!");
  EXPECT_EQ(erase(s, 'o'), 3u);
  // A storage without an allocator: std::allocator is reported, and accepted and ignored.
  static_assert(std::is_same_v<counting_string::allocator_type, std::allocator<char>>);
  const counting_string u("abc", std::allocator<char>());
  EXPECT_TRUE(same(u, "abc"));
  // basic_string owns the growth policy: geometric over the storage's exact reserve.
  calls() = storage_calls{};
  counting_string g;
  for (int i = 0; i < 10000; ++i) g.push_back('g');
  EXPECT_LE(calls().allocations, 20);
  EXPECT_EQ(g.size(), 10000u);
  // And the position and length checks.
  EXPECT_THROW(g.insert(10001, "x"), std::out_of_range);
  EXPECT_THROW(g.reserve(g.max_size() + 1), std::length_error);
  EXPECT_THROW(g.append(g.max_size(), 'x'), std::length_error);
  EXPECT_EQ(g.size(), 10000u);
}

// ---- conformance: what std::basic_string's specification asks of the interface ------------------

// `using std::swap; swap(a, b)` and std::ranges::swap take basic_string's swap (one exchange of
// the storages), not the generic std::swap (a move construction and two move assignments, each
// of them a storage swap in counting_storage).
TEST(StringConformance, SwapFoundByLookupIsTheStringsOwn) {
  counting_string a = "first";
  counting_string b = "second";
  calls() = storage_calls{};
  {
    using std::swap;
    swap(a, b);
  }
  EXPECT_EQ(calls().swaps, 1);
  EXPECT_TRUE(same(a, "second"));
  EXPECT_TRUE(same(b, "first"));
#if LOWALLOC_HAS_RANGES
  calls() = storage_calls{};
  std::ranges::swap(a, b);
  EXPECT_EQ(calls().swaps, 1);
  EXPECT_TRUE(same(a, "first"));
#endif
  small_string<16> x = "x";
  small_string<16> y = "a longer text that lives on the heap";
  const char* heap = y.data();
  {
    using std::swap;
    static_assert(noexcept(swap(x, y)));
    swap(x, y);
  }
  EXPECT_EQ(x.data(), heap);  // the heap block changed hands
  EXPECT_TRUE(same(y, "x"));
}

// resize_and_overwrite calls the operation with rvalues (LWG 3645): by value and by rvalue
// reference both work.
TEST(StringConformance, ResizeAndOverwritePassesRvalues) {
  small_string<32> s = "abc";
  s.resize_and_overwrite(10, [](char*&& p, std::size_t&& n) {
    std::fill(p, p + n, 'z');
    return n - 4;
  });
  EXPECT_TRUE(same(s, "zzzzzz"));
  fixed_string<16> f;
  f.resize_and_overwrite(3, [](char* p, const std::size_t n) {
    std::fill(p, p + n, 'q');
    return n;
  });
  EXPECT_TRUE(same(f, "qqq"));
  small_string<32> e = "gone";
  e.resize_and_overwrite(40, [](char*&&, std::size_t&&) { return 0; });
  EXPECT_TRUE(e.empty());
  EXPECT_GE(e.capacity(), 40u);
}

// An allocator whose size_type is 32 bits: the string's size_type and difference_type are the
// allocator's, as std::basic_string's (and this test builds with -Wconversion -Werror).
template <class T>
struct narrow_allocator {
  using value_type = T;
  using size_type = std::uint32_t;
  using difference_type = std::int32_t;
  narrow_allocator() = default;
  template <class U>
  narrow_allocator(const narrow_allocator<U>&) noexcept {}  // NOLINT: converting, as std's
  T* allocate(size_type n) { return std::allocator<T>().allocate(n); }
  void deallocate(T* p, size_type n) noexcept { std::allocator<T>().deallocate(p, n); }
  friend bool operator==(narrow_allocator, narrow_allocator) noexcept { return true; }
  friend bool operator!=(narrow_allocator, narrow_allocator) noexcept { return false; }
};
using narrow_string = small_string<24, narrow_allocator<char>>;

static_assert(std::is_same_v<narrow_string::size_type, std::uint32_t>);
static_assert(std::is_same_v<narrow_string::difference_type, std::int32_t>);
static_assert(narrow_string::npos == std::numeric_limits<std::uint32_t>::max());
static_assert(std::is_same_v<small_string<24>::size_type, std::size_t>);
static_assert(std::is_same_v<small_string<24>::difference_type, std::ptrdiff_t>);
static_assert(std::is_same_v<fixed_string<24>::size_type, std::size_t>);
static_assert(std::is_same_v<lowalloc::pmr::small_string<24>::size_type, std::size_t>);
static_assert(std::is_same_v<decltype(std::declval<narrow_string&>().size()), std::uint32_t>);
static_assert(std::is_same_v<decltype(std::declval<narrow_string&>().find('x')), std::uint32_t>);

TEST(StringConformance, SizeTypeComesFromTheAllocator) {
  narrow_string s = "a short text";
  EXPECT_LT(s.max_size(), narrow_string::npos);
  // Not found is this size_type's npos, not std::size_t's truncated or compared wrongly.
  EXPECT_EQ(s.find('#'), narrow_string::npos);
  EXPECT_EQ(s.rfind("##"), narrow_string::npos);
  EXPECT_EQ(s.find_first_of("#%"), narrow_string::npos);
  EXPECT_EQ(s.find_last_not_of("a short text"), narrow_string::npos);
  EXPECT_FALSE(s.contains('#'));
  EXPECT_FALSE(s.contains("##"));
  EXPECT_FALSE(s.contains(std::string_view("##")));
  EXPECT_TRUE(s.contains("short"));
  EXPECT_EQ(s.find("text"), narrow_string::size_type{8});
  EXPECT_EQ(s.rfind('t'), narrow_string::size_type{11});
  // Growth onto the heap and back through the allocator.
  for (int i = 0; i < 100; ++i) s += " and more";
  EXPECT_EQ(s.size(), narrow_string::size_type{12 + 100 * 9});
  EXPECT_EQ(s.substr(0, 7), "a short");
  s.replace(0, 1, "one");
  EXPECT_EQ(s.compare(0, 9, "one short"), 0);
  EXPECT_EQ(erase(s, 'a'), narrow_string::size_type{100});  // one in each " and more"
  s.resize_and_overwrite(5, [](char* p, narrow_string::size_type n) {
    std::fill(p, p + n, 'w');
    return n;
  });
  EXPECT_EQ(s, "wwwww");
  EXPECT_EQ(s + "!" + s, "wwwww!wwwww");
  // A length that the narrow size_type cannot hold throws std::length_error before anything is
  // read or changed (it is past max_size()); it does not wrap around to a small length.
  const char c = 'x';
  const std::string_view huge(&c, std::size_t{1} << 33);
  EXPECT_THROW(s.append(huge), std::length_error);
  EXPECT_THROW(s.assign(huge), std::length_error);
  EXPECT_THROW(s.insert(0, huge), std::length_error);
  EXPECT_THROW(narrow_string{huge}, std::length_error);
  EXPECT_EQ(s, "wwwww");
}

}  // namespace
