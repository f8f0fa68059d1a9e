// Objects, not just allocations: an analysis of the event stream that follows each container
// object through its allocations. libstdc++ and libc++ grow a vector or a string by allocating
// the new buffer and then freeing the old one, on the same thread, from the same stack (a copy
// of the element being inserted may allocate in between): such a chain of blocks is one object.
// Per stack, the objects' count, how many allocations each made, the size of its last block
// (for a vector, its capacity), how long it lived in allocations its thread made meanwhile, and
// how many were alive at once. docs/tracer.md ("Objects") is the specification.
#ifndef LOWALLOC_SRC_ANALYZE_OBJECTS_HPP
#define LOWALLOC_SRC_ANALYZE_OBJECTS_HPP

#include "analyze/events.hpp"
#include "analyze/flat_map.hpp"
#include "analyze/model.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace lowalloc::analyze {

struct analysis;

/// What the objects of one stack (or of the stacks of one site) did.
struct object_counts {
  /// Allocations per object: 1, 2, 3, 4, 5..8, 9..16, 17..64, 65 or more.
  static constexpr std::size_t allocation_classes = 8;
  /// Allocations the object's thread made while the object lived (its own growth included):
  /// 0 (temporary), 1..15, 16..255, 256..4095, 4096 or more; then objects still alive at the end.
  static constexpr std::size_t lifetime_classes = 6;

  std::uint64_t objects = 0;      // every object, ended or alive at the end of the trace
  std::uint64_t allocations = 0;  // made by them
  std::uint64_t alive_at_end = 0;
  /// The most alive at once. Per stack exact; per site the sum of its stacks' (a bound).
  std::uint64_t max_alive = 0;
  std::array<std::uint64_t, allocation_classes> by_allocations{};
  std::array<std::uint64_t, lifetime_classes> by_lifetime{};
  size_counts first_sizes;  // the size of each object's first block
  size_counts final_sizes;  // the size of each object's last block (a vector's last capacity)

  /// The class of an object that made `n` allocations, of one that lived `between` allocations.
  static std::size_t allocation_class(std::uint64_t n) noexcept;
  static std::size_t lifetime_class(std::uint64_t between) noexcept;
  /// The smallest number of allocations in class `c` ("5" for 5..8), and the largest (0: none).
  static std::uint64_t allocation_class_min(std::size_t c) noexcept;
  static std::uint64_t allocation_class_max(std::size_t c) noexcept;
  /// Objects that lived fewer than 16 allocations of their thread (temporary included).
  std::uint64_t short_lived() const noexcept { return by_lifetime[0] + by_lifetime[1]; }
  void add(const object_counts& o);
};

/// The sink: give it to analyze_file() with the accounting's, then call finish().
class object_tracker final : public event_sink {
 public:
  /// How many of a thread's latest allocations a free of the same stack may continue (a growth
  /// may construct the inserted element, which may allocate, before it frees the old buffer).
  static constexpr std::size_t recent = 4;

  void on_begin() override;
  void on_alloc(const alloc_event& e) override;
  void on_free(const free_event& e) override;
  void on_forgotten(const forgotten_event& e) override;

  /// Once the merge is done: the objects alive at the end are counted.
  void finish();

  /// Per stack, in the merge's numbering (analysis::stacks); stacks past the end made none.
  const std::vector<object_counts>& by_stack() const noexcept { return stacks_; }
  /// Per site (analysis::sites), from its stacks.
  std::vector<object_counts> by_site(const analysis& a) const;

 private:
  struct object {
    std::uint64_t born = 0;  // its thread's allocation count before its first allocation
    std::uint64_t first_size = 0;
    std::uint64_t last_size = 0;
    std::uint32_t serial = 0;  // which object this is; 0: none (its number free for reuse)
    std::uint32_t stack = 0;
    std::uint32_t thread = 0;
    std::uint32_t allocations = 0;
  };
  struct recent_alloc {
    std::uint64_t frees = 0;   // its thread's frees before it
    std::uint32_t serial = 0;  // its object's serial; 0: none (taken by a growth)
    std::uint32_t stack = 0;
    std::uint32_t object = 0;
  };
  struct thread_state {
    std::uint64_t allocations = 0;
    std::uint64_t frees = 0;
    std::array<recent_alloc, recent> latest{};  // its latest allocations, the newest at `next - 1`
    std::size_t next = 0;
  };

  object_counts& stack_of(std::uint32_t stack);
  thread_state& thread_of(std::uint32_t thread);
  std::uint32_t new_object();
  /// The object ends: freed (`alive` false) or alive at the end of the trace.
  void end(std::uint32_t index, bool alive);
  /// Its number may be given to a new object.
  void release(std::uint32_t index);

  std::vector<object_counts> stacks_;
  std::vector<std::uint64_t> alive_;  // per stack, now
  std::vector<thread_state> threads_;
  detail::grow_array<object> objects_;  // grows by moving its pages, not by a copy
  std::vector<std::uint32_t> unused_;   // indexes into objects_ free for reuse
  std::uint32_t serial_ = 0;            // the latest object's serial
};

}  // namespace lowalloc::analyze

#endif
