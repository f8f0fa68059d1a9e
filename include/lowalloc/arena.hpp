// lowalloc/arena.hpp — a monotonic arena: N bytes inline, then chunks from an upstream resource.
//
// `lowalloc::arena<N>` hands out memory by bumping a pointer, first through an N-byte buffer
// inside the object itself (on the stack when the arena is a local), then through chunks it takes
// from an upstream `std::pmr::memory_resource`, each twice the size of the one before. Nothing is
// given back one block at a time: deallocation does nothing, `release()` returns every chunk to
// upstream and `reset()` keeps the largest one for the next round. It replaces
// std::pmr::monotonic_buffer_resource (with a non-virtual fast path and statistics) and the
// hand-written "bump allocator for this request" of many servers and compilers.
//
// One arena, three faces:
//  - its own inline `allocate(bytes, align)`: compare, add, done;
//  - `lowalloc::arena_allocator<T>` for standard containers, which calls that inline function
//    (no virtual call);
//  - `std::pmr::memory_resource` (arena_base derives from it) for std::pmr containers.
//
//   lowalloc::arena<4096> a;                                   // 4 KiB on the stack
//   std::vector<int, lowalloc::arena_allocator<int>> v(a);     // no heap allocation...
//   std::pmr::map<int, int> m(&a);                             // ...while 4 KiB suffice
//   for (int i = 0; i < 100; ++i) { v.push_back(i); m.try_emplace(i, i); }
//   a.stats().bytes_allocated;                                 // what the containers took
//   // a goes out of scope: every chunk back upstream at once
//
// Functions take `lowalloc::arena_base&` to accept an arena of any N.
//
// Pitfalls (see docs/memory.md):
//  - Nothing is reused until release()/reset(): a growing std::vector leaves its old buffers
//    behind, and `std::map::emplace` of an existing key builds and drops a node (use try_emplace).
//  - Copying a std::pmr container does not copy its resource: the copy uses the default resource
//    (`std::pmr::vector<int> copy(v, &arena)` keeps it on the arena). Copies of containers with
//    arena_allocator stay on the arena.
//  - Not thread-safe; non-copyable and non-movable (containers point into it).
//
// Under AddressSanitizer the memory not handed out yet and the memory taken back by release() or
// reset() is poisoned, with a poisoned redzone after every block, so stray reads are reported
// where they happen. Build with -DLOWALLOC_ARENA_USE_MALLOC=1 to send every allocation to the
// global operator new instead (freed on release, reset or destruction), for valgrind.
#ifndef LOWALLOC_ARENA_HPP
#define LOWALLOC_ARENA_HPP

#include <lowalloc/detail/arena_poison.hpp>
#include <lowalloc/detail/config.hpp>
#include <lowalloc/detail/forwarding_resource.hpp>
#include <lowalloc/detail/gdb_scripts.hpp>
#include <lowalloc/detail/throw.hpp>

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <memory_resource>
#include <new>
#include <type_traits>

