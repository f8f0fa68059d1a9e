// Stack capture for the recorder: return addresses from .eh_frame CFI, reduced to a tiny per-PC
// rule cached per thread. Safe inside malloc: no allocation, no libstdc++, every stack read is
// bounds-checked against [sp, stack_hi).
#ifndef LOWALLOC_SRC_TRACE_UNWIND_HPP
#define LOWALLOC_SRC_TRACE_UNWIND_HPP

#include <cstddef>
#include <cstdint>

namespace lowalloc::trace {

struct unwind_cache;  // opaque, per thread

// Bytes the caller must provide for one cache (about 860 KiB: 256 KiB of rules, the rest the
// walks remembered).
std::size_t unwind_cache_bytes() noexcept;
// memory: unwind_cache_bytes() zero-filled bytes, 64-byte aligned (from mmap).
unwind_cache* unwind_cache_init(void* memory) noexcept;
// The bytes at the start of a cache that hold its rules, a multiple of 4096: what walks derived
// from the modules' unwind tables, as good in a fork child, which has the same modules. The rest
// of the cache (the walks remembered) may read as zero there: zero is no walk remembered.
std::size_t unwind_cache_rule_bytes() noexcept;
// Forgets every rule (after dlclose).
void unwind_cache_clear(unwind_cache* cache) noexcept;

// Stores up to `max` return addresses of the calling thread's stack, innermost first, and returns
// how many. Frames whose return address lies in [skip_lo, skip_hi) are skipped while they are at
// the top of the stack; the first stored address is the return address into the first frame
// outside that range. stack_hi: highest address of the thread's stack (exclusive). Stops at the
// outermost frame (return address 0 / no rule / CFA out of bounds).
__attribute__((noinline)) std::size_t unwind_capture(unwind_cache* cache, std::uintptr_t* out,
                                                     std::size_t max, std::uintptr_t skip_lo,
                                                     std::uintptr_t skip_hi,
                                                     std::uintptr_t stack_hi) noexcept;

// The same, starting from a known frame instead of the caller's: `pc` is a return address, `sp`
// the stack pointer after that return and `rbp` the register's value there. The recorder's hooks
// pass their own return address and frame, which saves walking through the recorder's frames.
// Frames of the thread's previous walk from here that provably did not change are reused rather
// than stepped again, and so is the hash of their part of the stack; so is a whole recent walk from
// the same frame whose every read is unchanged. *hash is stack_hash of out[0..n); *same_as_last
// says the whole stack is the previous walk's (with the same `max`, since the last
// unwind_cache_clear). *tag is a word the caller may keep with the stack while it is remembered:
// 0 when the walk is new, what the caller stored when the same walk is found again, and nullptr
// when it is not remembered. *out points into the cache (no copy): the addresses stay there until
// the next call with the same cache.
std::size_t unwind_capture_from(unwind_cache* cache, const std::uintptr_t** out, std::size_t max,
                                std::uintptr_t pc, std::uintptr_t sp, std::uintptr_t rbp,
                                std::uintptr_t stack_hi, std::uint64_t* hash, bool* same_as_last,
                                std::uint64_t** tag) noexcept;

// The walks remembered from a leaf frame (the hook's caller: its pc and the sp after it returns)
// are looked up in one of 2^unwind_walk_set_bits sets of unwind_walk_set_bytes each, by a key of
// that frame; the set's first line is the first the lookup reads. A hook may start fetching it
// before it calls the allocator (unwind_walk_set), whose work then covers the fetch.
inline constexpr unsigned unwind_walk_set_bits = 7;
inline constexpr std::size_t unwind_walk_set_bytes = 576;
inline std::uint64_t unwind_leaf_key(std::uintptr_t pc, std::uintptr_t sp) noexcept {
  return (pc ^ (sp << 12) ^ (sp >> 4)) * 0x9E3779B97F4A7C15u;
}
/// The first of the cache's sets of remembered walks.
const unsigned char* unwind_walk_sets(const unwind_cache* cache) noexcept;
/// The set where the walks from leaf frame (pc, sp) are looked up, in the sets at `sets`.
inline const unsigned char* unwind_walk_set(const unsigned char* sets, std::uintptr_t pc,
                                            std::uintptr_t sp) noexcept {
  return sets + (unwind_leaf_key(pc, sp) >> (64 - unwind_walk_set_bits)) * unwind_walk_set_bytes;
}

// The hash of a stack, built from its outermost frame in, so that stacks sharing their outer
// frames share that part of the work: h = stack_hash(h, ip) for ip = out[n - 1] .. out[0], from
// stack_hash_seed.
inline constexpr std::uint64_t stack_hash_seed = 0x9E3779B97F4A7C15u;
inline std::uint64_t stack_hash(std::uint64_t h, std::uintptr_t ip) noexcept {
  h = (h ^ ip) * 0xff51afd7ed558ccdu;
  return h ^ (h >> 32);
}

// The [lo, hi) range of the executable PT_LOAD segments of the ELF object containing `address`;
// false if none.
bool module_text_range(const void* address, std::uintptr_t* lo, std::uintptr_t* hi) noexcept;

// Drops the global module table (text ranges and .eh_frame_hdr pointers). Call after dlclose,
// together with unwind_cache_clear on every thread's cache.
void unwind_modules_invalidate() noexcept;

}  // namespace lowalloc::trace

#endif  // LOWALLOC_SRC_TRACE_UNWIND_HPP
