// lowalloc::small_string's exception guarantees, tested rather than claimed: every operation that
// can allocate runs again and again with the k-th allocation throwing std::bad_alloc (k = 0, 1,
// 2, ... until it completes), from strings just below, at and above the inline capacity, grown
// geometrically, exactly sized or with spare heap room, for several N and a wide character type.
//
//  - strong guarantee: after a failure the string has the same value, size, capacity, buffer and
//    allocator (and an argument or source string is untouched);
//  - nothing leaks, and every block goes back to the allocator that gave it, with its size;
//  - std::length_error past max_size() and std::out_of_range past size() change nothing and
//    allocate nothing;
//  - swap and the moves with equal allocators never allocate;
//  - the allocator propagation traits (copy and move assignment, swap, copy construction) with a
//    stateful allocator whose instances are not equal.
#include <lowalloc/string.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <functional>
#include <iterator>
#include <limits>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace {

constexpr std::size_t npos = std::string::npos;

// ---- an allocator that fails on demand and checks every deallocation ---------------------------

struct allocation_control {
  long countdown = -1;  // the countdown-th next allocation throws; -1: none
  long allocations = 0;
  long live_blocks = 0;
  std::size_t live_bytes = 0;
  long bad_deallocations = 0;  // wrong pointer, size or allocator
};
allocation_control& control() {
  static allocation_control c;
  return c;
}

// The live blocks: which allocator (id) gave each one, and its size.
struct block {
  const void* p;
  std::size_t bytes;
  int id;
};
constexpr std::size_t kMaxBlocks = 64;
std::array<block, kMaxBlocks>& blocks() {
  static std::array<block, kMaxBlocks> b{};
  return b;
}

void record(const void* p, std::size_t bytes, int id) {
  for (block& b : blocks()) {
    if (b.p == nullptr) {
      b = block{p, bytes, id};
      return;
    }
  }
  std::abort();  // more live blocks than any test makes
}
void forget(const void* p, std::size_t bytes, int id) {
  for (block& b : blocks()) {
    if (b.p == p) {
      if (b.bytes != bytes || b.id != id) ++control().bad_deallocations;
      b = block{};
      return;
    }
  }
  ++control().bad_deallocations;  // never allocated (or freed twice)
}

// Which propagation traits the allocator has; `soccc`: copy construction selects another instance.
template <bool CopyAssign, bool MoveAssign, bool Swap, bool SelectOnCopy = false>
struct policy {
  static constexpr bool pocca = CopyAssign;
  static constexpr bool pocma = MoveAssign;
  static constexpr bool pocs = Swap;
  static constexpr bool soccc = SelectOnCopy;
};
using no_propagation = policy<false, false, false>;

// Stateful: instances with different ids are not equal, and memory must go back to an equal one.
// The countdown-th next allocation throws std::bad_alloc.
template <class T, class Policy = no_propagation>
class test_allocator {
 public:
  using value_type = T;
  using propagate_on_container_copy_assignment = std::bool_constant<Policy::pocca>;
  using propagate_on_container_move_assignment = std::bool_constant<Policy::pocma>;
  using propagate_on_container_swap = std::bool_constant<Policy::pocs>;
  using is_always_equal = std::false_type;
  template <class U>
  struct rebind {
    using other = test_allocator<U, Policy>;
  };

  explicit test_allocator(int id = 1) noexcept : id_(id) {}
  template <class U>
  test_allocator(const test_allocator<U, Policy>& o) noexcept : id_(o.id()) {}  // NOLINT

  T* allocate(std::size_t n) {
    allocation_control& c = control();
    if (c.countdown == 0) {
      c.countdown = -1;
      throw std::bad_alloc();
    }
    if (c.countdown > 0) --c.countdown;
    T* p = std::allocator<T>().allocate(n);
    ++c.allocations;
    ++c.live_blocks;
    c.live_bytes += n * sizeof(T);
    record(p, n * sizeof(T), id_);
    return p;
  }
  void deallocate(T* p, std::size_t n) noexcept {
    allocation_control& c = control();
    --c.live_blocks;
    c.live_bytes -= n * sizeof(T);
    forget(p, n * sizeof(T), id_);
    std::allocator<T>().deallocate(p, n);
  }
  test_allocator select_on_container_copy_construction() const noexcept {
    return test_allocator(Policy::soccc ? id_ + 100 : id_);
  }
  int id() const noexcept { return id_; }
  friend bool operator==(const test_allocator& a, const test_allocator& b) noexcept {
    return a.id_ == b.id_;
  }
  friend bool operator!=(const test_allocator& a, const test_allocator& b) noexcept {
    return a.id_ != b.id_;
  }

 private:
  int id_;
};

void arm(long k) { control().countdown = k; }
void disarm() { control().countdown = -1; }

// ---- observing a string ------------------------------------------------------------------------

template <class S>
using text_of = std::basic_string<typename S::value_type>;