namespace lowalloc {

/// What an arena holds now. Cheap to take (a few loads).
struct arena_stats {
  /// Bytes handed out: the sum of the requests, each rounded up to alignof(std::max_align_t)
  /// (every block starts on that boundary); alignment padding beyond it is not counted.
  std::size_t bytes_allocated = 0;
  std::size_t bytes_upstream = 0;  ///< bytes taken from the upstream resource (chunks), now held
  std::size_t chunks = 0;          ///< upstream chunks now held
};

namespace detail {

// Every region the fast path bumps through ends on this boundary, so rounding up to any smaller
// alignment never passes the end: one comparison decides.
inline constexpr std::size_t arena_granule = alignof(std::max_align_t);

inline constexpr std::size_t arena_round_up(std::size_t n, std::size_t align) noexcept {
  return (n + align - 1) & ~(align - 1);
}

// What one request of n bytes takes from the region: n rounded up to the granule. Callers check
// n <= (a multiple of the granule) first, so this cannot overflow.
inline constexpr std::size_t arena_step(std::size_t n) noexcept {
  return arena_round_up(n, arena_granule);
}

inline constexpr bool arena_is_pow2(std::size_t x) noexcept { return x != 0 && (x & (x - 1)) == 0; }

// Bytes to add to p to reach a multiple of align (a power of two).
inline std::size_t arena_pad(const void* p, std::size_t align) noexcept {
  return (std::size_t{0} - static_cast<std::size_t>(reinterpret_cast<std::uintptr_t>(p))) &
         (align - 1);
}

// At the start of every upstream chunk (and of every heap block with LOWALLOC_ARENA_USE_MALLOC).
struct arena_chunk {
  arena_chunk* next;
  std::size_t size;   // bytes taken from upstream, header included
  std::size_t align;  // alignment asked of upstream
};
inline constexpr std::size_t arena_header = arena_round_up(sizeof(arena_chunk), arena_granule);

inline constexpr std::size_t arena_min_first_chunk = 1024;

// The inline buffer: N rounded up to the granule; nothing at all for N == 0.
template <std::size_t N>
struct arena_storage {
  static constexpr std::size_t capacity = arena_round_up(N, arena_granule);
  alignas(arena_granule) unsigned char inline_bytes_[capacity];
  unsigned char* inline_data() noexcept { return inline_bytes_; }
};
template <>
struct arena_storage<0> {
  static constexpr std::size_t capacity = 0;
  unsigned char* inline_data() noexcept { return nullptr; }
};

}  // namespace detail

/// The part of every arena<N> that does not depend on N: the whole arena interface. Take it by
/// reference to accept arenas of any inline size. It is a std::pmr::memory_resource.
///
/// Single-threaded. Non-copyable, non-movable.
class arena_base : public detail::forwarding_resource<arena_base> {
 public:
  arena_base(const arena_base&) = delete;
  arena_base& operator=(const arena_base&) = delete;

  /// Gives every chunk back upstream.
  ~arena_base() override { destroy(); }

  /// Returns `bytes` bytes aligned to `align` (a power of two; any value is honoured). The fast
  /// path is inline and non-virtual; it hides memory_resource::allocate on purpose (calls through
  /// a memory_resource& or pointer reach the same code through do_allocate).
  ///
  /// Throws std::bad_alloc when `bytes` plus the alignment overflows std::size_t, and whatever
  /// upstream throws; the arena is then unchanged (strong guarantee). Amortised O(1).
  [[nodiscard]] LOWALLOC_ALWAYS_INLINE void* allocate(
      std::size_t bytes, std::size_t align = alignof(std::max_align_t)) {
    LOWALLOC_ASSERT(detail::arena_is_pow2(align));
#if LOWALLOC_ARENA_USE_MALLOC
    return allocate_heap(bytes, align);
#else
    if (LOWALLOC_LIKELY(align <= detail::arena_granule)) {
      // cur_ and end_ are granule-aligned: the block starts at cur_, and since avail is a multiple
      // of the granule, bytes <= avail means the rounded size fits too (and cannot overflow).
      unsigned char* const p = cur_;
      const std::size_t avail = static_cast<std::size_t>(end_ - p);
#if LOWALLOC_ARENA_POISON
      if (bytes <= avail && avail - detail::arena_step(bytes) >= detail::arena_redzone) {
        cur_ = p + detail::arena_step(bytes) + detail::arena_redzone;
        used_ += detail::arena_step(bytes);
        detail::arena_unpoison(p, bytes);
        return p;
      }
#else
      if (LOWALLOC_LIKELY(bytes <= avail)) {
        cur_ = p + detail::arena_step(bytes);
        return p;
      }
#endif
    }
    return allocate_slow(bytes, align);
#endif
  }

