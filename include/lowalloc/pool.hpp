// lowalloc/pool.hpp — a fixed-size block pool for node containers, and its allocator.
//
// `lowalloc::pool` hands out slots of one size and alignment, carved from slabs it takes from an
// upstream std::pmr::memory_resource (16 KiB each by default). Each slab tracks its free slots in
// a bitmap, and the pool holds one 64-slot word of it: allocate is a find-first-set and a bit
// clear, deallocate a bit set, both O(1) and inline, with no search over the slabs (the slab of a
// pointer is the pointer rounded down to the slab size). It allocates from upstream only when
// every slab is full, and gives a slab back when it becomes empty, beyond
// `pool_options::keep_empty_slabs` kept ones. In front of the bitmaps, a bounded LIFO list of
// freed slots (threaded through them) makes the common allocate/free a pop and a push; a slot on
// it keeps its slab until the list overflows or `trim()` is called (see pool_options).
//
// Any request up to the slot size and alignment gets a slot, so one pool serves the nodes of a
// std::list, std::map, std::set or std::unordered_map without knowing their node sizes; larger or
// more aligned requests (a vector's buffer, an unordered_map's bucket array) go to upstream and
// are counted in stats(). It replaces std::pmr::unsynchronized_pool_resource (one size class,
// several times faster), boost::object_pool, or a hand-written free list.
//
//   using map = std::map<int, int, std::less<int>,
//                        lowalloc::pool_allocator<std::pair<const int, int>>>;
//   lowalloc::pool nodes(lowalloc::node_size_v<map>);  // slots of one node (node_size.hpp)
//   map m(nodes);                                       // every node is a slot
//   std::pmr::list<int> l(&nodes);                      // or as a memory_resource
//
// `lowalloc::synchronized_pool` has the same interface and is thread-safe: each thread keeps a
// small cache of free slots per pool (no lock while it lasts), refilled from and spilled to a
// mutex-protected central pool in batches. A block may be freed on any thread.
//
// Differences from std::pmr::unsynchronized_pool_resource:
//  - One slot size; every request up to it costs a whole slot.
//  - deallocate() must get the same size and alignment as allocate() (the pmr contract): they
//    decide whether the block is a slot or an oversize block.
//  - release() and the destructor give back every slab and every oversize block still held.
//  - With LOWALLOC_ASSERTIONS a double free or a pointer from elsewhere aborts with a message;
//    under AddressSanitizer free slots are poisoned (use after free is reported).
//  - Without NDEBUG or with LOWALLOC_ASSERTIONS, the first oversize request of each pool prints a
//    warning on stderr (LOWALLOC_POOL_WARN_OVERSIZE).
#ifndef LOWALLOC_POOL_HPP
#define LOWALLOC_POOL_HPP

#include <lowalloc/detail/config.hpp>
#include <lowalloc/detail/forwarding_resource.hpp>
#include <lowalloc/detail/gdb_scripts.hpp>
#include <lowalloc/detail/pool_core.hpp>
#include <lowalloc/detail/pool_sync.hpp>
#include <lowalloc/detail/throw.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory_resource>
#include <mutex>
#include <new>
#include <type_traits>