template <class S>
struct snapshot {
  text_of<S> value;
  std::size_t capacity;
  const typename S::value_type* data;
  int allocator;
};
template <class S>
snapshot<S> take(const S& s) {
  return {text_of<S>(s.data(), s.size()), s.capacity(), s.data(), s.get_allocator().id()};
}

template <class S>
::testing::AssertionResult holds(const S& s, const text_of<S>& expected) {
  using C = typename S::value_type;
  if (std::basic_string_view<C>(s.data(), s.size()) != std::basic_string_view<C>(expected)) {
    return ::testing::AssertionFailure()
           << "the text differs (size " << s.size() << ", expected " << expected.size() << ")";
  }
  if (s.c_str()[s.size()] != C()) return ::testing::AssertionFailure() << "not NUL-terminated";
  if (s.size() > s.capacity()) return ::testing::AssertionFailure() << "size > capacity";
  return ::testing::AssertionSuccess();
}

// The strong guarantee: nothing observable changed.
template <class S>
::testing::AssertionResult unchanged(const S& s, const snapshot<S>& before) {
  ::testing::AssertionResult r = holds(s, before.value);
  if (!r) return r;
  if (s.capacity() != before.capacity) {
    return ::testing::AssertionFailure()
           << "capacity " << s.capacity() << ", was " << before.capacity;
  }
  if (s.data() != before.data) return ::testing::AssertionFailure() << "the buffer changed";
  if (s.get_allocator().id() != before.allocator) {
    return ::testing::AssertionFailure() << "the allocator changed";
  }
  return ::testing::AssertionSuccess();
}

template <class C>
std::basic_string<C> text(std::size_t n, std::size_t seed = 0) {
  std::basic_string<C> out;
  for (std::size_t i = 0; i < n; ++i) out.push_back(static_cast<C>('a' + (i + seed) % 26));
  return out;
}

// A single-pass iterator over a buffer.
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

// ---- the typed harness -------------------------------------------------------------------------

template <class CharT, std::size_t N>
struct config {
  using str =
      lowalloc::basic_small_string<CharT, N, std::char_traits<CharT>, test_allocator<CharT>>;
  static constexpr std::size_t inline_capacity = N - 1;
};
using configs = ::testing::Types<config<char, 16>, config<char, 24>, config<char, 32>,
                                 config<char, 64>, config<wchar_t, 8>>;
struct config_names {
  template <class C>
  static std::string GetName(int) {
    using Ch = typename C::str::value_type;
    return std::string(std::is_same_v<Ch, char> ? "small" : "wsmall") +
           std::to_string(C::inline_capacity + 1);
  }
};

template <class Config>
class StringExceptions : public ::testing::Test {
 public:
  using str_type = typename Config::str;
  using char_type = typename str_type::value_type;
  using ref_type = std::basic_string<char_type>;
  using alloc_type = typename str_type::allocator_type;
  static constexpr std::size_t kInline = Config::inline_capacity;

  // grown: by push_back (inline, then geometric); exact: constructed, so a heap buffer of exactly
  // size(); spare: a heap buffer with room left, even for a short text.
  enum class layout { grown, exact, spare };
  static const char* name(layout l) {
    return l == layout::grown ? "grown" : l == layout::exact ? "exact" : "spare";
  }
  static std::vector<std::size_t> lengths() {
    return {0, 1, kInline - 1, kInline, kInline + 1, 2 * kInline + 3};
  }
  static str_type make(std::size_t n, layout l) {
    const ref_type t = text<char_type>(n);
    if (l == layout::exact) return str_type(t.data(), n, alloc_type(1));
    str_type s{alloc_type(1)};
    if (l == layout::spare) s.reserve(std::max(n, kInline) + 8);
    for (char_type c : t) s.push_back(c);
    return s;
  }