  /// Does nothing: the memory comes back on release(), reset() or destruction. Under ASan the
  /// block is poisoned, so a use after deallocate is reported.
  void deallocate([[maybe_unused]] void* p, [[maybe_unused]] std::size_t bytes,
                  [[maybe_unused]] std::size_t align = alignof(std::max_align_t)) noexcept {
#if LOWALLOC_ARENA_POISON && !LOWALLOC_ARENA_USE_MALLOC
    if (p != nullptr) detail::arena_poison(p, bytes);
#endif
  }

  /// Gives every chunk back upstream and starts again from the inline buffer; the next chunk is
  /// as small as the first. Every pointer handed out becomes invalid. O(chunks).
  void release() noexcept {
    free_list(chunks_);
    free_list(spare_);
    chunks_ = spare_ = nullptr;
    bytes_upstream_ = 0;
    chunk_count_ = 0;
    next_chunk_size_ = first_chunk_size_;
    restart();
  }

  /// Like release(), but keeps the largest chunk, which is reused (before asking upstream) once
  /// the inline buffer is used up. Chunk sizes keep growing from where they were. Every pointer
  /// handed out becomes invalid. O(chunks). With LOWALLOC_ARENA_USE_MALLOC, the same as release().
  void reset() noexcept {
#if LOWALLOC_ARENA_USE_MALLOC
    release();
#else
    detail::arena_chunk* keep = spare_;
    for (detail::arena_chunk* c = chunks_; c != nullptr; c = c->next) {
      if (keep == nullptr || c->size > keep->size) keep = c;
    }
    for (detail::arena_chunk* c = chunks_; c != nullptr;) {
      detail::arena_chunk* next = c->next;
      if (c != keep) free_chunk(c);
      c = next;
    }
    if (spare_ != nullptr && spare_ != keep) free_chunk(spare_);
    chunks_ = nullptr;
    spare_ = keep;
    bytes_upstream_ = 0;
    chunk_count_ = 0;
    if (keep != nullptr) {
      keep->next = nullptr;
      detail::arena_poison(chunk_data(keep), keep->size - detail::arena_header);
      bytes_upstream_ = keep->size;
      chunk_count_ = 1;
    }
    restart();
#endif
  }

  /// Bytes handed out, bytes held from upstream and chunks held.
  arena_stats stats() const noexcept { return {bytes_allocated(), bytes_upstream_, chunk_count_}; }

  /// Where the chunks come from.
  std::pmr::memory_resource* upstream() const noexcept { return upstream_; }

  /// (extra) Bytes left in the current region: allocations of up to this many bytes (at the
  /// granule alignment, minus the ASan redzone) need no chunk.
  std::size_t remaining() const noexcept { return static_cast<std::size_t>(end_ - cur_); }

  /// (extra) Size of the inline buffer (N rounded up to alignof(std::max_align_t)).
  std::size_t inline_capacity() const noexcept {
    return static_cast<std::size_t>(inline_end_ - inline_begin_);
  }

  /// (extra) Size of the next chunk asked of upstream for an ordinary request.
  std::size_t next_chunk_size() const noexcept { return next_chunk_size_; }

  /// (extra) True when p points into the inline buffer or a chunk the arena holds. O(chunks).
  bool owns(const void* p) const noexcept {
    const auto* b = static_cast<const unsigned char*>(p);
    if (in_range(b, inline_begin_, inline_end_)) return true;
    for (const detail::arena_chunk* list : {chunks_, spare_}) {
      for (const detail::arena_chunk* c = list; c != nullptr; c = c->next) {
        const auto* base = static_cast<const unsigned char*>(static_cast<const void*>(c));
        if (in_range(b, base + detail::arena_header, base + c->size)) return true;
      }
    }
    return false;
  }