namespace lowalloc {

/// How a pool sizes its slabs and how many empty slabs it keeps.
struct pool_options {
  /// Slots per slab; 0: as many as fit a 16 KiB slab (at least 64). At most 4096 (larger values
  /// are clamped). A slab is a power of two in bytes, aligned to its size.
  std::size_t slots_per_slab = 0;
  /// Empty slabs kept for reuse; a slab that becomes empty beyond these goes back upstream.
  std::size_t keep_empty_slabs = 1;
  /// lowalloc::pool only (extra): freed slots kept on a LIFO list in front of the bitmaps, reused
  /// first; when it is full, the newest half goes back to the bitmaps. A slot on the list is free
  /// for the user but still counted as used by its slab, so a slab goes back upstream only once
  /// its slots have left the list (pool::trim() empties it). `one_slab`: as many as a slab holds;
  /// 0: none (every free goes to the bitmaps at once). Always 0 for slots smaller than two
  /// pointers and under AddressSanitizer (so that every free slot stays poisoned).
  std::size_t recycled_slots = one_slab;
  static constexpr std::size_t one_slab = ~std::size_t{0};
};

/// A snapshot of a pool's state. Every figure is "now", not a running total.
struct pool_stats {
  std::size_t slots_in_use = 0;          ///< slots handed out and not yet deallocated
  std::size_t slabs = 0;                 ///< slabs held (including kept empty ones)
  std::size_t bytes_upstream = 0;        ///< bytes held from upstream: slabs and oversize blocks
  std::size_t oversize_allocations = 0;  ///< live blocks that were too large (or too aligned)
};

namespace detail {

// What a slot on lowalloc::pool's recycle list holds (copied in and out with memcpy: a slot may
// be less aligned than this struct).
struct pool_recycled_node {
  void* next;
  std::size_t depth;  // slots on the list from this one down, itself included
};

inline pool_stats pool_stats_of(const pool_core& core) noexcept {
  pool_stats st;
  st.slots_in_use = core.slots_in_use();
  st.slabs = core.slabs();
  st.bytes_upstream = core.bytes_upstream();
  st.oversize_allocations = core.oversize_allocations();
  return st;
}

}  // namespace detail

/// A pool of fixed-size slots in bitmap-tracked slabs. Single-threaded (see synchronized_pool).
/// Non-copyable, non-movable. Is-a std::pmr::memory_resource; equal only to itself.
class pool : public detail::forwarding_resource<pool> {
 public:
  /// A pool of slots of `slot_size` bytes (rounded up to a multiple of `slot_align`, a power of
  /// two) aligned to `slot_align`. Takes no memory until the first allocation. Throws
  /// std::invalid_argument when slot_align is not a power of two or upstream is null, and
  /// std::length_error when a slab would exceed 2 GiB.
  explicit pool(std::size_t slot_size, std::size_t slot_align = alignof(std::max_align_t),
                pool_options options = {},
                std::pmr::memory_resource* upstream = std::pmr::new_delete_resource())
      : core_(slot_size, slot_align, options.slots_per_slab, options.keep_empty_slabs, upstream) {
#if !LOWALLOC_POOL_POISON
    if (core_.slot_size() >= sizeof(detail::pool_recycled_node)) {
      recycle_limit_ = options.recycled_slots == pool_options::one_slab ? core_.slots_per_slab()
                                                                        : options.recycled_slots;
    }
#endif
  }

  pool(const pool&) = delete;
  pool& operator=(const pool&) = delete;

  /// Gives every slab and oversize block back to upstream.
  ~pool() override = default;

  /// A block of `bytes` aligned to `align`: a slot when bytes <= slot_size() and
  /// align <= slot_align() (O(1), no call to upstream unless every slab is full), else an
  /// oversize block from upstream. Throws what upstream throws. Non-virtual: hides
  /// memory_resource::allocate on purpose so that the fast path inlines.
  void* allocate(std::size_t bytes, std::size_t align = alignof(std::max_align_t)) {
    if (LOWALLOC_LIKELY(core_.fits(bytes, align))) {
      if (void* r = recycled_; LOWALLOC_LIKELY(r != nullptr)) {
        std::memcpy(&recycled_, r, sizeof(void*));  // the next link, stored in the slot
#if LOWALLOC_ASSERTIONS
        core_.set_debug_mark(r, false);
#endif
        return r;
      }
      void* p = core_.alloc_slot();
      detail::pool_unpoison(p, bytes);
      return p;
    }
    return core_.alloc_oversize(bytes, align);
  }

  /// Gives back a block from allocate(bytes, align), with the same bytes and align. O(1).
  /// A slab that becomes empty goes back upstream unless it is one of the kept empty slabs.
  /// With LOWALLOC_ASSERTIONS, a double free or a pointer not from this pool aborts.
  void deallocate(void* p, std::size_t bytes,
                  std::size_t align = alignof(std::max_align_t)) noexcept {
    if (LOWALLOC_LIKELY(core_.fits(bytes, align))) {
#if LOWALLOC_ASSERTIONS
      core_.check_allocated(p, "lowalloc::pool");
      // A slot on the recycle list is still used in its bitmap: the debug bitmap marks it.
      if (core_.set_debug_mark(p, false)) detail::pool_fail_double_free("lowalloc::pool", p);
#endif
      const std::size_t n = recycled();
      if (LOWALLOC_LIKELY(n < recycle_limit_)) {
        push_recycled(p, n);
        return;
      }
      if (recycle_limit_ != 0) {
        flush_recycled(n - n / 2);  // the newest half; the older half stays
        push_recycled(p, recycled());
        return;
      }
      detail::pool_poison(p, core_.slot_size());
      core_.free_slot(p);
      return;
    }
    core_.free_oversize(p, align, "lowalloc::pool");
  }