  // Runs op(s, arg) on S with the k-th allocation failing, for k = 0, 1, ... until it completes,
  // from every starting string. After a failure, S and the argument must be unchanged; after the
  // completion both must equal what op does to std::basic_string (and op's results must agree).
  // Nothing may leak. Returns the number of failures injected.
  using ref_op = std::function<long long(ref_type&, ref_type&)>;
  using str_op = std::function<long long(str_type&, str_type&)>;
  static long run_one(const char* what, const ref_type& arg_text, const ref_op& on_ref,
                      const str_op& on_str) {
    long failures = 0;
    for (std::size_t len : lengths()) {
      for (layout l : {layout::grown, layout::exact, layout::spare}) {
        SCOPED_TRACE(::testing::Message()
                     << what << " on a string of length " << len << " (" << name(l)
                     << "), argument of length " << arg_text.size());
        ref_type ref = text<char_type>(len);
        ref_type ref_arg = arg_text;
        const long long want = on_ref(ref, ref_arg);
        for (long k = 0;; ++k) {
          if (k == 100) {
            ADD_FAILURE() << "the operation never completed";
            break;
          }
          const long blocks_before = control().live_blocks;
          bool completed = false;
          {
            str_type s = make(len, l);
            str_type arg(arg_text.data(), arg_text.size(), alloc_type(2));
            const snapshot<str_type> before = take(s);
            const snapshot<str_type> arg_before = take(arg);
            arm(k);
            try {
              const long long got = on_str(s, arg);
              completed = true;
              disarm();
              EXPECT_TRUE(holds(s, ref));
              EXPECT_TRUE(holds(arg, ref_arg));
              EXPECT_EQ(got, want);
            } catch (const std::bad_alloc&) {
              disarm();
              ++failures;
              EXPECT_TRUE(unchanged(s, before)) << "failure at allocation " << k;
              EXPECT_TRUE(unchanged(arg, arg_before))
                  << "the argument; failure at allocation " << k;
            }
          }
          EXPECT_EQ(control().live_blocks, blocks_before) << "leaked; failure at allocation " << k;
          if (completed) break;
        }
      }
    }
    return failures;
  }
  // Every operation of a family: op(which, s, a) performs operation `which` (named
  // names[which]) and returns something to compare (0 when there is nothing). One lambda per
  // family keeps the instantiations, and the compile time, down.
  template <std::size_t K, class Op>
  static long run(const char* const (&names)[K], const ref_type& arg, Op op) {
    long failures = 0;
    for (std::size_t i = 0; i < K; ++i) {
      failures +=
          run_one(names[i], arg, ref_op([i, op](ref_type& s, ref_type& a) { return op(i, s, a); }),
                  str_op([i, op](str_type& s, str_type& a) { return op(i, s, a); }));
    }
    return failures;
  }
  static std::vector<ref_type> args() {
    return {ref_type(), text<char_type>(1, 5), text<char_type>(kInline, 7),
            text<char_type>(3 * kInline, 9)};
  }

 protected:
  void SetUp() override {
    disarm();
    control() = allocation_control{};
    blocks() = {};
  }
  void TearDown() override {
    disarm();
    EXPECT_EQ(control().live_blocks, 0) << "blocks leaked";
    EXPECT_EQ(control().live_bytes, 0u) << "bytes leaked";
    EXPECT_EQ(control().bad_deallocations, 0) << "blocks freed with the wrong size or allocator";
  }
};
TYPED_TEST_SUITE(StringExceptions, configs, config_names);

// Where an iterator points, computed after the call that returned it.
template <class T, class It>
long long offset_in(const T& s, It it) {
  return static_cast<long long>(it - s.begin());
}

TYPED_TEST(StringExceptions, AppendIsStrong) {
  using C = typename TestFixture::char_type;
  using view = std::basic_string_view<C>;
  static constexpr const char* kOps[] = {
      "append(a)",                   // 0
      "append(a, 1, npos)",          // 1
      "append(p, n)",                // 2
      "append(p)",                   // 3
      "append(first, last)",         // 4
      "append(input first, last)",   // 5
      "append(view)",                // 6
      "s += a",                      // 7
      "s += p",                      // 8
      "append(n, c)",                // 9
      "append({...})",               // 10
      "push_back(c)",                // 11
      "s += c",                      // 12
      "append(s)",                   // 13
      "append(s.data(), size)",      // 14
      "append(s.begin(), s.end())",  // 15
  };
  long failures = 0;
  for (const auto& arg : TestFixture::args()) {
    failures += this->run(kOps, arg, [](std::size_t which, auto& s, auto& a) -> long long {
      switch (which) {
        case 0:
          s.append(a);
          break;
        case 1:
          s.append(a, a.empty() ? 0 : 1, npos);
          break;
        case 2:
          s.append(a.data(), a.size());
          break;
        case 3:
          s.append(a.c_str());
          break;
        case 4:
          s.append(a.begin(), a.end());
          break;
        case 5:
          s.append(input_iter<C>(a.data()), input_iter<C>(a.data() + a.size()));
          break;
        case 6:
          s.append(view(a));
          break;
        case 7:
          s += a;
          break;
        case 8:
          s += a.c_str();
          break;
        case 9:
          s.append(TestFixture::kInline + 2, C('q'));
          break;
        case 10:
          s.append({C('a'), C('b')});
          break;
        case 11:
          s.push_back(C('p'));
          break;
        case 12:
          s += C('p');
          break;
        case 13:
          s.append(s);
          break;
        case 14:
          s.append(s.data(), s.size());
          break;
        case 15:
          s.append(s.begin(), s.end());
          break;
      }
      return 0;
    });
  }
  EXPECT_GT(failures, 0);
}