 protected:
  /// For arena<N>: the inline buffer (nullptr, 0 for none), the first chunk's size, upstream.
  arena_base(unsigned char* buffer, std::size_t size, std::size_t first_chunk_size,
             std::pmr::memory_resource* upstream) noexcept
      : upstream_(upstream), first_chunk_size_(first_chunk_size) {
    LOWALLOC_ASSERT(upstream != nullptr);
    LOWALLOC_ASSERT(size % detail::arena_granule == 0);
    if (buffer == nullptr) {
      // No inline buffer: an empty region at a granule-aligned address inside this object, so
      // that zero-byte requests still get a non-null pointer.
      buffer =
          reinterpret_cast<unsigned char*>(this) + detail::arena_pad(this, detail::arena_granule);
      size = 0;
    }
    LOWALLOC_ASSERT(detail::arena_pad(buffer, detail::arena_granule) == 0);
    inline_begin_ = buffer;
    inline_end_ = buffer + size;
    next_chunk_size_ = first_chunk_size_;
    restart();
  }

 private:
  static bool in_range(const unsigned char* p, const unsigned char* b,
                       const unsigned char* e) noexcept {
    const auto x = reinterpret_cast<std::uintptr_t>(p);
    return x >= reinterpret_cast<std::uintptr_t>(b) && x < reinterpret_cast<std::uintptr_t>(e);
  }

  static unsigned char* chunk_data(detail::arena_chunk* c) noexcept {
    return static_cast<unsigned char*>(static_cast<void*>(c)) + detail::arena_header;
  }

  // Back to the (poisoned) inline buffer with nothing handed out.
  void restart() noexcept {
    cur_ = inline_begin_;
    end_ = inline_end_;
    region_ = inline_begin_;
    used_ = 0;
    detail::arena_poison(inline_begin_, inline_capacity());
  }

  void free_chunk(detail::arena_chunk* c) noexcept {
#if LOWALLOC_ARENA_USE_MALLOC
    ::operator delete (static_cast<void*>(c), std::align_val_t{c->align});
#else
    const std::size_t size = c->size;
    const std::size_t align = c->align;
    detail::arena_unpoison(c, size);
    upstream_->deallocate(c, size, align);
#endif
  }

  void free_list(detail::arena_chunk* c) noexcept {
    while (c != nullptr) {
      detail::arena_chunk* next = c->next;
      free_chunk(c);
      c = next;
    }
  }

  void destroy() noexcept {
    release();
    // The buffer may be reused as other memory (a stack frame, a heap object) after us.
    detail::arena_unpoison(inline_begin_, inline_capacity());
  }

#if LOWALLOC_ARENA_USE_MALLOC
  // One heap block per request: [header, padding to align][bytes].
  LOWALLOC_NOINLINE void* allocate_heap(std::size_t bytes, std::size_t align) {
    const std::size_t a = align > detail::arena_granule ? align : detail::arena_granule;
    const std::size_t head = a > detail::arena_header ? a : detail::arena_header;
    if (bytes > std::numeric_limits<std::size_t>::max() - head) detail::throw_bad_alloc();
    const std::size_t size = head + bytes;
    void* mem = ::operator new (size, std::align_val_t{a}, std::nothrow);
    if (mem == nullptr) detail::throw_bad_alloc();
    chunks_ = ::new (mem) detail::arena_chunk{chunks_, size, a};
    bytes_upstream_ += size;
    ++chunk_count_;
    used_ += detail::arena_step(bytes);
    return static_cast<unsigned char*>(mem) + head;
  }
#endif

  // Bytes handed out. Without ASan the fast path only moves cur_: what the current region handed
  // out is cur_ - region_, added to used_ when the arena leaves the region. Under ASan every
  // block is followed by a redzone, so used_ counts each block as it goes.
  std::size_t bytes_allocated() const noexcept {
#if LOWALLOC_ARENA_POISON || LOWALLOC_ARENA_USE_MALLOC
    return used_;
#else
    return used_ + static_cast<std::size_t>(cur_ - region_);
#endif
  }

