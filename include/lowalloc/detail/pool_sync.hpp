// lowalloc/detail/pool_sync.hpp — the shared state and per-thread caches of
// lowalloc::synchronized_pool. Internal: not part of the API.
//
// Ownership: the pool's central state (`pool_shared`: a mutex and a pool_core) is reference
// counted: one reference for the synchronized_pool object, one per thread cache registered with
// it. Whoever drops the last reference deletes it, so a thread that exits after the pool was
// destroyed, or a pool destroyed while threads still hold caches, both find it alive.
//
// A thread's caches are reached through `pool_tls_state`, a trivially destructible thread_local
// (no guard on the fast path): a small direct-mapped table {pool id -> cache} and the list of the
// thread's caches. A second thread_local, `pool_tls_owner_state`, exists only for its destructor:
// at thread exit it gives every cached slot back to its pool and frees the caches.
//
// Pool ids come from one global counter and are never reused; release() gives the pool a new id,
// so caches filled before it (holding slots of released slabs) never match again and are
// discarded, not flushed, when their thread prunes them or exits.
#ifndef LOWALLOC_DETAIL_POOL_SYNC_HPP
#define LOWALLOC_DETAIL_POOL_SYNC_HPP

#include <lowalloc/detail/config.hpp>
#include <lowalloc/detail/pool_core.hpp>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <new>

namespace lowalloc {
namespace detail {

inline std::atomic<std::uint64_t> pool_next_id{1};

inline std::uint64_t pool_new_id() noexcept {
  return pool_next_id.fetch_add(1, std::memory_order_relaxed);
}

struct pool_shared;

// One thread's cache for one pool: a stack of free slots. alignas(64): two threads' caches never
// share a cache line.
struct alignas(64) pool_thread_cache {
  static constexpr std::uint32_t max_capacity = 256;

  std::uint64_t id = 0;  // the pool's id when the cache was made; never changes
  pool_shared* shared = nullptr;
  pool_thread_cache* thread_next = nullptr;  // the thread's caches
  pool_thread_cache* shared_prev = nullptr;  // the pool's caches (guarded by its mutex)
  pool_thread_cache* shared_next = nullptr;
  std::atomic<std::uint32_t> count{0};  // written by the owner thread only; stats() reads it
  std::uint32_t capacity = max_capacity;
  void* slots[max_capacity];
};

struct pool_shared {
  pool_shared(std::size_t slot_size, std::size_t slot_align, std::size_t slots_per_slab,
              std::size_t keep_empty_slabs, std::pmr::memory_resource* upstream)
      : core(slot_size, slot_align, slots_per_slab, keep_empty_slabs, upstream) {}