TYPED_TEST(StringExceptions, InsertIsStrong) {
  using C = typename TestFixture::char_type;
  using view = std::basic_string_view<C>;
  static constexpr const char* kOps[] = {
      "insert(0, a)",                    // 0
      "insert(size / 2, p, n)",          // 1
      "insert(size, p)",                 // 2
      "insert(1, view)",                 // 3
      "insert(it, first, last)",         // 4
      "insert(it, input first, last)",   // 5
      "insert(size / 2, n, c)",          // 6
      "insert(it, c)",                   // 7
      "insert(it, n, c)",                // 8
      "insert(it, {...})",               // 9
      "insert(0, s)",                    // 10
      "insert(size / 2, s.c_str())",     // 11
      "insert(it, s.begin(), s.end())",  // 12
  };
  long failures = 0;
  for (const auto& arg : TestFixture::args()) {
    failures += this->run(kOps, arg, [](std::size_t which, auto& s, auto& a) -> long long {
      const auto mid = s.begin() + static_cast<std::ptrdiff_t>(s.size() / 2);
      switch (which) {
        case 0:
          s.insert(0, a);
          break;
        case 1:
          s.insert(s.size() / 2, a.data(), a.size());
          break;
        case 2:
          s.insert(s.size(), a.c_str());
          break;
        case 3:
          if (!s.empty()) s.insert(1, view(a));
          break;
        case 4:
          return offset_in(s, s.insert(mid, a.begin(), a.end()));
        case 5:
          return offset_in(
              s, s.insert(s.begin(), input_iter<C>(a.data()), input_iter<C>(a.data() + a.size())));
        case 6:
          s.insert(s.size() / 2, TestFixture::kInline + 1, C('i'));
          break;
        case 7:
          return offset_in(s, s.insert(s.end(), C('i')));
        case 8:
          return offset_in(s, s.insert(s.begin(), 3, C('i')));
        case 9:
          return offset_in(s, s.insert(s.begin(), {C('x'), C('y')}));
        case 10:
          s.insert(0, s);
          break;
        case 11:
          s.insert(s.size() / 2, s.c_str());
          break;
        case 12:
          return offset_in(s, s.insert(mid, s.begin(), s.end()));
      }
      return 0;
    });
  }
  EXPECT_GT(failures, 0);
}

TYPED_TEST(StringExceptions, ReplaceIsStrong) {
  using C = typename TestFixture::char_type;
  using view = std::basic_string_view<C>;
  static constexpr const char* kOps[] = {
      "replace(0, 1, a)",                       // 0
      "replace(size / 2, 2, p, n)",             // 1
      "replace(0, npos, view)",                 // 2
      "replace(i1, i2, first, last)",           // 3
      "replace(i1, i2, input first, last)",     // 4
      "replace(0, 1, n, c)",                    // 5
      "replace(i1, i2, {...})",                 // 6
      "replace(0, 1, s)",                       // 7
      "replace(size / 2, 1, s.data(), size)",   // 8
      "replace(end, end, s.begin(), s.end())",  // 9
  };
  long failures = 0;
  for (const auto& arg : TestFixture::args()) {
    failures += this->run(kOps, arg, [](std::size_t which, auto& s, auto& a) -> long long {
      const auto mid = s.begin() + static_cast<std::ptrdiff_t>(s.size() / 2);
      switch (which) {
        case 0:
          s.replace(0, 1, a);
          break;
        case 1:
          s.replace(s.size() / 2, 2, a.data(), a.size());
          break;
        case 2:
          s.replace(0, npos, view(a));
          break;
        case 3:
          s.replace(s.begin(), mid, a.begin(), a.end());
          break;
        case 4:
          s.replace(s.begin(), s.end(), input_iter<C>(a.data()),
                    input_iter<C>(a.data() + a.size()));
          break;
        case 5:
          s.replace(0, 1, TestFixture::kInline + 2, C('r'));
          break;
        case 6:
          s.replace(s.begin(), s.begin(), {C('x'), C('y')});
          break;
        case 7:
          s.replace(0, s.empty() ? 0 : 1, s);
          break;
        case 8:
          s.replace(s.size() / 2, 1, s.data(), s.size());
          break;
        case 9:
          s.replace(s.end(), s.end(), s.begin(), s.end());
          break;
      }
      return 0;
    });
  }
  EXPECT_GT(failures, 0);
}

TYPED_TEST(StringExceptions, AssignIsStrong) {
  using C = typename TestFixture::char_type;
  using view = std::basic_string_view<C>;
  static constexpr const char* kOps[] = {
      "s = a",                      // 0
      "assign(a)",                  // 1
      "assign(a, 1, npos)",         // 2
      "s = p",                      // 3
      "s = view",                   // 4
      "assign(p, n)",               // 5
      "assign(first, last)",        // 6
      "assign(input first, last)",  // 7
      "assign(n, c)",               // 8
      "s = {...}",                  // 9
      "s = c",                      // 10
      "assign(s, 1, npos)",         // 11
  };
  long failures = 0;
  for (const auto& arg : TestFixture::args()) {
    failures += this->run(kOps, arg, [](std::size_t which, auto& s, auto& a) -> long long {
      switch (which) {
        case 0:
          s = a;
          break;
        case 1:
          s.assign(a);
          break;
        case 2:
          s.assign(a, a.empty() ? 0 : 1, npos);
          break;
        case 3:
          s = a.c_str();
          break;
        case 4:
          s = view(a);
          break;
        case 5:
          s.assign(a.data(), a.size());
          break;
        case 6:
          s.assign(a.begin(), a.end());
          break;
        case 7:
          s.assign(input_iter<C>(a.data()), input_iter<C>(a.data() + a.size()));
          break;
        case 8:
          s.assign(2 * TestFixture::kInline, C('a'));
          break;
        case 9:
          s = {C('a'), C('b')};
          break;
        case 10:
          s = C('c');
          break;
        case 11:
          s.assign(s, s.empty() ? 0 : 1, npos);
          break;
      }
      return 0;
    });
  }
  EXPECT_GT(failures, 0);
}