  // The current region is too small or the alignment is large: pad in the current region if it
  // fits, else take the spare chunk or a new one from upstream.
  LOWALLOC_NOINLINE void* allocate_slow(std::size_t bytes, std::size_t align) {
    constexpr std::size_t max = std::numeric_limits<std::size_t>::max();
    const std::size_t avail = static_cast<std::size_t>(end_ - cur_);
    // cur_, end_ and (for align > granule) pad are multiples of the granule: once bytes fits,
    // its rounded size fits too.
    const std::size_t pad = detail::arena_pad(cur_, align);
    if (pad <= avail && bytes <= avail - pad &&
        avail - pad - detail::arena_step(bytes) >= detail::arena_redzone) {
      unsigned char* const p = cur_ + pad;
#if !LOWALLOC_ARENA_POISON
      used_ -= pad;  // the padding stays in cur_ - region_ but was not handed out
#endif
      return hand_out(p, bytes);
    }

    // A chunk's data starts granule-aligned after the header: a larger alignment needs up to
    // align - granule bytes of padding.
    const std::size_t extra = detail::arena_header + detail::arena_redzone +
                              (align > detail::arena_granule ? align - detail::arena_granule : 0);
    if (extra > max - (detail::arena_granule - 1) ||
        bytes > max - (detail::arena_granule - 1) - extra) {
      detail::throw_bad_alloc();
    }
    const std::size_t needed = detail::arena_round_up(bytes + extra, detail::arena_granule);

    detail::arena_chunk* c;
    if (spare_ != nullptr && spare_->size >= needed) {
      c = spare_;
      spare_ = nullptr;
    } else {
      const bool ordinary = needed <= next_chunk_size_;
      const std::size_t size = ordinary ? next_chunk_size_ : needed;
      void* mem = upstream_->allocate(size, detail::arena_granule);  // may throw: nothing changed
      LOWALLOC_ASSERT(detail::arena_pad(mem, detail::arena_granule) == 0);
      c = ::new (mem) detail::arena_chunk{nullptr, size, detail::arena_granule};
      detail::arena_poison(chunk_data(c), size - detail::arena_header);
      bytes_upstream_ += size;
      ++chunk_count_;
      if (ordinary && next_chunk_size_ <= max / 2) next_chunk_size_ *= 2;
    }
    c->next = chunks_;
    chunks_ = c;

    unsigned char* const data = chunk_data(c);
    unsigned char* const chunk_end = static_cast<unsigned char*>(static_cast<void*>(c)) + c->size;
    unsigned char* const p = data + detail::arena_pad(data, align);
    // Bump through whichever region has more room left after this request.
    const std::size_t left_new =
        static_cast<std::size_t>(chunk_end - (p + detail::arena_step(bytes)));
    if (left_new >= avail) {
#if !LOWALLOC_ARENA_POISON
      used_ += static_cast<std::size_t>(cur_ - region_);  // leave the current region
      region_ = p;
#endif
      end_ = chunk_end;
      return hand_out(p, bytes);
    }
    // The block has the chunk to itself; the arena goes on in the current region.
    used_ += detail::arena_step(bytes);
    detail::arena_unpoison(p, bytes);
    return p;
  }

  // [p, p + bytes) in the current region is handed out; the region goes on after it.
  void* hand_out(unsigned char* p, std::size_t bytes) noexcept {
    cur_ = p + detail::arena_step(bytes) + detail::arena_redzone;
#if LOWALLOC_ARENA_POISON
    used_ += detail::arena_step(bytes);
#endif
    detail::arena_unpoison(p, bytes);
    return p;
  }