  std::mutex mutex;
  pool_core core;
  std::uint64_t id = pool_new_id();     // current id (guarded by mutex)
  pool_thread_cache* caches = nullptr;  // registered caches (guarded by mutex)
  std::size_t refs = 1;                 // guarded by mutex
  bool alive = true;                    // false once the pool is destroyed (guarded by mutex)
};

// Puts n slots taken from a thread cache back in the central pool. The caller holds s->mutex.
inline void pool_give_back(pool_shared* s, void* const* slots, std::uint32_t n) noexcept {
  for (std::uint32_t i = 0; i < n; ++i) {
    s->core.set_debug_mark(slots[i], false);
    s->core.free_slot(slots[i]);
  }
}

struct pool_tls_entry {
  std::uint64_t id;
  pool_thread_cache* cache;
};

inline constexpr std::size_t pool_tls_table_size = 8;

struct pool_tls {
  pool_tls_entry table[pool_tls_table_size];
  pool_thread_cache* caches;  // all of this thread's caches
  bool owner_armed;
  bool exiting;  // the thread is exiting: pools bypass the caches
};

inline thread_local pool_tls pool_tls_state{};

inline void pool_forget_cache(pool_thread_cache* c) noexcept {
  for (pool_tls_entry& e : pool_tls_state.table) {
    if (e.cache == c) e = pool_tls_entry{0, nullptr};
  }
}

// Unregisters c from its pool, giving its slots back first when the pool is alive and c is
// current; deletes c. `flush`: false to only check staleness (then c is kept if still current).
// Returns true when c was deleted.
inline bool pool_retire_cache(pool_thread_cache* c, bool flush) noexcept {
  pool_shared* s = c->shared;
  bool last = false;
  {
    std::lock_guard<std::mutex> lock(s->mutex);
    const bool current = s->alive && c->id == s->id;
    if (current && !flush) return false;
    if (current) pool_give_back(s, c->slots, c->count.load(std::memory_order_relaxed));
    if (c->shared_prev != nullptr) {
      c->shared_prev->shared_next = c->shared_next;
    } else {
      s->caches = c->shared_next;
    }
    if (c->shared_next != nullptr) c->shared_next->shared_prev = c->shared_prev;
    last = --s->refs == 0;
  }
  if (last) delete s;
  pool_forget_cache(c);
  delete c;
  return true;
}

// Gives the slots of this thread's cache for pool `id` back to the central pool (keeps the
// cache itself). Does nothing when the thread has no such cache.
inline void pool_flush_cache(pool_shared* s, std::uint64_t id) noexcept {
  pool_thread_cache* c = pool_tls_state.caches;
  while (c != nullptr && c->id != id) c = c->thread_next;
  if (c == nullptr) return;
  std::lock_guard<std::mutex> lock(s->mutex);
  if (!s->alive || c->id != s->id) return;
  pool_give_back(s, c->slots, c->count.load(std::memory_order_relaxed));
  c->count.store(0, std::memory_order_relaxed);
}

// Frees this thread's caches whose pool is gone or was released.
inline void pool_prune_caches(const pool_thread_cache* keep) noexcept {
  pool_thread_cache** link = &pool_tls_state.caches;
  while (*link != nullptr) {
    pool_thread_cache* c = *link;
    pool_thread_cache* next = c->thread_next;
    if (c != keep && pool_retire_cache(c, false)) {
      *link = next;
    } else {
      link = &c->thread_next;
    }
  }
}

// Its destructor runs at thread exit (and for the main thread, at exit() before the static
// destructors): every cache goes back to its pool.
struct pool_tls_owner {
  bool armed = false;
  pool_tls_owner() = default;
  pool_tls_owner(const pool_tls_owner&) = delete;
  pool_tls_owner& operator=(const pool_tls_owner&) = delete;
  ~pool_tls_owner() {
    pool_tls& t = pool_tls_state;
    t.exiting = true;
    for (pool_tls_entry& e : t.table) e = pool_tls_entry{0, nullptr};
    while (t.caches != nullptr) {
      pool_thread_cache* c = t.caches;
      t.caches = c->thread_next;
      pool_retire_cache(c, true);
    }
  }
};

inline thread_local pool_tls_owner pool_tls_owner_state;

// This thread's cache for the pool (made on first use), or null when the thread is exiting or
// out of memory: the caller then goes to the central pool.
LOWALLOC_NOINLINE inline pool_thread_cache* pool_cache_for(pool_shared* s, std::uint64_t id,
                                                           std::uint32_t capacity) noexcept {
  pool_tls& t = pool_tls_state;
  if (t.exiting) return nullptr;
  pool_thread_cache* c = t.caches;
  while (c != nullptr && c->id != id) c = c->thread_next;
  if (c == nullptr) {
    c = new (std::nothrow) pool_thread_cache;
    if (c == nullptr) return nullptr;
    if (!t.owner_armed) {
      pool_tls_owner_state.armed = true;  // registers its destructor for this thread
      t.owner_armed = true;
    }
    c->id = id;
    c->shared = s;
    c->capacity = capacity;
    {
      std::lock_guard<std::mutex> lock(s->mutex);
      c->shared_next = s->caches;
      if (s->caches != nullptr) s->caches->shared_prev = c;
      s->caches = c;
      ++s->refs;
    }
    c->thread_next = t.caches;
    t.caches = c;
    pool_prune_caches(c);
  }
  t.table[id % pool_tls_table_size] = pool_tls_entry{id, c};
  return c;
}

}  // namespace detail
}  // namespace lowalloc

#endif  // LOWALLOC_DETAIL_POOL_SYNC_HPP
