// lowalloc/detail/forwarding_resource.hpp — the std::pmr::memory_resource side of arena, pool and
// synchronized_pool. Internal: not part of the API.
#ifndef LOWALLOC_DETAIL_FORWARDING_RESOURCE_HPP
#define LOWALLOC_DETAIL_FORWARDING_RESOURCE_HPP

#include <cstddef>
#include <memory_resource>

namespace lowalloc {
namespace detail {

// A memory_resource whose virtual members call Derived's allocate and deallocate. Derived's own
// allocate and deallocate are non-virtual and hide memory_resource's, so that a call on the
// concrete type inlines its fast path; a call through a memory_resource& reaches the same code
// here. Memory from one resource never goes back to another: each is equal only to itself.
template <class Derived>
class forwarding_resource : public std::pmr::memory_resource {
 protected:
  void* do_allocate(std::size_t bytes, std::size_t align) override {
    return static_cast<Derived*>(this)->allocate(bytes, align);
  }
  void do_deallocate(void* p, std::size_t bytes, std::size_t align) override {
    static_cast<Derived*>(this)->deallocate(p, bytes, align);
  }
  bool do_is_equal(const std::pmr::memory_resource& other) const noexcept override {
    return this == &other;
  }
};

}  // namespace detail
}  // namespace lowalloc

#endif  // LOWALLOC_DETAIL_FORWARDING_RESOURCE_HPP