  // The fast path's state first. cur_ and end_ are always multiples of the granule.
  unsigned char* cur_ = nullptr;
  unsigned char* end_ = nullptr;
  unsigned char* region_ = nullptr;        // where the current region started handing out
  std::size_t used_ = 0;                   // see bytes_allocated()
  detail::arena_chunk* chunks_ = nullptr;  // chunks in use (heap blocks with USE_MALLOC)
  detail::arena_chunk* spare_ = nullptr;   // the chunk reset() kept, until it is reused
  std::pmr::memory_resource* upstream_;
  std::size_t bytes_upstream_ = 0;
  std::size_t chunk_count_ = 0;
  std::size_t next_chunk_size_ = 0;
  std::size_t first_chunk_size_;
  unsigned char* inline_begin_ = nullptr;
  unsigned char* inline_end_ = nullptr;
};

/// A monotonic arena with N bytes inline (rounded up to alignof(std::max_align_t)), then chunks
/// from upstream: the first of max(1 KiB, 2 x the inline size) bytes, each next one twice as
/// large; a request larger than the next chunk gets a chunk of its own. Non-copyable,
/// non-movable: containers on it point into it.
// The storage base is constructed first, so it exists when arena_base records its address.
template <std::size_t N>
class arena : private detail::arena_storage<N>, public arena_base {
  using storage = detail::arena_storage<N>;

 public:
  /// Size of the first chunk taken from upstream unless the constructor says otherwise.
  static constexpr std::size_t default_first_chunk_size =
      2 * storage::capacity > detail::arena_min_first_chunk ? 2 * storage::capacity
                                                            : detail::arena_min_first_chunk;

  /// An arena over std::pmr::get_default_resource(). Allocates nothing.
  arena() noexcept : arena(std::pmr::get_default_resource()) {}

  /// An arena over `upstream` (not null; it must outlive the arena). Allocates nothing.
  explicit arena(std::pmr::memory_resource* upstream) noexcept
      : arena(upstream, default_first_chunk_size) {}

  /// (extra) The same, with the size of the first chunk (rounded up to a multiple of
  /// alignof(std::max_align_t), at least 64 bytes).
  arena(std::pmr::memory_resource* upstream, std::size_t first_chunk_size) noexcept
      : arena_base(storage::inline_data(), storage::capacity,
                   detail::arena_round_up(first_chunk_size < 64 ? 64 : first_chunk_size,
                                          detail::arena_granule),
                   upstream) {}
};

/// A standard allocator over an arena: allocate() is the arena's inline fast path (no virtual
/// call), deallocate() does nothing. Two allocators are equal when they use the same arena.
/// Unlike std::pmr::polymorphic_allocator, a copied container keeps the arena.
template <class T>
class arena_allocator {
 public:
  using value_type = T;

  /// Implicit on purpose: `std::vector<int, lowalloc::arena_allocator<int>> v(arena);`.
  arena_allocator(arena_base& a) noexcept : arena_(&a) {}  // NOLINT(google-explicit-constructor)

  template <class U>
  arena_allocator(const arena_allocator<U>& other) noexcept  // NOLINT(google-explicit-constructor)
      : arena_(&other.arena()) {}

  /// Memory for n objects of T from the arena. Throws std::bad_alloc when n * sizeof(T)
  /// overflows, or as arena_base::allocate.
  [[nodiscard]] T* allocate(std::size_t n) {
    if (n > std::numeric_limits<std::size_t>::max() / sizeof(T)) detail::throw_bad_alloc();
    return static_cast<T*>(arena_->allocate(n * sizeof(T), alignof(T)));
  }

  /// Does nothing (poisons the block under ASan).
  void deallocate(T* p, std::size_t n) noexcept {
    arena_->deallocate(p, n * sizeof(T), alignof(T));
  }

  /// The arena this allocator uses.
  arena_base& arena() const noexcept { return *arena_; }

 private:
  arena_base* arena_;
};

/// True when both use the same arena.
template <class T, class U>
bool operator==(const arena_allocator<T>& a, const arena_allocator<U>& b) noexcept {
  return &a.arena() == &b.arena();
}
template <class T, class U>
bool operator!=(const arena_allocator<T>& a, const arena_allocator<U>& b) noexcept {
  return !(a == b);
}

}  // namespace lowalloc

#endif  // LOWALLOC_ARENA_HPP
