// Random operations applied side by side to lowalloc::small_vector and std::vector, compared after
// every step. Shared by tests/small_vector_differential_test.cpp (choices from a seeded RNG) and
// tests/fuzz/small_vector_fuzz.cpp (choices from the fuzzer's bytes). Not part of lowalloc's API.
//
//   lowalloc_test::rng_source src(42);
//   lowalloc_test::vector_ops<std::string, 8> ops;
//   for (int i = 0; i < 1000; ++i)
//     if (!ops.step(src)) report(ops.failure());
//
// The harness owns three pairs: `a` (small_vector<T, N>), `b` (another small_vector<T, N>) and
// `c` (small_vector<T, 3>, a different N, reached through small_vector_base), each with its
// std::vector twin. A step applies one operation to one pair (or to two, for swap, assignment and
// comparison) and then checks every pair: size, contents, capacity, front/back, contiguity, at(),
// and for `counted` elements that the live objects are exactly the elements of the six
// containers.
//
// Where small_vector allows aliasing that std::vector does not (insert or assign of a range of the
// vector itself), the std side works on a copy of the range. The std side never aliases at all:
// it receives copies, so only small_vector's handling of aliasing is under test.
#ifndef LOWALLOC_TESTS_SUPPORT_VECTOR_OPS_HPP
#define LOWALLOC_TESTS_SUPPORT_VECTOR_OPS_HPP

#include <lowalloc/small_vector.hpp>

#include "element_types.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace lowalloc_test {

// ---- sources of choices ------------------------------------------------------------------------

// Choices from a 64-bit splitmix generator: reproducible from the seed.
class rng_source {
 public:
  explicit rng_source(std::uint64_t seed) : state_(seed) {}
  // A value in [0, bound); 0 when bound is 0.
  std::size_t below(std::size_t bound) {
    return bound == 0 ? 0 : static_cast<std::size_t>(next() % bound);
  }
  bool exhausted() const { return false; }

 private:
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
  }
  std::uint64_t state_;
};

// Choices decoded from a byte string (a fuzzer input): one byte per choice below 256, two above.
// Past the end every choice is 0.
class byte_source {
 public:
  byte_source(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}
  std::size_t below(std::size_t bound) {
    if (bound <= 1) return 0;
    std::size_t v = take();
    if (bound > 256) v = (v << 8) | take();
    return v % bound;
  }
  bool exhausted() const { return pos_ >= size_; }

 private:
  std::size_t take() { return pos_ < size_ ? data_[pos_++] : 0; }
  const std::uint8_t* data_;
  std::size_t size_;
  std::size_t pos_ = 0;
};

// ---- element types -----------------------------------------------------------------------------

// make(k): the element for key k (0..31); key(e): its key back; arg(k): a constructor argument
// that is not a T, for emplace.
template <class T>
struct element_traits;

template <>
struct element_traits<int> {
  static int make(int k) { return k; }
  static int key(int v) { return v; }
  static int arg(int k) { return k; }
  static constexpr bool counts_lifetimes = false;
};

template <>
struct element_traits<std::string> {
  // Every third key is long enough to leave the small-string buffer and allocate.
  static std::string make(int k) {
    std::string s = std::to_string(k);
    if (k % 3 == 0) s.append(24, static_cast<char>('a' + k % 26));
    return s;
  }
  static int key(const std::string& s) {
    int k = 0;
    bool any = false;
    for (char ch : s) {
      if (ch < '0' || ch > '9') break;
      k = k * 10 + (ch - '0');
      any = true;
    }
    return any ? k : -1;
  }
  static std::string arg(int k) { return make(k); }
  static constexpr bool counts_lifetimes = false;
};

template <>
struct element_traits<counted> {
  static counted make(int k) { return counted(k); }
  static int key(const counted& c) { return c.value(); }
  static int arg(int k) { return k; }  // counted(int): a value construction
  static constexpr bool counts_lifetimes = true;
};

// An input (single-pass) iterator over an array, to reach the input-iterator code paths.
template <class T>
class input_iter {
 public:
  using iterator_category = std::input_iterator_tag;
  using value_type = T;
  using difference_type = std::ptrdiff_t;
  using pointer = const T*;
  using reference = const T&;

  explicit input_iter(const T* p) : p_(p) {}
  reference operator*() const { return *p_; }
  pointer operator->() const { return p_; }
  input_iter& operator++() {
    ++p_;
    return *this;
  }
  input_iter operator++(int) {
    input_iter old = *this;
    ++p_;
    return old;
  }
  friend bool operator==(input_iter x, input_iter y) { return x.p_ == y.p_; }
  friend bool operator!=(input_iter x, input_iter y) { return x.p_ != y.p_; }