TYPED_TEST(StringExceptions, ResizeReserveAndResizeAndOverwriteAreStrong) {
  using C = typename TestFixture::char_type;
  static constexpr const char* kOps[] = {
      "resize(size + K + 3)",                // 0
      "resize(size + 1, c)",                 // 1
      "resize(size / 2)",                    // 2
      "reserve(capacity + 1)",               // 3
      "reserve(2 * size + K)",               // 4
      "resize_and_overwrite(size + K + 3)",  // 5
  };
  const long failures = this->run(kOps, {}, [](std::size_t which, auto& s, auto&) -> long long {
    constexpr std::size_t K = TestFixture::kInline;
    const std::size_t old = s.size();
    switch (which) {
      case 0:
        s.resize(old + K + 3);
        break;
      case 1:
        s.resize(old + 1, C('z'));
        break;
      case 2:
        s.resize(old / 2);
        break;
      // The capacity differs from std's: only the text, and that it grew, are compared.
      case 3: {
        const std::size_t c = s.capacity();
        s.reserve(c + 1);
        return s.capacity() > c ? 0 : 1;
      }
      case 4:
        s.reserve(2 * old + K);
        return s.capacity() >= 2 * old + K ? 0 : 1;
      case 5:
        // (std::basic_string has resize_and_overwrite only from C++23: it resizes instead.)
        if constexpr (std::is_same_v<std::decay_t<decltype(s)>, typename TestFixture::ref_type>) {
          s.resize(old + K + 2, C('w'));
        } else {
          s.resize_and_overwrite(old + K + 3, [old](C* p, std::size_t n) {
            for (std::size_t i = old; i < n; ++i) p[i] = C('w');
            return n - 1;
          });
        }
        break;
    }
    return 0;
  });
  EXPECT_GT(failures, 0);
}

// shrink_to_fit is noexcept: a failed allocation leaves the string as it was (documented).
TYPED_TEST(StringExceptions, ShrinkToFitNeverThrowsAndKeepsTheText) {
  using S = typename TestFixture::str_type;
  for (std::size_t len : TestFixture::lengths()) {
    for (auto l :
         {TestFixture::layout::grown, TestFixture::layout::exact, TestFixture::layout::spare}) {
      SCOPED_TRACE(::testing::Message() << "length " << len << " (" << TestFixture::name(l) << ")");
      S s = TestFixture::make(len, l);
      const auto before = take(s);
      arm(0);
      s.shrink_to_fit();
      disarm();
      EXPECT_TRUE(holds(s, before.value));
      if (len <= TestFixture::kInline) {
        EXPECT_EQ(s.capacity(), TestFixture::kInline) << "back inline: needs no allocation";
      } else {
        EXPECT_TRUE(unchanged(s, before)) << "the failed allocation changed something";
      }
      s.shrink_to_fit();
      EXPECT_TRUE(holds(s, before.value));
      EXPECT_EQ(s.capacity(), std::max(len, TestFixture::kInline));
    }
  }
}

TYPED_TEST(StringExceptions, OperatorPlusLeavesItsOperandsUnchanged) {
  using C = typename TestFixture::char_type;
  static constexpr const char* kOps[] = {
      "s + a",             // 0
      "a + s",             // 1
      "s + p",             // 2
      "p + s",             // 3
      "s + c",             // 4
      "c + s",             // 5
      "std::move(s) + a",  // 6
      "a + std::move(s)",  // 7
      "std::move(s) + p",  // 8
      "std::move(s) + c",  // 9
      "c + std::move(s)",  // 10
  };
  long failures = 0;
  for (const auto& arg : TestFixture::args()) {
    failures += this->run(kOps, arg, [](std::size_t which, auto& s, auto& a) -> long long {
      const C c('c');
      // The rvalue overloads append to (or insert into) the rvalue: strong on it too, so the
      // result moves back into s (equal allocators: no allocation).
      switch (which) {
        case 0:
          return static_cast<long long>((s + a).size());
        case 1:
          return static_cast<long long>((a + s).size());
        case 2:
          return static_cast<long long>((s + a.c_str()).size());
        case 3:
          return static_cast<long long>((a.c_str() + s).size());
        case 4:
          return static_cast<long long>((s + c).size());
        case 5:
          return static_cast<long long>((c + s).size());
        case 6:
          s = std::move(s) + a;
          break;
        case 7:
          s = a + std::move(s);
          break;
        case 8:
          s = std::move(s) + a.c_str();
          break;
        case 9:
          s = std::move(s) + c;
          break;
        case 10:
          s = c + std::move(s);
          break;
      }
      return 0;
    });
  }
  EXPECT_GT(failures, 0);
}