  /// The slot size: the largest request served by a slot.
  std::size_t slot_size() const noexcept { return core_.slot_size(); }
  /// The slot alignment: the largest alignment served by a slot.
  std::size_t slot_align() const noexcept { return core_.slot_align(); }
  /// Slots in each slab.
  std::size_t slots_per_slab() const noexcept { return core_.slots_per_slab(); }
  /// Bytes of each slab (a power of two; slabs are aligned to it).
  std::size_t slab_bytes() const noexcept { return core_.slab_bytes(); }
  /// The resource slabs and oversize blocks come from.
  std::pmr::memory_resource* upstream() const noexcept { return core_.upstream(); }

  /// Slots in use, slabs held, bytes held from upstream, live oversize blocks. O(1).
  pool_stats stats() const noexcept {
    pool_stats st = detail::pool_stats_of(core_);
    st.slots_in_use -= recycled();
    return st;
  }

  /// (extra) Freed slots on the recycle list (see pool_options::recycled_slots).
  std::size_t recycled() const noexcept {
    if (recycled_ == nullptr) return 0;
    detail::pool_recycled_node head;
    std::memcpy(&head, recycled_, sizeof head);
    return head.depth;
  }

  /// (extra) Puts every slot of the recycle list back in its slab's bitmap, so that slabs that
  /// are now empty go back upstream (beyond keep_empty_slabs). O(slots on the list).
  void trim() noexcept { flush_recycled(recycled()); }

  /// Gives every slab and oversize block back to upstream: every block handed out becomes
  /// invalid. The pool stays usable.
  void release() noexcept {
    recycled_ = nullptr;
    core_.release();
  }

 private:
  // p goes on top of the recycle list, which holds n slots.
  void push_recycled(void* p, std::size_t n) noexcept {
#if LOWALLOC_ASSERTIONS
    core_.set_debug_mark(p, true);
#endif
    const detail::pool_recycled_node node{recycled_, n + 1};
    std::memcpy(p, &node, sizeof node);
    recycled_ = p;
  }

  // The n newest slots of the recycle list back to the bitmaps.
  LOWALLOC_NOINLINE void flush_recycled(std::size_t n) noexcept {
    void* r = recycled_;
    for (; n != 0; --n) {
      void* next;
      std::memcpy(&next, r, sizeof(void*));
#if LOWALLOC_ASSERTIONS
      core_.set_debug_mark(r, false);
#endif
      core_.free_slot(r);
      r = next;
    }
    recycled_ = r;
  }

