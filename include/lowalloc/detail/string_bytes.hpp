// lowalloc/detail/string_bytes.hpp — byte-level helpers of the string storages and of
// basic_string. Internal: not part of the API.
#ifndef LOWALLOC_DETAIL_STRING_BYTES_HPP
#define LOWALLOC_DETAIL_STRING_BYTES_HPP

#include <lowalloc/detail/config.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace lowalloc {
namespace detail {

template <std::size_t Bytes>
struct uint_of_size;
template <>
struct uint_of_size<1> {
  using type = std::uint8_t;
};
template <>
struct uint_of_size<2> {
  using type = std::uint16_t;
};
template <>
struct uint_of_size<4> {
  using type = std::uint32_t;
};

#if defined(__BYTE_ORDER__) && defined(__ORDER_BIG_ENDIAN__) && \
    __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
inline constexpr bool little_endian = false;
#else
inline constexpr bool little_endian = true;
#endif

// A character slot read or written as the unsigned integer of its size.
template <class CharT>
using tail_t = typename uint_of_size<sizeof(CharT)>::type;

template <class CharT>
inline tail_t<CharT> load_unit(const CharT* p) noexcept {
  tail_t<CharT> t;
  std::memcpy(&t, p, sizeof t);
  return t;
}
template <class CharT>
inline void store_unit(CharT* p, tail_t<CharT> t) noexcept {
  std::memcpy(p, &t, sizeof t);
}

LOWALLOC_SUPPRESS_GCC_FALSE_POSITIVES_BEGIN

// The size of an inline buffer, as small_storage and fixed_storage keep it. Character slot `Slot`
// holds the number of characters that still fit (Capacity - size), so that it reads as the
// terminator exactly when the buffer is full and the size costs no byte of its own. A count of
// `Big` or more does not fit in the slot: the slot then holds `Big` and the size is kept in the 8
// bytes before it, which are past the terminator and unused. (small_storage's Big is below the
// slot's maximum: its top bit marks a heap string.)
//
// The buffer is passed as an array, not a pointer: GCC bounds the index of buf[n] by the array's
// size, as it did when each storage indexed its own array, and lays out the callers' branches the
// same way.
template <class CharT, std::size_t Capacity, std::size_t Slot, tail_t<CharT> Big>
struct inline_size_encoding {
  static_assert(Capacity <= Slot, "a full buffer's terminator is at or before the slot");

  using tail = tail_t<CharT>;
  using buffer = CharT[Slot + 1];

  static constexpr tail big = Big;
  static constexpr bool uses_size_word = Capacity >= Big;

  static tail slot(const buffer& buf) noexcept { return load_unit(buf + Slot); }

  // The size of a buffer whose slot holds `big`.
  static std::size_t size_word(const buffer& buf) noexcept {
    std::size_t n;
    std::memcpy(&n, reinterpret_cast<const unsigned char*>(buf) + size_word_offset, sizeof n);
    return n;
  }

  // The size of a buffer. The size word is read here, not through size_word(): with one more
  // call level GCC lays out fixed_string's size() and its callers differently.
  static std::size_t load(const buffer& buf) noexcept {
    const tail t = load_unit(buf + Slot);
    if constexpr (uses_size_word) {
      if (t == Big) {
        std::size_t n;
        std::memcpy(&n, reinterpret_cast<const unsigned char*>(buf) + size_word_offset, sizeof n);
        return n;
      }
    }
    return Capacity - t;
  }

  // Writes the terminator at buf[n] and the slot (and the size word when needed).
  static void store(buffer& buf, std::size_t n) noexcept {
    LOWALLOC_ASSUME(n <= Capacity);
    buf[n] = CharT();
    const std::size_t remaining = Capacity - n;
    if constexpr (uses_size_word) {
      if (remaining >= Big) {
        std::memcpy(reinterpret_cast<unsigned char*>(buf) + size_word_offset, &n, sizeof n);
        store_unit(buf + Slot, Big);
        return;
      }
    }
    store_unit(buf + Slot, tail(remaining));
  }

 private:
  static constexpr std::size_t size_word_offset =
      uses_size_word ? Slot * sizeof(CharT) - sizeof(std::size_t) : 0;
};

LOWALLOC_SUPPRESS_GCC_FALSE_POSITIVES_END

// memmove of at most 32 bytes without a call: two overlapping loads of the largest power of two
// that fits, then two stores (loading first makes overlapping ranges safe). Short strings are
// built and appended this way; longer ones go to memmove.
inline void move_short_bytes(unsigned char* d, const unsigned char* s, std::size_t b) noexcept {
  if (b >= 16) {
    unsigned char x[16], y[16];
    std::memcpy(x, s, 16);
    std::memcpy(y, s + b - 16, 16);
    std::memcpy(d, x, 16);
    std::memcpy(d + b - 16, y, 16);
  } else if (b >= 8) {
    std::uint64_t x, y;
    std::memcpy(&x, s, 8);
    std::memcpy(&y, s + b - 8, 8);
    std::memcpy(d, &x, 8);
    std::memcpy(d + b - 8, &y, 8);
  } else if (b >= 4) {
    std::uint32_t x, y;
    std::memcpy(&x, s, 4);
    std::memcpy(&y, s + b - 4, 4);
    std::memcpy(d, &x, 4);
    std::memcpy(d + b - 4, &y, 4);
  } else if (b != 0) {
    const unsigned char x = s[0], y = s[b / 2], z = s[b - 1];
    d[0] = x;
    d[b / 2] = y;
    d[b - 1] = z;
  }
}

// Hides a length from the optimiser. A copy whose length GCC knows to be bounded (by a
// fixed_string's N) is otherwise inlined as `rep movsq`, several times slower here than memmove.
template <class T>
LOWALLOC_ALWAYS_INLINE T opaque(T v) noexcept {
#if defined(__GNUC__) || defined(__clang__)
  __asm__("" : "+r"(v));
#endif
  return v;
}

}  // namespace detail
}  // namespace lowalloc

#endif  // LOWALLOC_DETAIL_STRING_BYTES_HPP