// Construction: a failure leaks nothing and leaves the source untouched.
TYPED_TEST(StringExceptions, ConstructorsLeakNothingAndLeaveTheSourceUnchanged) {
  using S = typename TestFixture::str_type;
  using C = typename TestFixture::char_type;
  using A = typename TestFixture::alloc_type;
  using view = std::basic_string_view<C>;
  static constexpr const char* kOps[] = {
      "S(s)",                   // 0
      "S(s, A(3))",             // 1
      "S(std::move(s), A(3))",  // 2
      "S(s, 1, npos)",          // 3
      "substr(1)",              // 4
      "S(p, n)",                // 5
      "S(p)",                   // 6
      "S(n, c)",                // 7
      "S(first, last)",         // 8
      "S(input first, last)",   // 9
      "S(view)",                // 10
      "S(std::basic_string)",   // 11
  };
  const long failures = this->run(kOps, {}, [](std::size_t which, auto& s, auto&) -> long long {
    const std::size_t pos = s.empty() ? 0 : 1;
    switch (which) {
      case 0:
        return static_cast<long long>(S(s).size());
      case 1:
        return static_cast<long long>(S(s, A(3)).size());
      case 2: {
        const S t(std::move(s), A(3));  // unequal: copies, the source stays
        return static_cast<long long>(t.size());
      }
      case 3:
        return static_cast<long long>(S(s, pos, npos).size());
      case 4:
        return static_cast<long long>(s.substr(pos).size());
      case 5:
        return static_cast<long long>(S(s.data(), s.size(), A(3)).size());
      case 6:
        return static_cast<long long>(S(s.c_str(), A(3)).size());
      case 7:
        return static_cast<long long>(S(s.size(), C('c'), A(3)).size());
      case 8:
        return static_cast<long long>(S(s.begin(), s.end(), A(3)).size());
      case 9:
        return static_cast<long long>(
            S(input_iter<C>(s.data()), input_iter<C>(s.data() + s.size()), A(3)).size());
      case 10:
        return static_cast<long long>(S(view(s), A(3)).size());
      case 11: {
        const std::basic_string<C> str(s.data(), s.size());
        return static_cast<long long>(S(str, A(3)).size());
      }
    }
    return 0;
  });
  EXPECT_GT(failures, 0);
}

// Moves between equal allocators and swaps never allocate, so they cannot fail.
TYPED_TEST(StringExceptions, MovesAndSwapsDoNotAllocate) {
  using S = typename TestFixture::str_type;
  static_assert(noexcept(std::declval<S&>().swap(std::declval<S&>())));
  static_assert(std::is_nothrow_move_constructible_v<S>);
  for (std::size_t n : TestFixture::lengths()) {
    for (std::size_t m : TestFixture::lengths()) {
      S a = TestFixture::make(n, TestFixture::layout::grown);
      S b = TestFixture::make(m, TestFixture::layout::spare);
      const auto ta = take(a), tb = take(b);
      const long allocations = control().allocations;
      arm(0);
      a.swap(b);
      swap(a, b);
      b.swap(a);
      S c(std::move(a));
      S d(std::move(c), typename TestFixture::alloc_type(1));  // equal: takes the buffer
      b = std::move(d);                                        // equal allocators: no allocation
      disarm();
      EXPECT_EQ(control().allocations, allocations) << n << ", " << m;
      EXPECT_TRUE(holds(b, tb.value));
    }
  }
}

// ---- max_size and positions ---------------------------------------------------------------------