  // The recycle list: each slot on it holds a pool_recycled_node, the next slot's address and
  // the list's length from that slot down. Its length is the top slot's depth, so allocation
  // (a pop) updates no counter: it costs what the pop of a plain free list costs.
  void* recycled_ = nullptr;
  detail::pool_core core_;
  std::size_t recycle_limit_ = 0;
};

/// The thread-safe pool: the interface of `pool`, usable from any number of threads at once.
///
/// Each thread keeps, per pool, a cache of up to 256 free slots (fewer for large slots): allocate
/// and deallocate touch only that cache (no lock, no atomic read-modify-write) until it is empty
/// or full; then half a cache's worth of slots moves from or to the central pool under its mutex.
/// A block may be deallocated on another thread than the one that allocated it: it goes to the
/// freeing thread's cache. When a thread exits, its caches go back to their pools; a pool may be
/// destroyed before or after the threads that used it exit. The first use of a pool on a thread
/// allocates that thread's cache (about 2 KiB, with operator new).
///
/// With LOWALLOC_ASSERTIONS every allocate and deallocate also takes the mutex, to check for
/// double frees across all caches.
///
/// Not thread-safe: destruction and release() (no other thread may use the pool meanwhile).
class synchronized_pool : public detail::forwarding_resource<synchronized_pool> {
 public:
  /// Same as pool::pool. Allocates the central state (operator new).
  explicit synchronized_pool(std::size_t slot_size,
                             std::size_t slot_align = alignof(std::max_align_t),
                             pool_options options = {},
                             std::pmr::memory_resource* upstream = std::pmr::new_delete_resource())
      : shared_(new detail::pool_shared(slot_size, slot_align, options.slots_per_slab,
                                        options.keep_empty_slabs, upstream)) {
    id_ = shared_->id;
    slot_size_ = shared_->core.slot_size();
    slot_align_ = shared_->core.slot_align();
    std::size_t cap = std::size_t{32 * 1024} / slot_size_;
    if (cap > detail::pool_thread_cache::max_capacity)
      cap = detail::pool_thread_cache::max_capacity;
    if (cap < 8) cap = 8;
    capacity_ = static_cast<std::uint32_t>(cap & ~std::size_t{1});
  }

  synchronized_pool(const synchronized_pool&) = delete;
  synchronized_pool& operator=(const synchronized_pool&) = delete;

  /// Gives every slab and oversize block back to upstream. Threads' caches of this pool become
  /// inert; each thread frees its own at exit (or when it next makes a cache).
  ~synchronized_pool() override {
    detail::pool_shared* s = shared_;
    bool last = false;
    {
      std::lock_guard<std::mutex> lock(s->mutex);
      s->alive = false;
      s->core.release();
      last = --s->refs == 0;
    }
    if (last) delete s;
  }

  /// As pool::allocate; thread-safe. O(1); takes the mutex once per refill of the thread's cache.
  void* allocate(std::size_t bytes, std::size_t align = alignof(std::max_align_t)) {
    if (LOWALLOC_LIKELY(bytes <= slot_size_ && align <= slot_align_)) {
#if !LOWALLOC_ASSERTIONS
      const detail::pool_tls_entry& e =
          detail::pool_tls_state.table[id_ % detail::pool_tls_table_size];
      if (LOWALLOC_LIKELY(e.id == id_)) {
        detail::pool_thread_cache* c = e.cache;
        const std::uint32_t n = c->count.load(std::memory_order_relaxed);
        if (LOWALLOC_LIKELY(n != 0)) {
          c->count.store(n - 1, std::memory_order_relaxed);
          void* p = c->slots[n - 1];
          detail::pool_unpoison(p, bytes);
          return p;
        }
      }
#endif
      return allocate_slow(bytes);
    }
    return allocate_oversize(bytes, align);
  }

  /// As pool::deallocate; thread-safe, on any thread. O(1); takes the mutex once per spill of the
  /// thread's cache.
  void deallocate(void* p, std::size_t bytes,
                  std::size_t align = alignof(std::max_align_t)) noexcept {
    if (LOWALLOC_LIKELY(bytes <= slot_size_ && align <= slot_align_)) {
#if !LOWALLOC_ASSERTIONS
      const detail::pool_tls_entry& e =
          detail::pool_tls_state.table[id_ % detail::pool_tls_table_size];
      if (LOWALLOC_LIKELY(e.id == id_)) {
        detail::pool_thread_cache* c = e.cache;
        const std::uint32_t n = c->count.load(std::memory_order_relaxed);
        if (LOWALLOC_LIKELY(n != c->capacity)) {
          detail::pool_poison(p, slot_size_);
          c->slots[n] = p;
          c->count.store(n + 1, std::memory_order_relaxed);
          return;
        }
      }
#endif
      deallocate_slow(p);
      return;
    }
    deallocate_oversize(p, align);
  }