 private:
  const T* p_;
};

// A minimal range (begin/end) for append_range / insert_range / assign_range.
template <class It>
struct iter_range {
  It first;
  It last;
  It begin() const { return first; }
  It end() const { return last; }
};
template <class It>
iter_range<It> make_range(It first, It last) {
  return iter_range<It>{first, last};
}

// ---- the harness -------------------------------------------------------------------------------

// Stops the current check function with a failure report.
#define LOWALLOC_VOPS_CHECK(cond)                    \
  do {                                               \
    if (!(cond)) return this->fail(#cond, __LINE__); \
  } while (false)

template <class T, std::size_t N>
class vector_ops {
 public:
  using traits = element_traits<T>;
  using base = lowalloc::small_vector_base<T>;
  using vec = lowalloc::small_vector<T, N>;
  static constexpr std::size_t other_n = 3;
  using other_vec = lowalloc::small_vector<T, other_n>;
  using ref = std::vector<T>;

  vector_ops() : live_baseline_(counts().live()) {}

  /// Applies one random operation and checks every pair. False on the first mismatch; failure()
  /// then says where. Do not call step() again after a failure.
  template <class Source>
  bool step(Source& src) {
    ++step_;
    // A size regime: the vectors are kept near `limit_` elements, which changes now and then so
    // that every N is crossed often, from both sides.
    if (src.below(256) == 0) {
      static constexpr std::size_t limits[] = {1, 3, 6, 12, 40, 100};
      limit_ = limits[src.below(std::size(limits))];
    }
    bool ok = true;
    const std::size_t target = src.below(16);
    if (target < 10) {
      ok = single_op(a_, ra_, src);
    } else if (target < 12) {
      ok = single_op(b_, rb_, src);
    } else if (target < 13) {
      ok = single_op(c_, rc_, src);
    } else {
      switch (src.below(4)) {
        case 0:
          ok = pair_op(a_, ra_, b_, rb_, src);
          break;
        case 1:
          ok = pair_op(b_, rb_, a_, ra_, src);
          break;
        case 2:
          ok = pair_op(a_, ra_, c_, rc_, src);
          break;
        default:
          ok = pair_op(c_, rc_, a_, ra_, src);
          break;
      }
    }
    return ok && check_all();
  }

  const std::string& failure() const { return failure_; }
  std::size_t steps() const { return step_; }

 private:
  // ---- checks --------------------------------------------------------------------------------

  bool fail(const char* what, int line) {
    if (failure_.empty()) {
      failure_ = "step " + std::to_string(step_) + ", operation " + op_ +
                 ": check failed (vector_ops.hpp:" + std::to_string(line) + "): " + what +
                 " [sizes: a " + std::to_string(a_.size()) + "/" + std::to_string(ra_.size()) +
                 ", b " + std::to_string(b_.size()) + "/" + std::to_string(rb_.size()) + ", c " +
                 std::to_string(c_.size()) + "/" + std::to_string(rc_.size()) + "]";
    }
    return false;
  }

  template <class C>
  static bool at_throws(const C& c, std::size_t pos) {
#if LOWALLOC_HAS_EXCEPTIONS
    try {
      (void)c.at(pos);
    } catch (const std::out_of_range&) {
      return true;
    }
#endif
    return false;
  }

  // Everything observable about `v` agrees with `r`.
  template <class V>
  bool same(const V& v, const ref& r) {
    const std::size_t n = r.size();
    LOWALLOC_VOPS_CHECK(v.size() == n);
    LOWALLOC_VOPS_CHECK(v.empty() == r.empty());
    LOWALLOC_VOPS_CHECK(v.capacity() >= n);
    LOWALLOC_VOPS_CHECK(v.max_size() >= v.capacity());
    LOWALLOC_VOPS_CHECK(v.inline_capacity() == V::inline_size);
    LOWALLOC_VOPS_CHECK(!v.is_inline() || v.capacity() == V::inline_size);
    LOWALLOC_VOPS_CHECK(v.data() != nullptr);
    LOWALLOC_VOPS_CHECK(v.begin() == v.data() && v.cbegin() == v.data());
    LOWALLOC_VOPS_CHECK(v.end() == v.data() + n && v.cend() == v.end());
    LOWALLOC_VOPS_CHECK(std::equal(v.begin(), v.end(), r.begin(), r.end()));
    if (n != 0) {
      LOWALLOC_VOPS_CHECK(&v.front() == v.data() && v.front() == r.front());
      LOWALLOC_VOPS_CHECK(&v.back() == v.data() + (n - 1) && v.back() == r.back());
    }
    // The costlier checks (exceptions, reverse walks) on every 8th step.
    if (step_ % 8 == 0) {
      LOWALLOC_VOPS_CHECK(std::equal(v.rbegin(), v.rend(), r.rbegin(), r.rend()));
      LOWALLOC_VOPS_CHECK(std::equal(v.crbegin(), v.crend(), r.crbegin(), r.crend()));
      for (std::size_t i = 0; i < n; ++i) {
        LOWALLOC_VOPS_CHECK(&v.at(i) == v.data() + i && v.at(i) == r.at(i) && &v[i] == &v.at(i));
      }
#if LOWALLOC_HAS_EXCEPTIONS
      LOWALLOC_VOPS_CHECK(at_throws(v, n) && at_throws(r, n));
      LOWALLOC_VOPS_CHECK(at_throws(v, n + 7) && at_throws(r, n + 7));
#endif
    }
    return true;
  }

  bool check_all() {
    if (!same(a_, ra_) || !same(b_, rb_) || !same(c_, rc_)) return false;
    if constexpr (traits::counts_lifetimes) {
      const std::size_t total =
          a_.size() + ra_.size() + b_.size() + rb_.size() + c_.size() + rc_.size();
      LOWALLOC_VOPS_CHECK(counts().live() - live_baseline_ == static_cast<long>(total));
    }
    return true;
  }

  // ---- choices -------------------------------------------------------------------------------

  template <class Source>
  static int key(Source& src) {
    return static_cast<int>(src.below(32));
  }
  template <class Source>
  static T value(Source& src) {
    return traits::make(key(src));
  }
  // An insertion position in [0, n], often one of the ends.
  template <class Source>
  static std::size_t position(Source& src, std::size_t n) {
    switch (src.below(4)) {
      case 0:
        return 0;
      case 1:
        return n;
      default:
        return src.below(n + 1);
    }
  }
  // A sub-range [first, last) of [0, n] at most `max_len` long.
  template <class Source>
  static std::pair<std::size_t, std::size_t> subrange(Source& src, std::size_t n,
                                                      std::size_t max_len) {
    const std::size_t first = src.below(n + 1);
    const std::size_t last = first + src.below(std::min(max_len, n - first) + 1);
    return {first, last};
  }
  template <class Source>
  static ref external(Source& src) {
    ref out;
    const std::size_t len = src.below(9);
    for (std::size_t i = 0; i < len; ++i) out.push_back(value(src));
    return out;
  }
  template <class C>
  static auto at_index(C& c, std::size_t i) {
    return c.begin() + static_cast<std::ptrdiff_t>(i);
  }
  template <class C, class It>
  static std::ptrdiff_t index(C& c, It it) {
    return it - c.begin();
  }

  // ---- operations on one vector --------------------------------------------------------------

  enum single_kind : unsigned {
    push_back_copy,
    push_back_move,
    push_back_alias,
    emplace_back_value,
    emplace_back_alias,
    emplace_value,
    emplace_alias,
    insert_copy,
    insert_move,
    insert_alias,
    insert_fill,
    insert_fill_alias,
    insert_range,
    insert_input_range,
    insert_self_range,
    insert_il,
    erase_one,
    erase_range,
    pop_back,
    resize_value,
    resize_fill,
    resize_fill_alias,
    assign_fill,
    assign_fill_alias,
    assign_range,
    assign_input_range,
    assign_self_range,
    assign_il,
    assign_operator_il,
    clear,
    reserve,
    shrink_to_fit,
    erase_value,
    erase_if,
    append_range_ext,
    append_range_self,
    append_self,
    insert_range_ext,
    insert_range_self,
    assign_range_ext,
    assign_range_self,
    write_at,
    write_front_back,
    construct_count,
    construct_fill,
    construct_range,
    construct_input_range,
    construct_il,
    copy_construct,
    move_round_trip,
    self_copy_assign,
    self_move_assign,
    self_swap,
    single_kind_count
  };

  static bool needs_element(unsigned op) {
    switch (op) {
      case push_back_alias:
      case emplace_back_alias:
      case emplace_alias:
      case insert_alias:
      case insert_fill_alias:
      case erase_one:
      case pop_back:
      case resize_fill_alias:
      case assign_fill_alias:
      case write_at:
      case write_front_back:
        return true;
      default:
        return false;
    }
  }

  template <class V, class Source>
  bool single_op(V& v, ref& r, Source& src) {
    const std::size_t n = v.size();
    unsigned op;
    if (n >= limit_) {
      static constexpr unsigned shrinking[] = {erase_one,    erase_range, erase_range, pop_back,
                                               resize_value, resize_fill, erase_if,    clear};
      op = shrinking[src.below(std::size(shrinking))];
    } else {
      op = static_cast<unsigned>(src.below(single_kind_count));
    }
    if (n == 0 && needs_element(op)) op = push_back_copy;
    const std::size_t i = n == 0 ? 0 : src.below(n);  // an element, for the aliasing forms

    switch (op) {
      case push_back_copy: {
        op_ = "push_back(const T&)";
        const T x = value(src);
        v.push_back(x);
        r.push_back(x);
        break;
      }
      case push_back_move: {
        op_ = "push_back(T&&)";
        T x = value(src);
        T y = x;
        v.push_back(std::move(x));
        r.push_back(std::move(y));
        break;
      }
      case push_back_alias: {
        op_ = "push_back(v[i])";
        const T x = r[i];
        v.push_back(v[i]);
        r.push_back(x);
        break;
      }
      case emplace_back_value: {
        op_ = "emplace_back(args)";
        const int k = key(src);
        T& e = v.emplace_back(traits::arg(k));
        LOWALLOC_VOPS_CHECK(&e == &v.back());
        r.emplace_back(traits::arg(k));
        break;
      }
      case emplace_back_alias: {
        op_ = "emplace_back(v[i])";
        const T x = r[i];
        T& e = v.emplace_back(v[i]);
        LOWALLOC_VOPS_CHECK(&e == &v.back());
        r.emplace_back(x);
        break;
      }
      case emplace_value: {
        op_ = "emplace(pos, args)";
        const std::size_t pos = position(src, n);
        const int k = key(src);
        auto it = v.emplace(at_index(v, pos), traits::arg(k));
        auto rit = r.emplace(at_index(r, pos), traits::arg(k));
        LOWALLOC_VOPS_CHECK(index(v, it) == index(r, rit));
        break;
      }
      case emplace_alias: {
        op_ = "emplace(pos, v[i])";
        const std::size_t pos = position(src, n);
        const T x = r[i];
        auto it = v.emplace(at_index(v, pos), v[i]);
        auto rit = r.emplace(at_index(r, pos), x);
        LOWALLOC_VOPS_CHECK(index(v, it) == index(r, rit));
        break;
      }
      case insert_copy: {
        op_ = "insert(pos, const T&)";
        const std::size_t pos = position(src, n);
        const T x = value(src);
        auto it = v.insert(at_index(v, pos), x);
        auto rit = r.insert(at_index(r, pos), x);
        LOWALLOC_VOPS_CHECK(index(v, it) == index(r, rit));
        break;
      }
      case insert_move: {
        op_ = "insert(pos, T&&)";
        const std::size_t pos = position(src, n);
        T x = value(src);
        T y = x;
        auto it = v.insert(at_index(v, pos), std::move(x));
        auto rit = r.insert(at_index(r, pos), std::move(y));
        LOWALLOC_VOPS_CHECK(index(v, it) == index(r, rit));
        break;
      }
      case insert_alias: {
        op_ = "insert(pos, v[i])";
        const std::size_t pos = position(src, n);
        const T x = r[i];
        auto it = v.insert(at_index(v, pos), v[i]);
        auto rit = r.insert(at_index(r, pos), x);
        LOWALLOC_VOPS_CHECK(index(v, it) == index(r, rit));
        break;
      }
      case insert_fill: {
        op_ = "insert(pos, count, value)";
        const std::size_t pos = position(src, n);
        const std::size_t count = src.below(9);
        const T x = value(src);
        auto it = v.insert(at_index(v, pos), count, x);
        auto rit = r.insert(at_index(r, pos), count, x);
        LOWALLOC_VOPS_CHECK(index(v, it) == index(r, rit));
        break;
      }
      case insert_fill_alias: {
        op_ = "insert(pos, count, v[i])";
        const std::size_t pos = position(src, n);
        const std::size_t count = src.below(9);
        const T x = r[i];
        auto it = v.insert(at_index(v, pos), count, v[i]);
        auto rit = r.insert(at_index(r, pos), count, x);
        LOWALLOC_VOPS_CHECK(index(v, it) == index(r, rit));
        break;
      }
      case insert_range: {
        op_ = "insert(pos, first, last) from another vector";
        const std::size_t pos = position(src, n);
        const ref ext = external(src);
        auto it = v.insert(at_index(v, pos), ext.begin(), ext.end());
        auto rit = r.insert(at_index(r, pos), ext.begin(), ext.end());
        LOWALLOC_VOPS_CHECK(index(v, it) == index(r, rit));
        break;
      }
      case insert_input_range: {
        op_ = "insert(pos, first, last) input iterators";
        const std::size_t pos = position(src, n);
        const ref ext = external(src);
        const T* p = ext.data();
        auto it = v.insert(at_index(v, pos), input_iter<T>(p), input_iter<T>(p + ext.size()));
        auto rit = r.insert(at_index(r, pos), input_iter<T>(p), input_iter<T>(p + ext.size()));
        LOWALLOC_VOPS_CHECK(index(v, it) == index(r, rit));
        break;
      }
      case insert_self_range: {
        op_ = "insert(pos, v.begin() + x, v.begin() + y)";
        const std::size_t pos = position(src, n);
        const auto [first, last] = subrange(src, n, n);
        const ref copy(at_index(r, first), at_index(r, last));
        auto it = v.insert(at_index(v, pos), at_index(v, first), at_index(v, last));
        auto rit = r.insert(at_index(r, pos), copy.begin(), copy.end());
        LOWALLOC_VOPS_CHECK(index(v, it) == index(r, rit));
        break;
      }
      case insert_il: {
        op_ = "insert(pos, {x, y, z})";
        const std::size_t pos = position(src, n);
        const T x = value(src), y = value(src), z = value(src);
        auto it = v.insert(at_index(v, pos), {x, y, z});
        auto rit = r.insert(at_index(r, pos), {x, y, z});
        LOWALLOC_VOPS_CHECK(index(v, it) == index(r, rit));
        break;
      }
      case erase_one: {
        op_ = "erase(pos)";
        const std::size_t pos = src.below(n);
        auto it = v.erase(at_index(v, pos));
        auto rit = r.erase(at_index(r, pos));
        LOWALLOC_VOPS_CHECK(index(v, it) == index(r, rit));
        break;
      }
      case erase_range: {
        op_ = "erase(first, last)";
        const auto [first, last] = subrange(src, n, n);
        auto it = v.erase(at_index(v, first), at_index(v, last));
        auto rit = r.erase(at_index(r, first), at_index(r, last));
        LOWALLOC_VOPS_CHECK(index(v, it) == index(r, rit));
        break;
      }
      case pop_back: {
        op_ = "pop_back()";
        v.pop_back();
        r.pop_back();
        break;
      }
      case resize_value: {
        op_ = "resize(count)";
        const std::size_t count = src.below(limit_ + 4);
        v.resize(count);
        r.resize(count);
        break;
      }
      case resize_fill: {
        op_ = "resize(count, value)";
        const std::size_t count = src.below(limit_ + 4);
        const T x = value(src);
        v.resize(count, x);
        r.resize(count, x);
        break;
      }
      case resize_fill_alias: {
        op_ = "resize(count, v[i])";
        const std::size_t count = src.below(limit_ + 4);
        const T x = r[i];
        v.resize(count, v[i]);
        r.resize(count, x);
        break;
      }
      case assign_fill: {
        op_ = "assign(count, value)";
        const std::size_t count = src.below(limit_ + 4);
        const T x = value(src);
        v.assign(count, x);
        r.assign(count, x);
        break;
      }
      case assign_fill_alias: {
        op_ = "assign(count, v[i])";
        const std::size_t count = src.below(limit_ + 4);
        const T x = r[i];
        v.assign(count, v[i]);
        r.assign(count, x);
        break;
      }
      case assign_range: {
        op_ = "assign(first, last) from another vector";
        const ref ext = external(src);
        v.assign(ext.begin(), ext.end());
        r.assign(ext.begin(), ext.end());
        break;
      }
      case assign_input_range: {
        op_ = "assign(first, last) input iterators";
        const ref ext = external(src);
        const T* p = ext.data();
        v.assign(input_iter<T>(p), input_iter<T>(p + ext.size()));
        r.assign(input_iter<T>(p), input_iter<T>(p + ext.size()));
        break;
      }
      case assign_self_range: {
        op_ = "assign(v.begin() + x, v.begin() + y)";
        const auto [first, last] = subrange(src, n, n);
        const ref copy(at_index(r, first), at_index(r, last));
        v.assign(at_index(v, first), at_index(v, last));
        r.assign(copy.begin(), copy.end());
        break;
      }
      case assign_il: {
        op_ = "assign({x, y})";
        const T x = value(src), y = value(src);
        v.assign({x, y});
        r.assign({x, y});
        break;
      }
      case assign_operator_il: {
        op_ = "operator=({x, y, z})";
        const T x = value(src), y = value(src), z = value(src);
        v = {x, y, z};
        r = {x, y, z};
        break;
      }
      case clear: {
        op_ = "clear()";
        const std::size_t cap = v.capacity();
        v.clear();
        r.clear();
        LOWALLOC_VOPS_CHECK(v.capacity() == cap);
        break;
      }
      case reserve: {
        op_ = "reserve(count)";
        const std::size_t cap = v.capacity();
        const std::size_t count = src.below(2 * limit_ + 8);
        const T* d = v.data();
        v.reserve(count);
        r.reserve(count);
        if (count <= cap) {
          LOWALLOC_VOPS_CHECK(v.capacity() == cap && v.data() == d);
        } else {
          LOWALLOC_VOPS_CHECK(v.capacity() == count && !v.is_inline());
        }
        break;
      }
      case shrink_to_fit: {
        op_ = "shrink_to_fit()";
        v.shrink_to_fit();
        r.shrink_to_fit();
        if (v.size() <= V::inline_size) {
          LOWALLOC_VOPS_CHECK(v.is_inline());
        } else {
          LOWALLOC_VOPS_CHECK(v.capacity() == v.size());
        }
        break;
      }
      case erase_value: {
        op_ = "lowalloc::erase(v, value)";
        const T x = value(src);
        const std::size_t erased = lowalloc::erase(v, x);
#if defined(__cpp_lib_erase_if)
        const std::size_t r_erased = std::erase(r, x);
#else
        const auto rit = std::remove(r.begin(), r.end(), x);
        const auto r_erased = static_cast<std::size_t>(r.end() - rit);
        r.erase(rit, r.end());
#endif
        LOWALLOC_VOPS_CHECK(erased == r_erased);
        break;
      }
      case erase_if: {
        op_ = "lowalloc::erase_if(v, pred)";
        const int k = key(src) % 4;
        const auto pred = [k](const T& e) { return traits::key(e) % 4 == k; };
        const std::size_t erased = lowalloc::erase_if(v, pred);
#if defined(__cpp_lib_erase_if)
        const std::size_t r_erased = std::erase_if(r, pred);
#else
        const auto rit = std::remove_if(r.begin(), r.end(), pred);
        const auto r_erased = static_cast<std::size_t>(r.end() - rit);
        r.erase(rit, r.end());
#endif
        LOWALLOC_VOPS_CHECK(erased == r_erased);
        break;
      }
      case append_range_ext: {
        op_ = "append_range(other vector)";
        const ref ext = external(src);
        v.append_range(ext);
        r.insert(r.end(), ext.begin(), ext.end());
        break;
      }
      case append_range_self: {
        op_ = "append_range(subrange of v)";
        const auto [first, last] = subrange(src, n, n);
        const ref copy(at_index(r, first), at_index(r, last));
        v.append_range(make_range(at_index(v, first), at_index(v, last)));
        r.insert(r.end(), copy.begin(), copy.end());
        break;
      }
      case append_self: {
        op_ = "append(v.begin() + x, v.begin() + y)";
        const auto [first, last] = subrange(src, n, n);
        const ref copy(at_index(r, first), at_index(r, last));
        v.append(at_index(v, first), at_index(v, last));
        r.insert(r.end(), copy.begin(), copy.end());
        break;
      }
      case insert_range_ext: {
        op_ = "insert_range(pos, other vector)";
        const std::size_t pos = position(src, n);
        const ref ext = external(src);
        auto it = v.insert_range(at_index(v, pos), ext);
        auto rit = r.insert(at_index(r, pos), ext.begin(), ext.end());
        LOWALLOC_VOPS_CHECK(index(v, it) == index(r, rit));
        break;
      }
      case insert_range_self: {
        op_ = "insert_range(pos, subrange of v)";
        const std::size_t pos = position(src, n);
        const auto [first, last] = subrange(src, n, n);
        const ref copy(at_index(r, first), at_index(r, last));
        auto it =
            v.insert_range(at_index(v, pos), make_range(at_index(v, first), at_index(v, last)));
        auto rit = r.insert(at_index(r, pos), copy.begin(), copy.end());
        LOWALLOC_VOPS_CHECK(index(v, it) == index(r, rit));
        break;
      }
      case assign_range_ext: {
        op_ = "assign_range(other vector)";
        const ref ext = external(src);
        v.assign_range(ext);
        r.assign(ext.begin(), ext.end());
        break;
      }
      case assign_range_self: {
        op_ = "assign_range(subrange of v)";
        const auto [first, last] = subrange(src, n, n);
        const ref copy(at_index(r, first), at_index(r, last));
        v.assign_range(make_range(at_index(v, first), at_index(v, last)));
        r.assign(copy.begin(), copy.end());
        break;
      }
      case write_at: {
        op_ = "at(i) = value, v[j] = value";
        const T x = value(src);
        v.at(i) = x;
        r.at(i) = x;
        const std::size_t j = src.below(n);
        const T y = value(src);
        v[j] = y;
        r[j] = y;
        break;
      }
      case write_front_back: {
        op_ = "front() = value, back() = value";
        const T x = value(src), y = value(src);
        v.front() = x;
        r.front() = x;
        v.back() = y;
        r.back() = y;
        break;
      }
      case construct_count: {
        op_ = "V(count), then v = std::move(t)";
        const std::size_t count = src.below(limit_ + 4);
        V t(count);
        ref rt(count);
        if (!same(t, rt)) return false;
        v = std::move(t);
        r = std::move(rt);
        LOWALLOC_VOPS_CHECK(t.empty());
        break;
      }
      case construct_fill: {
        op_ = "V(count, value), then v = std::move(t)";
        const std::size_t count = src.below(limit_ + 4);
        const T x = value(src);
        V t(count, x);
        ref rt(count, x);
        if (!same(t, rt)) return false;
        v = std::move(t);
        r = std::move(rt);
        LOWALLOC_VOPS_CHECK(t.empty());
        break;
      }
      case construct_range: {
        op_ = "V(first, last), then v = std::move(t)";
        const ref ext = external(src);
        V t(ext.begin(), ext.end());
        if (!same(t, ext)) return false;
        v = std::move(t);
        r = ext;
        LOWALLOC_VOPS_CHECK(t.empty());
        break;
      }
      case construct_input_range: {
        op_ = "V(input first, input last), then v = std::move(t)";
        const ref ext = external(src);
        const T* p = ext.data();
        V t(input_iter<T>(p), input_iter<T>(p + ext.size()));
        if (!same(t, ext)) return false;
        v = std::move(t);
        r = ext;
        LOWALLOC_VOPS_CHECK(t.empty());
        break;
      }
      case construct_il: {
        op_ = "V{x, y, z}, then v = std::move(t)";
        const T x = value(src), y = value(src), z = value(src);
        V t{x, y, z};
        ref rt{x, y, z};
        if (!same(t, rt)) return false;
        v = std::move(t);
        r = std::move(rt);
        LOWALLOC_VOPS_CHECK(t.empty());
        break;
      }
      case copy_construct: {
        op_ = "V(const V&)";
        const V t(v);
        if (!same(t, r)) return false;
        LOWALLOC_VOPS_CHECK(t == v);
        // Allocates exactly size() elements when they do not fit inline.
        LOWALLOC_VOPS_CHECK(t.size() <= V::inline_size ? t.is_inline() : t.capacity() == t.size());
        break;
      }
      case move_round_trip: {
        op_ = "V t(std::move(v)); v = std::move(t)";
        const bool heap = !v.is_inline();
        const T* d = v.data();
        V t(std::move(v));
        LOWALLOC_VOPS_CHECK(v.empty());  // documented: a moved-from small_vector is empty
        if (!same(t, r)) return false;
        if (heap) LOWALLOC_VOPS_CHECK(t.data() == d);  // the buffer is handed over
        v = std::move(t);
        LOWALLOC_VOPS_CHECK(t.empty());
        if (heap) LOWALLOC_VOPS_CHECK(v.data() == d);
        break;
      }
      case self_copy_assign: {
        op_ = "v = v";
        const V& self = v;
        v = self;
        break;
      }
      case self_move_assign: {
        op_ = "v = std::move(v)";
        V& self = v;
        v = std::move(self);  // documented: a no-op
        break;
      }
      case self_swap: {
        op_ = "v.swap(v)";
        v.swap(v);
        break;
      }
      default:
        break;
    }
    return true;
  }

  // ---- operations on two vectors -------------------------------------------------------------

  template <class X, class Y>
  bool compare(const X& x, const ref& rx, const Y& y, const ref& ry) {
    LOWALLOC_VOPS_CHECK((x == y) == (rx == ry));
    LOWALLOC_VOPS_CHECK((x != y) == (rx != ry));
    LOWALLOC_VOPS_CHECK((x < y) == (rx < ry));
    LOWALLOC_VOPS_CHECK((x <= y) == (rx <= ry));
    LOWALLOC_VOPS_CHECK((x > y) == (rx > ry));
    LOWALLOC_VOPS_CHECK((x >= y) == (rx >= ry));
#if LOWALLOC_HAS_THREE_WAY_COMPARISON
    const auto c = x <=> y;
    const auto rc = rx <=> ry;
    LOWALLOC_VOPS_CHECK((c < 0) == (rc < 0) && (c == 0) == (rc == 0) && (c > 0) == (rc > 0));
#endif
    return true;
  }

  template <class X, class Y, class Source>
  bool pair_op(X& x, ref& rx, Y& y, ref& ry, Source& src) {
    switch (src.below(10)) {
      case 0: {
        op_ = "x.swap(y)";
        const bool both_heap = !x.is_inline() && !y.is_inline();
        const T* dx = x.data();
        const T* dy = y.data();
        x.swap(y);
        rx.swap(ry);
        if (both_heap) LOWALLOC_VOPS_CHECK(x.data() == dy && y.data() == dx);
        break;
      }
      case 1: {
        op_ = "swap(base& x, base& y)";
        base& bx = x;
        base& by = y;
        swap(bx, by);
        rx.swap(ry);
        break;
      }
      case 2: {
        op_ = "using std::swap; swap(x, y)";
        using std::swap;
        swap(x, y);
        swap(rx, ry);
        break;
      }
      case 3: {
        op_ = "x = y";
        x = y;
        rx = ry;
        LOWALLOC_VOPS_CHECK(x == y);
        break;
      }
      case 4: {
        op_ = "base& = const base&";
        base& bx = x;
        const base& by = y;
        bx = by;
        rx = ry;
        break;
      }
      case 5: {
        op_ = "x = std::move(y)";
        const bool heap = !y.is_inline();
        const T* d = y.data();
        x = std::move(y);
        rx = std::move(ry);
        ry.clear();
        LOWALLOC_VOPS_CHECK(y.empty());  // documented: a moved-from small_vector is empty
        if (heap) LOWALLOC_VOPS_CHECK(x.data() == d);  // equal allocators: the buffer moves
        break;
      }
      case 6: {
        op_ = "base& = base&&";
        base& bx = x;
        base& by = y;
        bx = std::move(by);
        rx = std::move(ry);
        ry.clear();
        LOWALLOC_VOPS_CHECK(y.empty());
        break;
      }
      case 7: {
        op_ = "vec t(const base&), vec t(base&&)";
        const base& by = y;
        const vec t(by);
        if (!same(t, ry)) return false;
        base& my = y;
        vec u(std::move(my));
        LOWALLOC_VOPS_CHECK(y.empty());
        if (!same(u, ry)) return false;
        my = std::move(u);
        LOWALLOC_VOPS_CHECK(u.empty());
        break;
      }
      case 8: {
        op_ = "x = y; modify x's last element; compare";
        x = y;
        rx = ry;
        if (!x.empty() && src.below(2) == 0) {
          const T e = value(src);
          x.back() = e;
          rx.back() = e;
        } else if (src.below(2) == 0) {
          const T e = value(src);
          x.push_back(e);
          rx.push_back(e);
        }
        if (!compare(x, rx, y, ry)) return false;
        break;
      }
      default: {
        op_ = "comparisons";
        if (!compare(x, rx, y, ry)) return false;
        break;
      }
    }
    return true;
  }

  vec a_;
  ref ra_;
  vec b_;
  ref rb_;
  other_vec c_;
  ref rc_;
  long live_baseline_;
  std::size_t limit_ = 12;
  std::size_t step_ = 0;
  const char* op_ = "(none)";
  std::string failure_;
};

#undef LOWALLOC_VOPS_CHECK

}  // namespace lowalloc_test

#endif  // LOWALLOC_TESTS_SUPPORT_VECTOR_OPS_HPP