TYPED_TEST(StringExceptions, PastMaxSizeThrowsLengthErrorAndChangesNothing) {
  using S = typename TestFixture::str_type;
  using C = typename TestFixture::char_type;
  for (std::size_t len : {std::size_t{1}, TestFixture::kInline, 2 * TestFixture::kInline + 3}) {
    SCOPED_TRACE(::testing::Message() << "length " << len);
    S s = TestFixture::make(len, TestFixture::layout::grown);
    const std::size_t ms = s.max_size();
    EXPECT_LT(ms, npos);
    const auto before = take(s);
    const long allocations = control().allocations;
    EXPECT_THROW(s.reserve(ms + 1), std::length_error);
    EXPECT_THROW(s.reserve(npos), std::length_error);
    EXPECT_THROW(s.resize(ms + 1), std::length_error);
    EXPECT_THROW(s.resize(npos, C('x')), std::length_error);
    EXPECT_THROW(s.append(ms - s.size() + 1, C('x')), std::length_error);
    EXPECT_THROW(s.append(npos, C('x')), std::length_error);
    EXPECT_THROW(s.insert(0, ms, C('x')), std::length_error);
    EXPECT_THROW(s.insert(s.begin(), ms, C('x')), std::length_error);
    EXPECT_THROW(s.replace(0, 0, ms, C('x')), std::length_error);
    EXPECT_THROW(s.assign(ms + 1, C('x')), std::length_error);
    EXPECT_THROW(s.resize_and_overwrite(ms + 1, [](C*, std::size_t n) { return n; }),
                 std::length_error);
    EXPECT_THROW(S(ms + 1, C('x'), s.get_allocator()), std::length_error);
    // Positions are checked first.
    EXPECT_THROW(s.insert(s.size() + 1, ms, C('x')), std::out_of_range);
    EXPECT_THROW(s.replace(s.size() + 1, 0, ms, C('x')), std::out_of_range);
    EXPECT_THROW(s.insert(s.size() + 1, s), std::out_of_range);
    EXPECT_THROW(s.erase(s.size() + 1), std::out_of_range);
    EXPECT_THROW(S(s, s.size() + 1), std::out_of_range);
    EXPECT_EQ(control().allocations, allocations) << "a check came after an allocation";
    EXPECT_TRUE(unchanged(s, before));
  }
}

// ---- allocator propagation -------------------------------------------------------------------

template <class Policy, std::size_t N = 24>
using prop_string = lowalloc::small_string<N, test_allocator<char, Policy>>;

class StringAllocators : public ::testing::Test {
 protected:
  void SetUp() override {
    disarm();
    control() = allocation_control{};
    blocks() = {};
  }
  void TearDown() override {
    disarm();
    EXPECT_EQ(control().live_blocks, 0) << "blocks leaked";
    EXPECT_EQ(control().bad_deallocations, 0) << "blocks freed with the wrong size or allocator";
  }
};

const std::string kShort = "short";
const std::string kLong = "a text well beyond the twenty-three characters inline";

template <class Policy>
void check_copy_assignment() {
  using S = prop_string<Policy>;
  for (const std::string* source : {&kShort, &kLong}) {
    for (const std::string* target : {&kShort, &kLong}) {
      SCOPED_TRACE(::testing::Message() << "from " << source->size() << " into " << target->size());
      const S b(source->c_str(), test_allocator<char, Policy>(2));
      S a(target->c_str(), test_allocator<char, Policy>(1));
      a = b;
      EXPECT_EQ(std::string_view(a), *source);
      EXPECT_EQ(a.get_allocator().id(), Policy::pocca ? 2 : 1);
      EXPECT_EQ(b.get_allocator().id(), 2);
      a.append(kLong);  // the buffer belongs to the allocator a now has
    }
  }
}

template <class Policy>
void check_move_assignment() {
  using S = prop_string<Policy>;
  for (const std::string* source : {&kShort, &kLong}) {
    for (const std::string* target : {&kShort, &kLong}) {
      SCOPED_TRACE(::testing::Message() << "from " << source->size() << " into " << target->size());
      S b(source->c_str(), test_allocator<char, Policy>(2));
      S a(target->c_str(), test_allocator<char, Policy>(1));
      const char* buffer = b.data();
      const bool heap = b.capacity() > 23;
      const long allocations = control().allocations;
      a = std::move(b);
      EXPECT_EQ(std::string_view(a), *source);
      EXPECT_EQ(a.get_allocator().id(), Policy::pocma ? 2 : 1);
      if (Policy::pocma) {
        EXPECT_EQ(control().allocations, allocations) << "a propagating move never allocates";
        if (heap) {
          EXPECT_EQ(a.data(), buffer) << "the buffer is handed over";
        }
      } else if (heap) {
        // Unequal and not propagating: the text is copied into a's own allocator's memory.
        EXPECT_NE(a.data(), buffer);
      }
      b = std::string_view("reusable after the move");
      a.append(kLong);
      b.append(kLong);
    }
  }
  // Equal allocators: the buffer is handed over whatever the trait says.
  S b(kLong.c_str(), test_allocator<char, Policy>(1));
  S a(kShort.c_str(), test_allocator<char, Policy>(1));
  const char* buffer = b.data();
  const long allocations = control().allocations;
  a = std::move(b);
  EXPECT_EQ(control().allocations, allocations);
  EXPECT_EQ(a.data(), buffer);
}

template <class Policy>
void check_swap() {
  using S = prop_string<Policy>;
  for (const std::string* x : {&kShort, &kLong}) {
    for (const std::string* y : {&kShort, &kLong}) {
      // Without propagation, swapping unequal allocators is undefined (as for std): equal ones.
      const int id_b = Policy::pocs ? 2 : 1;
      S a(x->c_str(), test_allocator<char, Policy>(1));
      S b(y->c_str(), test_allocator<char, Policy>(id_b));
      const long allocations = control().allocations;
      a.swap(b);
      EXPECT_EQ(control().allocations, allocations);
      EXPECT_EQ(std::string_view(a), *y);
      EXPECT_EQ(std::string_view(b), *x);
      EXPECT_EQ(a.get_allocator().id(), id_b);
      EXPECT_EQ(b.get_allocator().id(), 1);
      a.append(kLong);
      b.append(kLong);
    }
  }
}

