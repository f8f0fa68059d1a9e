// lowalloc/detail/allocator_holder.hpp — where the containers keep their allocator. Internal.
#ifndef LOWALLOC_DETAIL_ALLOCATOR_HOLDER_HPP
#define LOWALLOC_DETAIL_ALLOCATOR_HOLDER_HPP

#include <type_traits>

namespace lowalloc {
namespace detail {

// Holds the allocator; empty allocators take no space (empty base optimisation).
template <class A, bool = std::is_empty_v<A> && !std::is_final_v<A>>
class allocator_holder : private A {
 protected:
  allocator_holder() = default;
  explicit allocator_holder(const A& a) noexcept : A(a) {}
  A& alloc() noexcept { return *this; }
  const A& alloc() const noexcept { return *this; }
};
template <class A>
class allocator_holder<A, false> {
 protected:
  allocator_holder() = default;
  explicit allocator_holder(const A& a) noexcept : a_(a) {}
  A& alloc() noexcept { return a_; }
  const A& alloc() const noexcept { return a_; }

 private:
  A a_;
};

}  // namespace detail
}  // namespace lowalloc

#endif  // LOWALLOC_DETAIL_ALLOCATOR_HOLDER_HPP