  /// The slot size: the largest request served by a slot.
  std::size_t slot_size() const noexcept { return slot_size_; }
  /// The slot alignment: the largest alignment served by a slot.
  std::size_t slot_align() const noexcept { return slot_align_; }
  /// Slots in each slab.
  std::size_t slots_per_slab() const noexcept { return shared_->core.slots_per_slab(); }
  /// Bytes of each slab (a power of two; slabs are aligned to it).
  std::size_t slab_bytes() const noexcept { return shared_->core.slab_bytes(); }
  /// The most free slots a thread's cache holds.
  std::size_t thread_cache_capacity() const noexcept { return capacity_; }
  /// The resource slabs and oversize blocks come from (called under the pool's mutex).
  std::pmr::memory_resource* upstream() const noexcept { return shared_->core.upstream(); }

  /// As pool::stats. slots_in_use does not count the free slots in threads' caches (slabs and
  /// bytes_upstream include them); it is exact when no other thread is using the pool, a
  /// snapshot otherwise. O(threads).
  pool_stats stats() const noexcept {
    detail::pool_shared* s = shared_;
    std::lock_guard<std::mutex> lock(s->mutex);
    pool_stats st = detail::pool_stats_of(s->core);
    std::size_t cached = 0;
    for (const detail::pool_thread_cache* c = s->caches; c != nullptr; c = c->shared_next) {
      if (c->id == s->id) cached += c->count.load(std::memory_order_relaxed);
    }
    st.slots_in_use = st.slots_in_use > cached ? st.slots_in_use - cached : 0;
    return st;
  }

  /// (extra) Gives the free slots of the calling thread's cache back to the central pool, so
  /// that slabs that are now empty go back upstream (beyond keep_empty_slabs). Other threads'
  /// caches are theirs: each thread trims its own. Thread-safe. O(thread cache capacity).
  void trim() noexcept { detail::pool_flush_cache(shared_, id_); }

  /// Gives every slab and oversize block back to upstream; every block handed out, and every
  /// slot in a thread's cache, becomes invalid. No other thread may use the pool meanwhile.
  void release() noexcept {
    detail::pool_shared* s = shared_;
    std::lock_guard<std::mutex> lock(s->mutex);
    s->core.release();
    s->id = detail::pool_new_id();
    id_ = s->id;
  }

 private:
  static constexpr const char* who = "lowalloc::synchronized_pool";

  LOWALLOC_NOINLINE void* allocate_slow(std::size_t bytes) {
    detail::pool_shared* s = shared_;
    detail::pool_thread_cache* c = detail::pool_cache_for(s, id_, capacity_);
    void* p = nullptr;
    if (c == nullptr) {
      std::lock_guard<std::mutex> lock(s->mutex);
      p = s->core.alloc_slot();
    } else {
      std::uint32_t n = c->count.load(std::memory_order_relaxed);
      if (n == 0) {
        std::size_t done = 0;
        std::lock_guard<std::mutex> lock(s->mutex);
        LOWALLOC_TRY { s->core.alloc_batch(c->slots, capacity_ / 2, done); }
        LOWALLOC_CATCH_ALL {
          if (done == 0) LOWALLOC_RETHROW;
        }
        for (std::size_t i = 0; i < done; ++i) s->core.set_debug_mark(c->slots[i], true);
        n = static_cast<std::uint32_t>(done);
      }
      p = c->slots[n - 1];
      c->count.store(n - 1, std::memory_order_relaxed);
#if LOWALLOC_ASSERTIONS
      std::lock_guard<std::mutex> lock(s->mutex);
      s->core.set_debug_mark(p, false);
#endif
    }
    detail::pool_unpoison(p, bytes);
    return p;
  }

  LOWALLOC_NOINLINE void deallocate_slow(void* p) noexcept {
    detail::pool_shared* s = shared_;
#if LOWALLOC_ASSERTIONS
    {
      std::lock_guard<std::mutex> lock(s->mutex);
      s->core.check_allocated(p, who);
      if (s->core.set_debug_mark(p, true)) detail::pool_fail_double_free(who, p);
    }
#endif
    detail::pool_poison(p, slot_size_);
    detail::pool_thread_cache* c = detail::pool_cache_for(s, id_, capacity_);
    if (c == nullptr) {
      std::lock_guard<std::mutex> lock(s->mutex);
      s->core.set_debug_mark(p, false);
      s->core.free_slot(p);
      return;
    }
    std::uint32_t n = c->count.load(std::memory_order_relaxed);
    if (n == capacity_) {  // spill the older half; keep the recently freed (cache-hot) slots
      const std::uint32_t half = capacity_ / 2;
      {
        std::lock_guard<std::mutex> lock(s->mutex);
        detail::pool_give_back(s, c->slots, half);
      }
      std::memmove(c->slots, c->slots + half, (n - half) * sizeof(void*));
      n -= half;
    }
    c->slots[n] = p;
    c->count.store(n + 1, std::memory_order_relaxed);
  }