TEST_F(StringAllocators, CopyAssignmentPropagatesOnlyWithTheTrait) {
  check_copy_assignment<policy<false, false, false>>();
  check_copy_assignment<policy<true, false, false>>();
}

TEST_F(StringAllocators, MoveAssignmentPropagatesOnlyWithTheTrait) {
  check_move_assignment<policy<false, false, false>>();
  check_move_assignment<policy<false, true, false>>();
}

TEST_F(StringAllocators, SwapPropagatesOnlyWithTheTrait) {
  check_swap<policy<false, false, false>>();
  check_swap<policy<false, false, true>>();
}

TEST_F(StringAllocators, CopyConstructionSelectsTheAllocator) {
  using plain = prop_string<policy<false, false, false>>;
  using selecting = prop_string<policy<false, false, false, true>>;
  const plain a(kLong.c_str(), test_allocator<char, policy<false, false, false>>(5));
  EXPECT_EQ(plain(a).get_allocator().id(), 5);
  const selecting b(kLong.c_str(), test_allocator<char, policy<false, false, false, true>>(5));
  EXPECT_EQ(selecting(b).get_allocator().id(), 105);  // select_on_container_copy_construction
  EXPECT_EQ(
      selecting(b, test_allocator<char, policy<false, false, false, true>>(7)).get_allocator().id(),
      7);
  // The move constructor takes the allocator along.
  selecting c(b);
  selecting d(std::move(c));
  EXPECT_EQ(d.get_allocator().id(), 105);
  // Strings made from a string: as std, from select_on_container_copy_construction.
  const std::basic_string<char, std::char_traits<char>,
                          test_allocator<char, policy<false, false, false, true>>>
      std_b(kLong.c_str(), test_allocator<char, policy<false, false, false, true>>(5));
  EXPECT_EQ((b + b).get_allocator().id(), (std_b + std_b).get_allocator().id());
  EXPECT_EQ((b + "x").get_allocator().id(), (std_b + "x").get_allocator().id());
  EXPECT_EQ(("x" + b).get_allocator().id(), ("x" + std_b).get_allocator().id());
  EXPECT_EQ(b.substr(1).get_allocator().id(), std_b.substr(1).get_allocator().id());
}

// Copy assignment with a propagating allocator that is not equal must free the old buffer with
// the old allocator and allocate with the new one; if that allocation fails, libstdc++ leaves the
// target unchanged ("If this allocation throws there are no effects"), and so must we.
TEST_F(StringAllocators, PropagatingCopyAssignmentIsStrong) {
  using P = policy<true, false, false>;
  using S = prop_string<P>;
  for (const std::string* source : {&kShort, &kLong}) {
    for (const std::string* target : {&kShort, &kLong}) {
      SCOPED_TRACE(::testing::Message() << "from " << source->size() << " into " << target->size());
      for (long k = 0;; ++k) {
        ASSERT_LT(k, 10);
        const S b(source->c_str(), test_allocator<char, P>(2));
        S a(target->c_str(), test_allocator<char, P>(1));
        const auto before = take(a);
        arm(k);
        try {
          a = b;
          disarm();
          EXPECT_EQ(std::string_view(a), *source);
          EXPECT_EQ(a.get_allocator().id(), 2);
          break;
        } catch (const std::bad_alloc&) {
          disarm();
          EXPECT_TRUE(unchanged(a, before)) << "failure at allocation " << k;
        }
      }
    }
  }
}

// Move assignment between unequal, non-propagating allocators copies, and may fail: strong too.
TEST_F(StringAllocators, NonPropagatingMoveAssignmentIsStrong) {
  using P = policy<false, false, false>;
  using S = prop_string<P>;
  static_assert(!std::is_nothrow_move_assignable_v<S>);
  for (const std::string* source : {&kShort, &kLong}) {
    for (const std::string* target : {&kShort, &kLong}) {
      SCOPED_TRACE(::testing::Message() << "from " << source->size() << " into " << target->size());
      for (long k = 0;; ++k) {
        ASSERT_LT(k, 10);
        S b(source->c_str(), test_allocator<char, P>(2));
        S a(target->c_str(), test_allocator<char, P>(1));
        const auto before = take(a);
        const auto source_before = take(b);
        arm(k);
        try {
          a = std::move(b);
          disarm();
          EXPECT_EQ(std::string_view(a), *source);
          break;
        } catch (const std::bad_alloc&) {
          disarm();
          EXPECT_TRUE(unchanged(a, before)) << "failure at allocation " << k;
          EXPECT_TRUE(unchanged(b, source_before)) << "failure at allocation " << k;
        }
      }
    }
  }
}

}  // namespace
