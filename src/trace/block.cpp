// Encoding a thread's events into its block (block.hpp).
#include "trace/block.hpp"

#include "trace/config.hpp"
#include "trace/stack_table.hpp"
#include "trace/unwind.hpp"

#include <sys/syscall.h>
#include <unistd.h>

#include <cstring>

namespace lowalloc::trace {

namespace fmt = lowalloc::trace_format;

std::atomic<std::uint32_t> free_epochs[free_epoch_buckets];

namespace {

// A stack the thread's table did not have: its id (stack_table.hpp, add_stack), and its STACK
// record when the thread must write one, or STACK_SHARED when it shares two or more outer frames
// with the stream's previous one (the frames of a deep stack are then written once, not once per
// stack). The record and the event that uses it must land in the same block or the record first:
// reserve room for both. `stamp`: the event's.
__attribute__((noinline)) std::uint32_t new_stack(thread_state* t, const std::uintptr_t* ips,
                                                  std::size_t n, std::uint64_t hash,
                                                  std::size_t slot, std::uint64_t stamp) {
  stack_table& s = t->stacks;
  const std::size_t shared = common_outer_frames(ips, n, s.written_ips, s.written_n);
  const new_stack_id got =
      add_stack(s, ips, n, hash, slot, t->generation, stamp, t->clock,
                many_threads.load(std::memory_order_relaxed), s.written, shared);
  if (got.id == 0 || !got.define) return got.id;
  unsigned char* p = ensure_space(t, 48 + n * 10 + 64);
  p = shared >= 2 ? fmt::encode_stack_shared(p, got.id, ips, n, shared)
                  : fmt::encode_stack(p, got.id, ips, n);
  commit(t, p);
  s.written = got.frames;
  std::memcpy(s.written_ips, ips, n * sizeof *ips);
  s.written_n = n;
  // The record's time in the merge is the stream's clock now.
  stack_defined(s, hash, got.id, t->clock);
  return got.id;
}

// The thread's id for the stack ips[0..n) of hash `hash`, for an event stamped `stamp`; 0: no
// stack.
inline std::uint32_t stack_id(thread_state* t, const std::uintptr_t* ips, std::size_t n,
                              std::uint64_t hash, std::uint64_t stamp) {
  if (n == 0) return 0;
  std::size_t slot = 0;
  std::uint32_t id = find_stack(t->stacks, ips, n, hash, slot);
  if (LOWALLOC_LIKELY(id != 0)) return id;
  id = new_stack(t, ips, n, hash, slot, stamp);
  if (id == 0) t->stacks.last_n = 0;  // no id: the last one given is not this stack's
  return id;
}

}  // namespace

void begin_block(thread_state* t) {
  std::uint64_t ticks = stamp_now();
  if (ticks < t->clock) ticks = t->clock;
  commit(t, fmt::encode(t->buffer, fmt::time_record{ticks, monotonic_ns()}));
  t->clock = ticks;
  t->block_start = ticks;
  t->encoding = fmt::block_encoding{};
  t->limit = buffer_bytes;
  t->block_events = 0;
  t->last_ticked = 0;
  t->tick_count = 0;
  // (write_addresses empties the table as it reads it; a fork child's holds the parent's block.)
  if (t->local_count != 0) std::memset(t->local, 0, local_capacity * sizeof(local_entry));
  t->local_count = 0;
  t->evicted_count = 0;
  t->ordinal_base += t->alloc_ordinal;
  t->alloc_ordinal = 0;
  t->order_base = order_now();
  t->free_orders_pos = 0;
  t->free_count = 0;
  t->free_order_deltas = fmt::order_list_encoder{};
}

namespace {

// Sorts entries[0, n) by ordinal, least significant byte first, through `spare` (room for n).
// Linear: a block's table holds up to 2,048 entries in hash order, and a comparison sort of them
// was a tenth of the recorder's time on a program that keeps most of its blocks.
local_entry* sort_by_ordinal(local_entry* entries, local_entry* spare, std::size_t n,
                             std::uint32_t ordinal_end) {
  for (unsigned shift = 0; shift < 32 && (ordinal_end >> shift) != 0; shift += 8) {
    std::size_t start[257] = {};
    for (std::size_t i = 0; i < n; ++i) ++start[((entries[i].ordinal() >> shift) & 0xff) + 1];
    for (std::size_t b = 1; b <= 256; ++b) start[b] += start[b - 1];
    for (std::size_t i = 0; i < n; ++i)
      spare[start[(entries[i].ordinal() >> shift) & 0xff]++] = entries[i];
    local_entry* sorted = spare;
    spare = entries;
    entries = sorted;
  }
  return entries;
}

// ORDERS, when the block has FREEs or lists allocations (`listed`, n of them, as ADDRESSES did).
void write_orders(thread_state* t, const local_entry* listed, std::size_t n) {
  if (t->free_count == 0 && n == 0) return;
  unsigned char* p = fmt::encode(t->buffer + t->pos, fmt::orders_record{t->free_count, n});
  std::memcpy(p, t->free_orders, t->free_orders_pos);
  p += t->free_orders_pos;
  fmt::order_list_encoder orders;
  for (std::size_t i = 0; i < n; ++i) p = orders.encode(p, t->order_base + listed[i].order());
  commit(t, p);
}

// The block's unfreed allocations go to the kept table, in increasing ordinal (of two at one
// address, the later stays). KEPT lists the allocations that replaced a kept one.
void write_kept(thread_state* t, local_entry* sorted, std::size_t n) {
  std::size_t drops = 0;
  // Each entry's slot fetched 8 entries ahead: their misses overlap instead of following each
  // other (python3 building a dict: 94% of kept_put's samples were on its first load).
  constexpr std::size_t ahead = 8;
  for (std::size_t i = 0; i < ahead && i < n; ++i) kept_prefetch(t->kept, sorted[i].addr);
  for (std::size_t i = 0; i < n; ++i) {
    if (i + ahead < n) kept_prefetch(t->kept, sorted[i + ahead].addr);
    std::uint64_t replaced = 0;
    if (kept_put(t->kept, sorted[i].addr, t->ordinal_base + sorted[i].ordinal(), &replaced))
      sorted[drops++] =
          local_entry::make(replaced, sorted[i].ordinal(), 0, 0);  // drops <= i: read already
  }
  unsigned char* p = fmt::encode(t->buffer + t->pos, fmt::kept_record{drops});
  fmt::kept_list_encoder entries;
  for (std::size_t i = 0; i < drops; ++i)
    p = entries.encode(p, fmt::kept_drop{sorted[i].ordinal(), sorted[i].addr});
  commit(t, p);
}

// The block's unfreed allocations, `sorted` by ordinal (n of them, their addresses' bits or'ed in
// `addresses`): KEPT when the thread keeps them, else ADDRESSES; then ORDERS.
void write_listed(thread_state* t, local_entry* sorted, std::size_t n, std::uintptr_t addresses) {
  if (t->keeps && kept_fits(addresses, t->ordinal_base + t->alloc_ordinal) &&
      kept_reserve(t->kept, n)) {
    write_kept(t, sorted, n);
    write_orders(t, nullptr, 0);
    return;
  }
  unsigned char* p = fmt::encode(t->buffer + t->pos, fmt::addresses_record{n});
  fmt::address_list_encoder entries;
  for (std::size_t i = 0; i < n; ++i)
    p = entries.encode(p, fmt::address_entry{sorted[i].ordinal(), sorted[i].addr});
  commit(t, p);
  write_orders(t, sorted, n);
}
// The ADDRESSES record (or KEPT), and ORDERS: the orders of the block's FREEs and of the
// allocations ADDRESSES lists. Leaves the block-local table empty.
void write_addresses(thread_state* t) {
  if (t->local_count + t->evicted_count == 0) {
    write_orders(t, nullptr, 0);
    return;
  }
  std::size_t n = 0;
  std::uintptr_t addresses = 0;  // their bits, for kept_fits
  // The table is emptied as it is read, its lines in the cache then (a clearing of its 64 KiB
  // when the next block began missed the first-level cache a thousand times a block).
  for (std::size_t i = 0; i < local_capacity; ++i) {
    if (t->local[i].addr == 0) continue;
    addresses |= t->local[i].addr;
    t->scratch[n++] = t->local[i];
    t->local[i].addr = 0;
  }
  for (std::size_t i = 0; i < t->evicted_count; ++i) {
    addresses |= t->evicted[i].addr;
    t->scratch[n++] = t->evicted[i];
  }
  t->local_count = 0;
  t->evicted_count = 0;
  // The table's first n entries are the sort's spare room, emptied again after.
  write_listed(t, sort_by_ordinal(t->scratch, t->local, n, t->alloc_ordinal), n, addresses);
  std::memset(t->local, 0, n * sizeof(local_entry));
}

}  // namespace

void end_block(thread_state* t) {
  if (t->pending_count != 0) settle_frees(t);
  write_addresses(t);
  commit(t, fmt::encode_ticks(t->buffer + t->pos, t->tick_gaps, t->tick_dts, t->tick_count));
}

void write_thread_record(thread_state* t) {
  t->tid = static_cast<std::uint64_t>(syscall(SYS_gettid));
  unsigned char* p = ensure_space(t, 16);
  commit(t, fmt::encode(p, fmt::thread_record{t->tid}));
}

namespace {

// Records the oldest pending free, in the room the block holds for it.
void settle_oldest_free(thread_state* t) {
  const std::uint32_t i = t->pending_head;
  t->pending_head = (i + 1) % pending_capacity;
  --t->pending_count;
  event_time(t, t->pending_ticks[i]);
  commit(t, encode_free_far(t, t->buffer + t->pos, t->pending_addr[i], nullptr));
}

}  // namespace

void settle_frees(thread_state* t) {
  while (t->pending_count != 0) settle_oldest_free(t);
}

void defer_free(thread_state* t, std::uintptr_t addr, std::uint64_t ticks) {
  kept_prefetch(t->kept, addr);
  if (t->pending_count == pending_capacity) settle_oldest_free(t);
  const std::uint32_t at = (t->pending_head + t->pending_count) % pending_capacity;
  t->pending_addr[at] = addr;
  t->pending_ticks[at] = ticks;
  ++t->pending_count;
}

// Linear-probing deletion by backward shift: no tombstones, so lookups stay short.
void local_erase(thread_state* t, std::size_t hole) {
  constexpr std::size_t mask = local_capacity - 1;
  std::size_t i = hole;
  for (;;) {
    i = (i + 1) & mask;
    if (t->local[i].addr == 0) break;
    std::size_t home = local_slot(t->local[i].addr);
    // Move entry i into the hole unless its home lies cyclically in (hole, i].
    bool stays = hole <= i ? (hole < home && home <= i) : (hole < home || home <= i);
    if (stays) continue;
    t->local[hole] = t->local[i];
    hole = i;
  }
  t->local[hole].addr = 0;
  --t->local_count;
}

void record_alloc(thread_state* t, fmt::alloc_kind kind, std::size_t size, void* ptr,
                  const caller_frame& from) {
  // The lines read at the end, fetched while the stack is walked.
  auto addr = reinterpret_cast<std::uintptr_t>(ptr);
  prefetch_address(t, addr);
  const std::uint64_t ticks = stamp_event(t);
  const std::uintptr_t* ips = nullptr;
  bool same = false;
  std::uint64_t hash = 0;
  std::uint64_t* tag = nullptr;
  std::size_t n = unwind_capture_from(t->cache, &ips, max_depth, from.pc, from.sp, from.rbp,
                                      stack_top(t, from.sp), &hash, &same, &tag);
  // The frees before this allocation come first; the walk gave their kept slots time to arrive.
  if (t->pending_count != 0) settle_frees(t);
  // A remembered walk keeps its stack's id with the table's generation (the table forgets its
  // stacks after a module unload); the previous allocation's stack again has the id the table
  // gave last.
  std::uint32_t id;
  if (tag != nullptr && *tag != 0 && *tag >> 32 == t->stacks.generation) {
    id = static_cast<std::uint32_t>(*tag);
  } else {
    id = same && n != 0 && n == t->stacks.last_n ? t->stacks.last_id
                                                 : stack_id(t, ips, n, hash, ticks);
    if (tag != nullptr) *tag = id == 0 ? 0 : std::uint64_t{t->stacks.generation} << 32 | id;
  }
  // The order: any read before the hook returns is the allocation's (clock.hpp). One past the
  // block's span ends the block, whose new base is read later, so is the order too.
  std::uint64_t order = order_now();
  if (LOWALLOC_UNLIKELY(order - t->order_base >= order_span)) {
    flush(t, false);
    order = t->order_base;
  }
  unsigned char* p = ensure_space(t, 48);
  if (LOWALLOC_UNLIKELY(order < t->order_base)) order = t->order_base;  // ensure_space flushed
  event_time(t, ticks);
  commit(t, fmt::encode(p, fmt::alloc_record{kind, 0, size, id}, t->encoding));
  t->has_events = true;
  std::size_t i = local_slot(addr);
  while (t->local[i].addr != 0 && t->local[i].addr != addr) i = (i + 1) & (local_capacity - 1);
  // The same address again: another thread freed the older allocation (with its address, as a
  // FREE); keep the older one's address for ADDRESSES.
  if (t->local[i].addr == 0)
    ++t->local_count;
  else
    t->evicted[t->evicted_count++] = t->local[i];
  t->local[i] =
      local_entry::make(addr, t->alloc_ordinal++, order - t->order_base, epoch_at_alloc(addr));
  if (t->local_count + t->evicted_count >= local_limit) flush(t, false);
}

}  // namespace lowalloc::trace
