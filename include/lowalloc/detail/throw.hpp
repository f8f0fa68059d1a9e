// lowalloc/detail/throw.hpp — the exceptions lowalloc's containers throw, out of line so that the
// callers' fast paths stay small. Internal: not part of the API. Without exceptions they print the
// reason and abort.
#ifndef LOWALLOC_DETAIL_THROW_HPP
#define LOWALLOC_DETAIL_THROW_HPP

#include <lowalloc/detail/config.hpp>

#include <new>
#include <stdexcept>

namespace lowalloc {
namespace detail {

[[noreturn]] LOWALLOC_NOINLINE inline void throw_bad_alloc() { LOWALLOC_THROW(std::bad_alloc()); }

[[noreturn]] LOWALLOC_NOINLINE inline void throw_out_of_range([[maybe_unused]] const char* what) {
  LOWALLOC_THROW(std::out_of_range(what));
}

[[noreturn]] LOWALLOC_NOINLINE inline void throw_length_error([[maybe_unused]] const char* what) {
  LOWALLOC_THROW(std::length_error(what));
}

}  // namespace detail
}  // namespace lowalloc

#endif  // LOWALLOC_DETAIL_THROW_HPP
