// Element types for container tests: they count what happens to them, refuse what they should,
// and throw on demand. Shared by every container test; not part of lowalloc's API.
#ifndef LOWALLOC_TESTS_SUPPORT_ELEMENT_TYPES_HPP
#define LOWALLOC_TESTS_SUPPORT_ELEMENT_TYPES_HPP

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <ostream>
#include <stdexcept>
#include <utility>

namespace lowalloc_test {

// Global tallies of every lifetime event of `counted` (and the types built on it).
struct lifetime_counts {
  long constructions = 0;  // every constructor, including copies and moves
  long default_constructions = 0;
  long value_constructions = 0;
  long copies = 0;  // copy constructions + copy assignments
  long moves = 0;   // move constructions + move assignments
  long copy_assignments = 0;
  long move_assignments = 0;
  long destructions = 0;
  long live() const { return constructions - destructions; }
};
inline lifetime_counts& counts() {
  static lifetime_counts c;
  return c;
}
inline void reset_counts() { counts() = lifetime_counts{}; }

// Throws `test_exception` when the countdown reaches zero on a copy or a move (or a value
// construction). -1 means never. Set with `throw_after(k)`: the k-th next such operation throws
// (k = 0: the very next one).
struct test_exception : std::runtime_error {
  test_exception() : std::runtime_error("lowalloc_test: injected failure") {}
};
inline long& countdown() {
  static long c = -1;
  return c;
}
inline void throw_after(long k) { countdown() = k; }
inline void never_throw() { countdown() = -1; }
inline void maybe_throw() {
  long& c = countdown();
  if (c < 0) return;
  if (c == 0) {
    c = -1;
    throw test_exception();
  }
  --c;
}

// A copyable, movable element that counts its lifetime events and detects use of a destroyed or
// moved-from object through a magic word. A moved-from value becomes -1.
class counted {
 public:
  counted() : value_(0) { ++counts().constructions, ++counts().default_constructions; }
  counted(int v) : value_(v) {
    ++counts().constructions, ++counts().value_constructions;
  }  // NOLINT
  counted(const counted& o) : value_(o.checked()) { ++counts().constructions, ++counts().copies; }
  counted(counted&& o) noexcept : value_(o.checked()) {
    o.value_ = -1;
    ++counts().constructions, ++counts().moves;
  }
  counted& operator=(const counted& o) {
    checked();
    value_ = o.checked();
    ++counts().copies, ++counts().copy_assignments;
    return *this;
  }
  counted& operator=(counted&& o) noexcept {
    checked();
    value_ = o.checked();
    o.value_ = -1;
    ++counts().moves, ++counts().move_assignments;
    return *this;
  }
  ~counted() {
    checked();
    magic_ = 0xdead;
    ++counts().destructions;
  }
  int value() const { return checked(); }
  friend bool operator==(const counted& a, const counted& b) { return a.value() == b.value(); }
  friend bool operator!=(const counted& a, const counted& b) { return !(a == b); }
  friend bool operator<(const counted& a, const counted& b) { return a.value() < b.value(); }
  friend std::ostream& operator<<(std::ostream& os, const counted& c) { return os << c.value_; }

 private:
  int checked() const {
    if (magic_ != kMagic) std::abort();  // use of a destroyed or never-constructed object
    return value_;
  }
  static constexpr std::uint32_t kMagic = 0x5eed1e55;
  std::uint32_t magic_ = kMagic;
  int value_;
};

// Like `counted`, but every copy and move (and value construction) may throw (see throw_after),
// and the move constructor is not noexcept, so containers must copy it when they grow.
class throwing {
 public:
  throwing() : value_(0) { ++counts().constructions, ++counts().default_constructions; }
  throwing(int v) : value_(v) {  // NOLINT
    maybe_throw();
    ++counts().constructions, ++counts().value_constructions;
  }
  throwing(const throwing& o) : value_(o.value_) {
    maybe_throw();
    ++counts().constructions, ++counts().copies;
  }
  throwing(throwing&& o) noexcept(false) : value_(o.value_) {
    maybe_throw();
    o.value_ = -1;
    ++counts().constructions, ++counts().moves;
  }
  throwing& operator=(const throwing& o) {
    maybe_throw();
    value_ = o.value_;
    ++counts().copies, ++counts().copy_assignments;
    return *this;
  }
  throwing& operator=(throwing&& o) noexcept(false) {
    maybe_throw();
    value_ = o.value_;
    o.value_ = -1;
    ++counts().moves, ++counts().move_assignments;
    return *this;
  }
  ~throwing() { ++counts().destructions; }
  int value() const { return value_; }
  friend bool operator==(const throwing& a, const throwing& b) { return a.value_ == b.value_; }
  friend bool operator!=(const throwing& a, const throwing& b) { return !(a == b); }
  friend bool operator<(const throwing& a, const throwing& b) { return a.value_ < b.value_; }
  friend std::ostream& operator<<(std::ostream& os, const throwing& t) { return os << t.value_; }

 private:
  int value_;
};

// Movable, not copyable.
class move_only {
 public:
  move_only() = default;
  explicit move_only(int v) : value_(v) {}
  move_only(const move_only&) = delete;
  move_only& operator=(const move_only&) = delete;
  move_only(move_only&& o) noexcept : value_(std::exchange(o.value_, -1)) {}
  move_only& operator=(move_only&& o) noexcept {
    value_ = std::exchange(o.value_, -1);
    return *this;
  }
  int value() const { return value_; }
  friend bool operator==(const move_only& a, const move_only& b) { return a.value_ == b.value_; }
  friend bool operator<(const move_only& a, const move_only& b) { return a.value_ < b.value_; }

 private:
  int value_ = 0;
};

// No default constructor.
class no_default {
 public:
  explicit no_default(int v) : value_(v) {}
  int value() const { return value_; }
  friend bool operator==(const no_default& a, const no_default& b) { return a.value_ == b.value_; }

 private:
  int value_;
};

// Over-aligned: every element must sit on a 64-byte boundary, inline and on the heap.
struct alignas(64) over_aligned {
  over_aligned() = default;
  over_aligned(int v) : value(v) {}  // NOLINT
  int value = 0;
  friend bool operator==(const over_aligned& a, const over_aligned& b) {
    return a.value == b.value;
  }
};

}  // namespace lowalloc_test

#endif  // LOWALLOC_TESTS_SUPPORT_ELEMENT_TYPES_HPP