  LOWALLOC_NOINLINE void* allocate_oversize(std::size_t bytes, std::size_t align) {
    std::lock_guard<std::mutex> lock(shared_->mutex);
    return shared_->core.alloc_oversize(bytes, align);
  }

  LOWALLOC_NOINLINE void deallocate_oversize(void* p, std::size_t align) noexcept {
    std::lock_guard<std::mutex> lock(shared_->mutex);
    shared_->core.free_oversize(p, align, who);
  }

  // Read on every call: id_ and the limits live in the object, not behind shared_.
  std::uint64_t id_ = 0;
  std::size_t slot_size_ = 0;
  std::size_t slot_align_ = 0;
  std::uint32_t capacity_ = 0;
  detail::pool_shared* shared_;
};

/// A standard Allocator that takes its blocks from a pool (or synchronized_pool) by reference,
/// with no virtual call: any allocate(n) with n * sizeof(T) <= slot size and alignof(T) <= slot
/// alignment is a slot, anything larger goes to the pool's upstream. Rebinds to any U (all
/// rebinds share the pool), so node containers need not know their node sizes.
///
/// Equal when they use the same pool. The allocator propagates on copy assignment, move
/// assignment and swap (a container's memory stays with the pool it came from: move assignment
/// and swap are O(1) and never reallocate); is_always_equal is false.
template <class T, class Pool = pool>
class pool_allocator {
 public:
  using value_type = T;
  using size_type = std::size_t;
  using difference_type = std::ptrdiff_t;
  using propagate_on_container_copy_assignment = std::true_type;
  using propagate_on_container_move_assignment = std::true_type;
  using propagate_on_container_swap = std::true_type;
  using is_always_equal = std::false_type;

  template <class U>
  struct rebind {
    using other = pool_allocator<U, Pool>;
  };

  /// Allocates from `p`, which must outlive every block allocated. Implicit on purpose:
  /// `std::list<int, lowalloc::pool_allocator<int>> l(my_pool);`
  pool_allocator(Pool& p) noexcept : pool_(&p) {}  // NOLINT(google-explicit-constructor)

  /// The same pool, for another element type.
  template <class U>
  pool_allocator(const pool_allocator<U, Pool>& other) noexcept  // NOLINT
      : pool_(&other.pool()) {}

  /// Storage for n objects of T; throws std::bad_array_new_length when n * sizeof(T)
  /// overflows, or what the pool throws.
  T* allocate(std::size_t n) {
    if (n > static_cast<std::size_t>(-1) / sizeof(T)) throw_bad_array_new_length();
    return static_cast<T*>(pool_->allocate(n * sizeof(T), alignof(T)));
  }

  /// Gives back storage from allocate(n), with the same n.
  void deallocate(T* p, std::size_t n) noexcept { pool_->deallocate(p, n * sizeof(T), alignof(T)); }

  /// The pool this allocator uses.
  Pool& pool() const noexcept { return *pool_; }

 private:
  [[noreturn]] LOWALLOC_NOINLINE static void throw_bad_array_new_length() {
    LOWALLOC_THROW(std::bad_array_new_length());
  }

  Pool* pool_;
};

/// True when both allocate from the same pool.
template <class T, class U, class Pool>
bool operator==(const pool_allocator<T, Pool>& a, const pool_allocator<U, Pool>& b) noexcept {
  return &a.pool() == &b.pool();
}

/// True when they allocate from different pools.
template <class T, class U, class Pool>
bool operator!=(const pool_allocator<T, Pool>& a, const pool_allocator<U, Pool>& b) noexcept {
  return !(a == b);
}

}  // namespace lowalloc

#endif  // LOWALLOC_POOL_HPP
