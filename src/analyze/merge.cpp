// The k-way merge of the streams: a first pass over each block learns the fate of every
// allocation (freed in the block, listed in ADDRESSES, or neither) and checks every record; the
// second decodes one event at a time as the merge asks for it. Both are visitors over the
// record decoder of trace/records.hpp.
#include "analyze/merge.hpp"

#include "analyze/flat_map.hpp"
#include "trace/records.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>
#include <unordered_map>
#include <utility>

namespace lowalloc::analyze {

namespace {

namespace fmt = lowalloc::trace_format;
using detail::block_ref;
using detail::file_index;
using detail::payload_error;
using detail::payload_reader;

constexpr std::uint32_t no_module = recorded_stacks::no_module;
constexpr std::uint32_t not_a_stack = ~std::uint32_t{0};

// A live block in 16 bytes: its size and stream share a word (size < 2^40, stream < 2^24 - 1);
// a block past either limit has them in the merge's `wide_` table, by its address or
// ordinal_key, instead. `tag` is
// the word an analysis keeps with the block (alloc_event::tag).
struct live_block {
  static constexpr std::uint64_t wide = ~std::uint64_t{0};
  std::uint64_t packed;  // size << 24 | stream, or wide
  std::uint32_t stack;
  std::uint32_t tag;
};

// The key of a block that the trace names by its stream and allocation ordinal, not its
// address (kept past its block): above every address.
constexpr std::uint64_t ordinal_key(std::uint32_t thread, std::uint64_t ordinal) noexcept {
  return std::uint64_t{1} << 63 | std::uint64_t{thread} << 40 | (ordinal & ((1ull << 40) - 1));
}

struct wide_block {
  std::uint64_t size;
  std::uint32_t stream;
};

struct segment_end {
  std::uint64_t end;
  std::uint32_t module;
};

enum class event : std::uint8_t {
  alloc,
  free,
  free_local,
  free_kept,
  live,
  module,
  unmodule,
  stack
};

// What the block says about the address of each of its allocations (by ordinal).
enum class slot_state : std::uint8_t {
  lost,    // neither freed in the block nor listed: its free was not recorded
  listed,  // its address is in the block's ADDRESSES record
  local,   // freed by a FREE_LOCAL of the block; the address is never written
  kept,    // live past the block, known by its stream ordinal (the block ends with KEPT)
};

struct ordinal_slot {
  std::uint64_t addr = 0;     // listed: the address
  std::uint64_t size = 0;     // local: set when the ALLOC is merged
  std::uint64_t dropped = 0;  // kept: 1 + the stream ordinal of the kept block it replaces, or 0
  std::uint64_t order = 0;    // listed: the ALLOC's order (version 7, ORDERS)
  std::uint32_t stack = 0;
  std::uint32_t tag = 0;  // local: alloc_event::tag
  slot_state state = slot_state::lost;
};

struct stream {
  std::uint32_t id = 0;
  std::uint32_t index = 0;
  std::vector<std::uint32_t> blocks;  // this stream's blocks, in file order
  std::size_t next_block = 0;
  std::size_t current_block = 0;
  std::unique_ptr<std::uint8_t[]> buffer;
  std::size_t capacity = 0;
  std::size_t payload_size = 0;           // of the block in `buffer`
  std::unique_ptr<std::uint8_t[]> spare;  // the previous block's payload
  std::size_t spare_capacity = 0;
  payload_reader reader;
  fmt::block_decoding decoding;
  std::uint64_t clock = 0;
  std::vector<ordinal_slot> slots;  // the current block's allocations
  std::uint64_t ordinal = 0;        // ALLOC records decoded in the current block
  std::uint64_t ordinal_base = 0;   // ALLOC records of the stream before the block
  // Live blocks known by stream ordinal (KEPT): made in ordinal order and mostly freed in it, so
  // runs of consecutive ordinals share cache lines. Runs of 64: python-dict's kept blocks are a
  // quarter of its ordinals, and in runs of 16 each run's few entries were a cache miss of their
  // own (its report 0.82x with 64; 1.02x on ninja and cc1plus, whose kept blocks are freed in no
  // order; 256 was 0.61x and 1.17x).
  detail::u64_map<live_block, detail::runs_of<6>> kept;
  // Stack id -> merged stack index, up to format version 5 (from 6 the ids are the process's:
  // state::process_stacks_). The ids count up from 1 (after a RESET too): runs of them share
  // cache lines.
  detail::u64_map<std::uint32_t, detail::runs_of<4>> stacks;
  std::uint64_t stack_id = 0;    // ALLOC, from version 6: its stack id, looked up when merged
  bool has_last_alloc = false;   // the latest ALLOC has a known address...
  std::uint64_t last_alloc = 0;  // ...this one
  bool has_last_kept = false;    // the latest ALLOC is kept...
  std::uint64_t last_kept = 0;   // ...with this stream ordinal
  bool deferred = false;         // waits for the other streams' events of its stamp
  // An EXEC ends the image only if nothing follows it: an exec that failed returns to the program,
  // whose stream goes on. Held until the stream's next record or its end.
  bool exec_pending = false;
  std::string exec_path;

  // The pending event: decoded, not yet merged.
  event kind = event::alloc;
  std::uint64_t time = 0;
  // From version 7, its place among the events of its stamp: 2 x the order of an ALLOC listed in
  // ADDRESSES, 2 x the order + 1 of a FREE, any other event the latest of those before it in the
  // stream (`order_floor`), or 0.
  std::uint64_t order = 0;
  std::uint8_t alloc_kind = 0;
  std::uint64_t size = 0;
  std::uint64_t addr = 0;
  std::uint32_t stack = 0;
  std::uint64_t slot = 0;      // ALLOC: its ordinal; FREE_LOCAL: the ordinal it frees;
                               // FREE_KEPT: the stream ordinal it frees
  bool latest = false;         // FREE_LOCAL of the latest allocation (distance 0)
  std::uint64_t id_field = 0;  // MODULE, UNMODULE and STACK id
  std::uint64_t bias = 0;
  std::string_view path;
  std::vector<std::uint64_t> scratch;  // MODULE: start, size pairs; STACK: addresses;
                                       // LIVE: ordinal, address pairs
  // The stream's previous STACK and the tree nodes of its outer frames (path[k]: the node of
  // its k + 1 outermost frames), valid while the module map is the one of `modules_epoch`:
  // a thread's next stack mostly shares its outer frames, which then need no lookup.
  std::vector<std::uint64_t> last_ips;
  std::vector<std::uint32_t> last_path;
  std::uint64_t modules_epoch = 0;
  bool last_unresolved = false;  // the previous STACK had frames in no module (not shared then)
  // Version 7: the current block's ORDERS, the FREEs' orders and its listed allocations'.
  std::vector<std::uint64_t> free_orders;
  std::vector<std::uint64_t> listed_orders;
  std::size_t next_free = 0;      // FREE records decoded in the current block
  std::uint64_t free_order = 0;   // the pending FREE's
  std::uint64_t order_floor = 0;  // the latest order of the stream's events
  // Addresses of its latest STACK that were in no module (state::unresolved_), until its next
  // event merges.
  std::vector<std::uint64_t> unresolved;
};

}  // namespace

struct event_merge::state {
  state(const std::uint8_t* data, const file_index& index, std::size_t limit,
        const detail::file_bytes* file)
      : data_(data), index_(index), limit_(limit), file_(file) {}

  void run();
  bool load_block(stream& s);
  void scan_block(stream& s);
  bool advance(stream& s);
  bool decode(stream& s);
  void place(stream& s);
  [[noreturn, gnu::noinline, gnu::cold]] void end_of_orders(const stream& s);
  bool must_wait(stream& s);
  template <class Later>
  bool let_go_one(std::vector<std::uint32_t>& heap, std::uint64_t time, const Later& later);
  void process(stream& s);
  void process_alloc(stream& s);
  void process_free(stream& s);
  void process_free_local(stream& s);
  void process_free_kept(stream& s);
  void process_live(stream& s);
  void process_module(stream& s);
  void process_unmodule(stream& s);
  void note_module_id(const fmt::module_id_record& r);
  std::uint32_t location_of(std::uint64_t ip, stream* from);
  void close_unresolved(stream& s);
  void resolve_in(std::uint64_t start, std::uint64_t end, std::uint32_t module, std::uint64_t time);
  std::uint32_t child(std::uint32_t parent, std::uint32_t location);
  std::uint32_t new_node(std::uint32_t parent, std::uint32_t location);
  std::uint32_t intern_stack(const std::vector<std::uint64_t>& ips, stream* from = nullptr);
  std::uint32_t process_stack_of(stream& s);
  std::uint32_t module_at(std::uint64_t addr) const;
  double run_time_seconds() const noexcept;

  void note_time(std::uint64_t t) noexcept {
    if (t < first_tick_) first_tick_ = t;
    if (t > last_tick_) last_tick_ = t;
  }
  void tick(stream& s, std::uint64_t dt) noexcept {
    s.clock += dt;
    s.time = s.clock;
    note_time(s.clock);
  }

  const std::uint8_t* data_;
  const file_index& index_;
  std::size_t limit_;
  const detail::file_bytes* file_;  // the mapping of data_, if any: read blocks are released
  detail::decompressor decompressor_;
  std::vector<stream> streams_;
  std::vector<event_sink*> sinks_;

  detail::u64_map<live_block> live_;
  std::unordered_map<std::uint64_t, wide_block> wide_;  // blocks too large for live_block, by key

  // The live_block of a block of `size` bytes made by `stream` from `stack`, known by `key`.
  live_block make_block(std::uint64_t size, std::uint32_t stack, std::uint32_t stream,
                        std::uint64_t key) {
    if (size < (std::uint64_t{1} << 40) && stream < (1u << 24) - 1)
      return live_block{size << 24 | stream, stack, 0};
    wide_[key] = wide_block{size, stream};
    return live_block{live_block::wide, stack, 0};
  }
  // The size and stream of `b`, known by `key`; a wide block's entry goes with it.
  wide_block unpack(const live_block& b, std::uint64_t key) {
    if (b.packed != live_block::wide)
      return wide_block{b.packed >> 24, static_cast<std::uint32_t>(b.packed & ((1u << 24) - 1))};
    wide_block w{0, 0};
    if (auto it = wide_.find(key); it != wide_.end()) {
      w = it->second;
      wide_.erase(it);
    }
    return w;
  }
  // A block known by `from` is known by `to` from here on.
  void rekey(const live_block& b, std::uint64_t from, std::uint64_t to) {
    if (b.packed != live_block::wide) return;
    if (auto it = wide_.find(from); it != wide_.end()) {
      const wide_block w = it->second;
      wide_.erase(it);
      wide_[to] = w;
    }
  }

  recorded_stacks stacks_;
  // The interning of recorded_stacks: locations by address (an address seen in a second module,
  // after an unload, in `other_locations_`), nodes by (parent, location), stacks by node.
  detail::u64_map<std::uint32_t> location_of_address_;
  std::map<std::pair<std::uint64_t, std::uint32_t>, std::uint32_t> other_locations_;
  // A node's children: a list (the newest first) while it has few, in child_of_ (parent << 32 |
  // location -> node) once it has many. A new stack's nodes are found or made next to the ones
  // just made, where a lookup in one table of every node was a cache miss per frame.
  std::vector<std::uint32_t> first_child_;   // 0: none; wide_parent: the node's are in child_of_
  std::vector<std::uint32_t> next_sibling_;  // 0: the last
  detail::u64_map<std::uint32_t> child_of_;
  std::vector<std::uint32_t> stack_of_node_;  // not_a_stack: not a stack (yet)
  std::uint32_t no_stack_ = no_module;        // the merged stack of stack id 0, once made
  // From format version 6: stack id -> merged stack index, for every stream.
  bool process_ids_ = index_.version >= 6;
  bool orders_ = index_.version >= 7;  // FREEs and listed ALLOCs have orders (ORDERS)
  detail::u64_map<std::uint32_t, detail::runs_of<4>> process_stacks_;
  std::uint64_t undefined_stack_events_ = 0;  // ALLOCs whose stack's definition was lost
  std::uint64_t modules_epoch_ = 1;           // changes with the module map (module_at)
  // Locations made while their address was in no module. A STACK merges at its stream's clock,
  // the time of the stream's previous event, which may precede the load of a module its frames
  // are in: a plugin that one thread loads and another calls, which has not allocated since.
  // Such a location takes the module of the first MODULE merged after it that covers it, if that
  // MODULE is not later than the stream's next event (which the stack's frames were walked for).
  struct unresolved_location {
    std::uint32_t location = 0;
    std::uint32_t open = 0;   // streams whose event after the stack has not merged yet
    std::uint64_t until = 0;  // the latest of those events' times
  };
  std::map<std::uint64_t, unresolved_location> unresolved_;  // by address
  std::size_t unresolved_sweep_ = 1024;  // its size at which close_unresolved() sweeps it

  std::vector<recorded_module> modules_;
  std::unordered_map<std::uint64_t, std::uint32_t> module_of_id_;
  // MODULE_ID records of modules whose MODULE is not merged yet, by module id.
  std::unordered_map<std::uint64_t, module_desc> pending_ids_;
  std::map<std::uint64_t, segment_end> segments_;  // loaded, by start address

  std::uint64_t first_tick_ = ~std::uint64_t{0};
  std::uint64_t last_tick_ = 0;
  tick_rate rate_;  // the TIME records' pairs of the lowest and highest ticks
  std::uint64_t min_ns_ = 0, max_ns_ = 0;  // CLOCK_MONOTONIC of the first and last TIME records
};

namespace {

// The first pass over a block: checks every record and learns the fate of each allocation
// before any of its events is merged.
// (ORDERS, of version 7, goes to `free_orders` and `listed_orders`; finish() gives the listed
// allocations theirs, and the second pass checks the FREEs' count: the records of the versions
// before take the same path as before.)
struct scan_visitor {
  std::vector<ordinal_slot>& slots;
  std::vector<std::uint64_t>& free_orders;
  std::vector<std::uint64_t>& listed_orders;
  bool have_addresses = false;
  bool have_kept = false;
  bool have_orders = false;

  template <class Record>
  void operator()(const Record&) {}
  template <class Record, class Items>
  void operator()(const Record&, Items&) {}

  void operator()(const fmt::alloc_record&) { slots.emplace_back(); }

  template <class Items>
  [[gnu::noinline]] void operator()(const fmt::orders_record& r, Items& entries) {
    if (have_orders) throw payload_error("a second ORDERS record in the block");
    have_orders = true;
    free_orders.resize(static_cast<std::size_t>(r.frees));
    for (std::uint64_t& order : free_orders) order = entries.next().order;
    listed_orders.resize(static_cast<std::size_t>(r.listed));
    for (std::uint64_t& order : listed_orders) order = entries.next().order;
  }

  void operator()(const fmt::free_local_record& r) {
    const std::uint64_t n = slots.size();
    if (r.distance >= n)
      throw payload_error("FREE_LOCAL of the allocation " + std::to_string(r.distance) +
                          " back, with " + std::to_string(n) + " in the block before it");
    ordinal_slot& slot = slots[static_cast<std::size_t>(n - 1 - r.distance)];
    if (slot.state == slot_state::local)
      throw payload_error("FREE_LOCAL frees allocation " + std::to_string(n - 1 - r.distance) +
                          " of the block twice");
    slot.state = slot_state::local;
  }

  template <class Items>
  void operator()(const fmt::addresses_record&, Items& entries) {
    if (have_addresses) throw payload_error("a second ADDRESSES record in the block");
    have_addresses = true;
    while (entries.left() != 0) {
      const fmt::address_entry e = entries.next();
      if (e.ordinal >= slots.size())
        throw payload_error("ADDRESSES lists allocation " + std::to_string(e.ordinal) +
                            " of a block with " + std::to_string(slots.size()));
      ordinal_slot& slot = slots[static_cast<std::size_t>(e.ordinal)];
      if (slot.state != slot_state::lost)
        throw payload_error("ADDRESSES lists allocation " + std::to_string(e.ordinal) +
                            ", which the block frees");
      slot.state = slot_state::listed;
      slot.addr = e.addr;
    }
  }

  template <class Items>
  void operator()(const fmt::kept_record&, Items& entries) {
    if (have_kept) throw payload_error("a second KEPT record in the block");
    have_kept = true;
    while (entries.left() != 0) {
      const fmt::kept_drop e = entries.next();
      if (e.ordinal >= slots.size())
        throw payload_error("KEPT lists allocation " + std::to_string(e.ordinal) +
                            " of a block with " + std::to_string(slots.size()));
      ordinal_slot& slot = slots[static_cast<std::size_t>(e.ordinal)];
      if (slot.state != slot_state::lost)
        throw payload_error("KEPT lists allocation " + std::to_string(e.ordinal) +
                            ", which the block frees or lists in ADDRESSES");
      if (e.dropped == ~std::uint64_t{0}) throw payload_error("KEPT drops no allocation");
      slot.dropped = e.dropped + 1;
    }
  }

  // After the last record: from version 7 the listed allocations' orders (ORDERS gives one to
  // each); with KEPT, what the block neither frees nor lists stays live.
  void finish(bool orders) {
    if (orders && (have_addresses || !listed_orders.empty())) {
      std::size_t listed = 0;
      for (ordinal_slot& slot : slots) {
        if (slot.state != slot_state::listed) continue;
        if (listed < listed_orders.size()) slot.order = listed_orders[listed];
        ++listed;
      }
      if (listed != listed_orders.size())
        throw payload_error(
            (have_orders ? "ORDERS gives " + std::to_string(listed_orders.size()) + " orders to "
                         : std::string("the block has no ORDERS record, and ")) +
            std::to_string(listed) + " ADDRESSES entries");
    }
    if (!have_kept) return;
    for (ordinal_slot& slot : slots)
      if (slot.state == slot_state::lost) slot.state = slot_state::kept;
  }
};

}  // namespace

bool event_merge::state::load_block(stream& s) {
  while (s.next_block < s.blocks.size()) {
    s.current_block = s.blocks[s.next_block++];
    const block_ref& b = index_.blocks[s.current_block];
    // The previous block's payload stays in `spare`: a prefixed block is decompressed with it.
    std::swap(s.buffer, s.spare);
    std::swap(s.capacity, s.spare_capacity);
    const std::size_t previous = s.payload_size;
    s.payload_size = 0;
    if (b.decompressed > s.capacity || s.buffer == nullptr) {
      s.capacity = std::max<std::size_t>(b.decompressed, 1);
      s.buffer.reset(new std::uint8_t[s.capacity]);
    }
    s.reader = payload_reader();  // an error below is about the block, not a record
    decompressor_.decompress(data_, b, s.buffer.get(), s.spare == nullptr ? nullptr : s.spare.get(),
                             previous);
    s.payload_size = b.decompressed;
    if (file_ != nullptr) file_->release(data_ + b.offset, fmt::block_header_size + b.compressed);
    s.reader = payload_reader(s.buffer.get(), s.buffer.get() + b.decompressed);
    s.decoding = fmt::block_decoding(index_.version);
    s.ordinal = 0;
    s.ordinal_base += s.slots.size();  // the previous block's allocations
    s.slots.clear();
    if (b.decompressed == 0) continue;
    std::size_t records = b.decompressed;
    if (s.decoding.ticks_at_end) {
      if (const char* wrong = fmt::open_ticks(s.buffer.get(), b.decompressed, &records, s.decoding))
        throw payload_error(wrong);
      s.reader = payload_reader(s.buffer.get(), s.buffer.get() + records);
    }
    if (records == 0 || s.buffer[0] != fmt::tag_time)
      throw payload_error("the block does not begin with a TIME record");
    scan_block(s);
    s.reader = payload_reader(s.buffer.get(), s.buffer.get() + records);
    return true;
  }
  s.buffer.reset();
  s.capacity = 0;
  s.spare.reset();
  s.spare_capacity = 0;
  return false;
}

void event_merge::state::scan_block(stream& s) {
  s.slots.clear();
  s.free_orders.clear();
  s.listed_orders.clear();
  s.next_free = 0;
  scan_visitor visit{s.slots, s.free_orders, s.listed_orders};
  fmt::block_decoding decoding = s.decoding;  // its own pass over the ticks
  while (!s.reader.done()) fmt::decode_record(s.reader, decoding, visit);
  if (!decoding.ticks_done())
    throw payload_error("the tick section names more events than the block has");
  visit.finish(orders_);
}

// Decodes up to the next event of the stream that takes part in the merge; false at its end.
bool event_merge::state::advance(stream& s) {
  try {
    return decode(s);
  } catch (const payload_error& e) {
    std::string what = "damaged block of stream " + std::to_string(s.id) + ": " + e.what();
    if (s.reader.position() > 0) what += " at payload byte " + std::to_string(s.reader.position());
    throw block_damage{s.current_block, std::move(what)};
  }
}

namespace {

// A FREE record past the orders of its block's ORDERS.
[[noreturn, gnu::noinline, gnu::cold]] void no_order_for_free(const stream& s) {
  throw payload_error(s.free_orders.empty()
                          ? std::string("a FREE record in a block with no orders for it")
                          : "ORDERS gives " + std::to_string(s.free_orders.size()) +
                                " orders to more FREE records");
}

// The second pass: one record at a time, until one that takes part in the merge.
struct decode_visitor {
  event_merge::state& m;
  stream& s;
  bool event = false;
  bool exec = false;
  bool ends = false;  // END or CRASH

  void operator()(const fmt::time_record& r) {
    s.clock = r.ticks;
    m.note_time(r.ticks);
    if (!m.rate_.have || r.ns < m.min_ns_) m.min_ns_ = r.ns;
    if (!m.rate_.have || r.ns > m.max_ns_) m.max_ns_ = r.ns;
    m.rate_.add(r.ticks, r.ns);
    const time_event e{s.index, r.ticks, r.ns};
    for (event_sink* sink : m.sinks_) sink->on_time(e);
  }

  template <class Items>
  void operator()(const fmt::process_record& r, Items& argv) {
    const process_info p = process_of(r, argv);
    for (event_sink* sink : m.sinks_) sink->on_process(p);
  }

  void operator()(const fmt::thread_record& r) {
    for (event_sink* sink : m.sinks_) sink->on_thread(s.index, r.tid);
  }

  template <class Items>
  void operator()(const fmt::module_record& r, Items& segments) {
    m.tick(s, r.dt);
    s.id_field = r.id;
    s.bias = r.bias;
    s.path = r.path;
    s.scratch.clear();
    while (segments.left() != 0) {
      const fmt::segment seg = segments.next();
      s.scratch.push_back(seg.start);
      s.scratch.push_back(seg.size);
    }
    s.kind = event::module;
    event = true;
  }

  void operator()(const fmt::module_id_record& r) { m.note_module_id(r); }

  void operator()(const fmt::unmodule_record& r) {
    m.tick(s, r.dt);
    s.id_field = r.id;
    s.kind = event::unmodule;
    event = true;
  }

  template <class Items>
  void operator()(const fmt::stack_record& r, Items& ips) {
    s.id_field = r.id;
    s.scratch.clear();
    while (ips.left() != 0) s.scratch.push_back(ips.next());
    s.time = s.clock;
    s.kind = event::stack;
    event = true;
  }

  // The frames after the added ones are the previous stack's (decoded after it was merged).
  template <class Items>
  void operator()(const fmt::stack_shared_record& r, Items& ips) {
    const std::vector<std::uint64_t>& previous = s.last_ips;
    if (r.shared > previous.size())
      throw payload_error("STACK_SHARED shares " + std::to_string(r.shared) +
                          " frames of a previous stack of " + std::to_string(previous.size()));
    s.id_field = r.id;
    s.scratch.clear();
    while (ips.left() != 0) s.scratch.push_back(ips.next());
    s.scratch.insert(s.scratch.end(), previous.end() - static_cast<std::ptrdiff_t>(r.shared),
                     previous.end());
    s.time = s.clock;
    s.kind = event::stack;
    event = true;
  }

  void operator()(const fmt::reset_record& r) {
    if (m.process_ids_) throw payload_error("a RESET record in a trace of format version 6");
    m.tick(s, r.dt);
    s.stacks.clear();
  }

  void operator()(const fmt::free_record& r) {
    m.tick(s, r.dt);
    s.addr = r.addr;
    if (m.orders_) {
      if (s.next_free == s.free_orders.size()) no_order_for_free(s);
      s.free_order = s.free_orders[s.next_free++];
    }
    s.kind = event::free;
    event = true;
  }

  void operator()(const fmt::free_local_record& r) {
    m.tick(s, r.dt);
    s.slot = s.ordinal - 1 - r.distance;  // checked by the first pass
    s.latest = r.distance == 0;
    s.kind = event::free_local;
    event = true;
  }

  template <class Items>
  void operator()(const fmt::addresses_record&, Items&) {}  // read by the first pass
  template <class Items>
  void operator()(const fmt::kept_record&, Items&) {}  // read by the first pass
  template <class Items>
  void operator()(const fmt::orders_record&, Items&) {}  // read by the first pass

  void operator()(const fmt::free_kept_record& r) {
    m.tick(s, r.dt);
    s.slot = r.ordinal;
    s.kind = event::free_kept;
    event = true;
  }

  template <class Items>
  void operator()(const fmt::live_record& r, Items& entries) {
    m.tick(s, r.dt);
    s.scratch.clear();
    while (entries.left() != 0) {
      const fmt::live_entry e = entries.next();
      s.scratch.push_back(e.ordinal);
      s.scratch.push_back(e.addr);
    }
    s.kind = event::live;
    event = true;
  }

  void operator()(const fmt::lost_record& r) {
    for (event_sink* sink : m.sinks_) sink->on_lost(r.count);
  }

  void operator()(const fmt::end_record& r) {
    m.tick(s, r.dt);
    ends = true;
    for (event_sink* sink : m.sinks_) sink->on_end(s.index, false, {});
  }

  void operator()(const fmt::stopped_record& r) {
    m.tick(s, r.dt);
    ends = true;
    for (event_sink* sink : m.sinks_) sink->on_stopped(s.index, r.reason);
  }

  void operator()(const fmt::shadowed_record& r) {
    shadowed_functions f;
    for (unsigned i = 0; i < fmt::shadowed_count; ++i)
      if ((r.functions >> i & 1) != 0) f.functions.emplace_back(fmt::shadowed_names[i]);
    f.module = std::string(r.path);
    for (event_sink* sink : m.sinks_) sink->on_shadowed(f);
  }

  void operator()(const fmt::exec_record& r) {  // the image is being replaced (see stream)
    m.tick(s, r.dt);
    s.exec_pending = true;
    s.exec_path = std::string(r.path);
    exec = true;
  }

  template <class Items>
  void operator()(const fmt::crash_record& r, Items& entries) {
    m.tick(s, r.dt);
    ends = true;
    crash_info c;
    c.signal = static_cast<int>(r.signal);
    c.tid = r.tid;
    c.thread_written = (r.flags & fmt::crash_flag_thread_written) != 0;
    c.writer_late = (r.flags & fmt::crash_flag_writer_late) != 0;
    c.more_threads = (r.flags & fmt::crash_flag_more_threads) != 0;
    c.ended = (r.flags & fmt::crash_flag_ended) != 0;
    c.deferred = (r.flags & fmt::crash_flag_deferred) != 0;
    c.format_version = m.index_.version;
    while (entries.left() != 0) {
      const fmt::crash_thread e = entries.next();
      c.unwritten.push_back(crash_info::thread{e.tid, e.allocations, e.bytes});
    }
    for (event_sink* sink : m.sinks_) sink->on_crash(s.index, c);
  }

  void operator()(const fmt::alloc_record& r) {
    m.tick(s, r.dt);
    s.alloc_kind = static_cast<std::uint8_t>(r.kind);
    // No address space holds more (x86-64 and AArch64 with 5-level tables: 2^57 bytes): a larger
    // size is damage, and would make the sums of sizes wrap.
    if (r.size > (std::uint64_t{1} << 57))
      throw payload_error("an allocation of " + std::to_string(r.size) +
                          " bytes, more than an address space holds");
    s.size = r.size;
    s.slot = s.ordinal++;
    if (r.stack == 0) {
      if (m.no_stack_ == no_module) m.no_stack_ = m.intern_stack({});
      s.stack = m.no_stack_;
    } else if (m.process_ids_) {
      // Defined by whichever stream used it first, maybe not merged yet: looked up when merged.
      s.stack_id = r.stack;
      s.stack = not_a_stack;
    } else if (const std::uint32_t* merged = s.stacks.find(r.stack)) {
      s.stack = *merged;
    } else {
      throw payload_error("stack id " + std::to_string(r.stack) + " used before it is defined");
    }
    s.kind = event::alloc;
    event = true;
  }
};

}  // namespace

bool event_merge::state::decode(stream& s) {
  for (;;) {
    if (s.reader.done()) {
      if (orders_ && s.next_free != s.free_orders.size()) end_of_orders(s);
      if (!load_block(s)) {
        if (s.exec_pending) {  // the image was replaced: it ended normally
          s.exec_pending = false;
          for (event_sink* sink : sinks_) sink->on_end(s.index, true, s.exec_path);
        }
        return false;
      }
      // The EXEC's block ends with what a block's end writes (ADDRESSES, KEPT, ORDERS); another
      // block, an event, END or CRASH after it: the exec failed and the program went on (the
      // recorder writes a block when an exec returns).
      s.exec_pending = false;
    }
    decode_visitor visit{*this, s};
    fmt::decode_record(s.reader, s.decoding, visit);
    if (visit.event || visit.ends) s.exec_pending = false;
    if (visit.event) {
      if (orders_) place(s);
      return true;
    }
  }
}

// A block whose ORDERS gave more orders than it has FREE records.
void event_merge::state::end_of_orders(const stream& s) {
  throw payload_error("ORDERS gives " + std::to_string(s.free_orders.size()) + " orders to " +
                      std::to_string(s.next_free) + " FREE records");
}

// The place of the stream's pending event among the events of its stamp (version 7): a FREE's
// and a listed ALLOC's from their orders (the FREE of order k went between the ALLOCs that read k
// and k + 1), any other event's the latest known before it in its stream, a lower bound of its
// own. A stream's places never go down, so the merge keeps each stream's order.
void event_merge::state::place(stream& s) {
  if (s.kind == event::free) {
    s.order_floor = 2 * s.free_order + 1;
  } else if (s.kind == event::alloc) {
    const ordinal_slot& slot = s.slots[static_cast<std::size_t>(s.slot)];
    if (slot.state == slot_state::listed) s.order_floor = 2 * slot.order;
  }
  s.order = s.order_floor;
}

std::uint32_t event_merge::state::module_at(std::uint64_t addr) const {
  auto it = segments_.upper_bound(addr);
  if (it == segments_.begin()) return no_module;
  --it;
  return addr < it->second.end ? it->second.module : no_module;
}

std::uint32_t event_merge::state::location_of(std::uint64_t ip, stream* from) {
  // A return address lies just after the call: the call is in the module of ip - 1.
  const std::uint64_t call = ip == 0 ? 0 : ip - 1;
  const std::uint32_t m = module_at(call);
  bool inserted = false;
  std::uint32_t& index = location_of_address_.get(ip, inserted);
  std::uint32_t found = index;
  if (inserted) {
    found = index = static_cast<std::uint32_t>(stacks_.locations.size());
    stacks_.locations.push_back(recorded_stacks::location{ip, m});
  } else if (stacks_.locations[index].module != m) {
    auto [it, added] = other_locations_.try_emplace({ip, m}, 0);
    if (added) {
      it->second = static_cast<std::uint32_t>(stacks_.locations.size());
      stacks_.locations.push_back(recorded_stacks::location{ip, m});
    }
    found = it->second;
  }
  if (m == no_module && from != nullptr) {
    unresolved_location& u = unresolved_[ip];
    u.location = found;
    ++u.open;
    from->unresolved.push_back(ip);
  }
  return found;
}

// The stream's event after its STACK merges: the stack's addresses in no module can only be in
// modules merged up to its time.
void event_merge::state::close_unresolved(stream& s) {
  for (const std::uint64_t ip : s.unresolved) {
    const auto it = unresolved_.find(ip);
    if (it == unresolved_.end()) continue;
    --it->second.open;
    it->second.until = std::max(it->second.until, s.time);
  }
  s.unresolved.clear();
  // Those whose events all merged before now can take no module merged from now (a program that
  // runs code outside any module, as a JIT compiler's, would otherwise keep each of its addresses).
  if (unresolved_.size() < unresolved_sweep_) return;
  for (auto it = unresolved_.begin(); it != unresolved_.end();)
    it = it->second.open == 0 && it->second.until < s.time ? unresolved_.erase(it) : std::next(it);
  unresolved_sweep_ = std::max<std::size_t>(1024, 2 * unresolved_.size());
}

// A MODULE merged at `time`, with the segment [start, end): the locations in no module that it
// covers and that can be in it (unresolved_) are in it now.
void event_merge::state::resolve_in(std::uint64_t start, std::uint64_t end, std::uint32_t module,
                                    std::uint64_t time) {
  // Return addresses ip with ip - 1 in the segment.
  auto it = unresolved_.upper_bound(start);
  while (it != unresolved_.end() && it->first - 1 < end) {
    const std::uint64_t ip = it->first;
    const unresolved_location u = it->second;
    it = unresolved_.erase(it);
    if (u.open == 0 && u.until < time) continue;  // its stack was walked before this MODULE
    recorded_stacks::location& l = stacks_.locations[u.location];
    if (l.module != no_module) continue;
    // Found by its address from now on as the location of (ip, module), unless another location
    // is that already.
    std::uint32_t* first = location_of_address_.find(ip);
    if (first != nullptr && *first != u.location) {
      if (stacks_.locations[*first].module == module) continue;
      if (!other_locations_.try_emplace({ip, module}, u.location).second) continue;
      other_locations_.erase({ip, no_module});
    }
    l.module = module;
  }
}

std::uint32_t event_merge::state::intern_stack(const std::vector<std::uint64_t>& ips,
                                               stream* from) {
  if (stacks_.nodes.empty()) {
    stacks_.nodes.emplace_back();  // the root
    stack_of_node_.push_back(not_a_stack);
    first_child_.push_back(0);
    next_sibling_.push_back(0);
  }
  // The outer frames shared with the stream's previous stack start from its path (unless some of
  // its frames were in no module: each stack's must be noted as such, for its own event).
  std::size_t shared = 0;
  if (from != nullptr && from->modules_epoch == modules_epoch_ && !from->last_unresolved) {
    const std::size_t n = std::min(ips.size(), from->last_ips.size());
    while (shared < n &&
           ips[ips.size() - 1 - shared] == from->last_ips[from->last_ips.size() - 1 - shared])
      ++shared;
  }
  std::uint32_t node = shared == 0 ? 0 : from->last_path[shared - 1];
  const std::size_t unresolved = from != nullptr ? from->unresolved.size() : 0;
  if (from != nullptr) {
    from->last_path.resize(ips.size());
    from->modules_epoch = modules_epoch_;
  }
  for (std::size_t k = shared; k < ips.size(); ++k) {  // from the outermost call
    node = child(node, location_of(ips[ips.size() - 1 - k], from));
    if (from != nullptr) from->last_path[k] = node;
  }
  if (from != nullptr) {
    from->last_ips = ips;
    from->last_unresolved = from->unresolved.size() != unresolved;
  }
  std::uint32_t& stack = stack_of_node_[node];
  if (stack == not_a_stack) {
    stack = static_cast<std::uint32_t>(stacks_.stacks.size());
    stacks_.stacks.push_back(node);
    for (event_sink* sink : sinks_) sink->on_stack(stack);
  }
  return stack;
}

namespace {

constexpr std::uint32_t wide_parent = std::uint32_t{1} << 31;
constexpr unsigned list_limit = 8;  // children a node lists before they go to child_of_

}  // namespace

std::uint32_t event_merge::state::new_node(std::uint32_t parent, std::uint32_t location) {
  const auto n = static_cast<std::uint32_t>(stacks_.nodes.size());
  if (n == wide_parent) throw std::length_error("more than 2^31 call-tree nodes");
  stacks_.nodes.push_back(recorded_stacks::node{parent, location});
  stack_of_node_.push_back(not_a_stack);
  first_child_.push_back(0);
  next_sibling_.push_back(0);
  return n;
}

// The node of a call from `location` made by `parent`, made if new.
std::uint32_t event_merge::state::child(std::uint32_t parent, std::uint32_t location) {
  const std::uint32_t first = first_child_[parent];
  if (first != wide_parent) {
    unsigned listed = 0;
    for (std::uint32_t c = first; c != 0; c = next_sibling_[c], ++listed)
      if (stacks_.nodes[c].location == location) return c;
    const std::uint32_t n = new_node(parent, location);
    if (listed < list_limit) {
      next_sibling_[n] = first;
      first_child_[parent] = n;
      return n;
    }
    // Too many to list: all of them go to the table, and so will the next ones.
    for (std::uint32_t c = first; c != 0; c = next_sibling_[c]) {
      bool inserted = false;
      child_of_.get(std::uint64_t{parent} << 32 | stacks_.nodes[c].location, inserted) = c;
    }
    first_child_[parent] = wide_parent;
    bool inserted = false;
    child_of_.get(std::uint64_t{parent} << 32 | location, inserted) = n;
    return n;
  }
  bool inserted = false;
  std::uint32_t& found = child_of_.get(std::uint64_t{parent} << 32 | location, inserted);
  if (inserted) found = new_node(parent, location);  // (which leaves child_of_ as it is)
  return found;
}

void event_merge::state::process_alloc(stream& s) {
  alloc_event e;
  e.thread = s.index;
  e.tick = s.time;
  e.kind = s.alloc_kind;
  e.size = s.size;
  e.stack = s.stack;
  ordinal_slot& slot = s.slots[static_cast<std::size_t>(s.slot)];
  s.has_last_kept = false;
  switch (slot.state) {
    case slot_state::kept: {
      live_block dropped{};
      if (slot.dropped != 0 && s.kept.erase(slot.dropped - 1, dropped)) {
        // It received the address of a kept block whose FREE was not recorded.
        const std::uint64_t key = ordinal_key(s.index, slot.dropped - 1);
        const forgotten_event f{unpack(dropped, key).size, dropped.stack, dropped.tag, e.tick};
        for (event_sink* sink : sinks_) sink->on_forgotten(f);
      }
      const std::uint64_t ordinal = s.ordinal_base + s.slot;
      bool inserted = false;
      live_block& b = s.kept.get(ordinal, inserted);
      b = make_block(s.size, s.stack, s.index, ordinal_key(s.index, ordinal));
      e.tag = &b.tag;
      s.has_last_alloc = false;
      s.has_last_kept = true;
      s.last_kept = ordinal;
      break;
    }
    case slot_state::lost:
      // Its address was handed out again without a recorded free: never live.
      e.lost = true;
      s.has_last_alloc = false;
      break;
    case slot_state::local:
      e.tag = &slot.tag;
      slot.size = s.size;
      slot.stack = s.stack;
      s.has_last_alloc = false;
      break;
    case slot_state::listed: {
      bool inserted = false;
      live_block& b = live_.get(slot.addr, inserted);
      if (!inserted) {
        // The address is live already: its FREE was not recorded. The old block goes, uncounted.
        const forgotten_event f{unpack(b, slot.addr).size, b.stack, b.tag, e.tick};
        for (event_sink* sink : sinks_) sink->on_forgotten(f);
      }
      b = make_block(s.size, s.stack, s.index, slot.addr);
      e.tag = &b.tag;
      s.has_last_alloc = true;
      s.last_alloc = slot.addr;
      e.address = slot.addr;
      break;
    }
  }
  for (event_sink* sink : sinks_) sink->on_alloc(e);
}

void event_merge::state::process_free_local(stream& s) {
  const ordinal_slot& slot = s.slots[static_cast<std::size_t>(s.slot)];
  free_event e;
  e.thread = s.index;
  e.tick = s.time;
  e.matched = true;
  e.size = slot.size;
  e.stack = slot.stack;
  e.alloc_thread = s.index;
  e.tag = slot.tag;
  // The stream's latest allocation: nothing allocated in between. A free of an earlier one
  // leaves the latest as it is (it may be freed next, in a later block, with its address).
  e.temporary = s.latest;
  for (event_sink* sink : sinks_) sink->on_free(e);
}

void event_merge::state::process_free_kept(stream& s) {
  free_event e;
  e.thread = s.index;
  e.tick = s.time;
  live_block b{};
  if (s.kept.erase(s.slot, b)) {
    e.matched = true;
    e.size = unpack(b, ordinal_key(s.index, s.slot)).size;
    e.stack = b.stack;
    e.alloc_thread = s.index;
    e.tag = b.tag;
    if (s.has_last_kept && s.last_kept == s.slot) {
      e.temporary = true;
      s.has_last_kept = false;
    }
  }
  for (event_sink* sink : sinks_) sink->on_free(e);
}

// LIVE: the kept blocks listed are known by address from here on, as if ADDRESSES had listed
// them; other threads' FREEs of them come after (the recorder writes LIVE before a second
// thread starts).
void event_merge::state::process_live(stream& s) {
  for (std::size_t i = 0; i + 1 < s.scratch.size(); i += 2) {
    live_block kept{};
    if (!s.kept.erase(s.scratch[i], kept)) continue;  // freed already (a damaged trace)
    const std::uint64_t addr = s.scratch[i + 1];
    bool inserted = false;
    live_block& b = live_.get(addr, inserted);
    if (!inserted) {
      const forgotten_event f{unpack(b, addr).size, b.stack, b.tag, s.time};
      for (event_sink* sink : sinks_) sink->on_forgotten(f);
    }
    b = kept;
    rekey(b, ordinal_key(s.index, s.scratch[i]), addr);
    if (s.has_last_kept && s.last_kept == s.scratch[i]) {
      s.has_last_kept = false;
      s.has_last_alloc = true;
      s.last_alloc = addr;
    }
  }
}

// The rule for events of equal stamps (docs/trace-format.md, "Timestamps"): an ALLOC that would
// receive an address still live, and a FREE of an address not live, first let the other
// streams' events of the same stamp go.
bool event_merge::state::must_wait(stream& s) {
  if (s.kind == event::alloc) {
    const ordinal_slot& slot = s.slots[static_cast<std::size_t>(s.slot)];
    return slot.state == slot_state::listed && live_.find(slot.addr) != nullptr;
  }
  if (s.kind == event::free) return live_.find(s.addr) == nullptr;
  return false;
}

// A deferred stream in `heap` whose event of stamp `time` need not wait any longer, made
// undeferred (the heap put in order again): whether there was one. Only when an event must wait
// and every other of its stamp already does: a scan of the streams, not of the events.
template <class Later>
bool event_merge::state::let_go_one(std::vector<std::uint32_t>& heap, std::uint64_t time,
                                    const Later& later) {
  for (const std::uint32_t j : heap) {
    stream& other = streams_[j];
    if (other.time != time || !other.deferred || must_wait(other)) continue;
    other.deferred = false;
    std::make_heap(heap.begin(), heap.end(), later);
    return true;
  }
  return false;
}

void event_merge::state::process_free(stream& s) {
  free_event e;
  e.thread = s.index;
  e.tick = s.time;
  e.address = s.addr;
  live_block b{};
  if (live_.erase(s.addr, b)) {
    const wide_block w = unpack(b, s.addr);
    e.matched = true;
    e.size = w.size;
    e.stack = b.stack;
    e.alloc_thread = w.stream;
    e.tag = b.tag;
    if (w.stream == s.index && s.has_last_alloc && s.last_alloc == s.addr) {
      e.temporary = true;
      s.has_last_alloc = false;
    }
  }
  for (event_sink* sink : sinks_) sink->on_free(e);
}

void event_merge::state::process_module(stream& s) {
  const auto index = static_cast<std::uint32_t>(modules_.size());
  recorded_module m;
  m.id = s.id_field;
  m.desc.path = std::string(s.path);
  m.desc.bias = s.bias;
  m.symbolizer_key = index;
  for (const recorded_module& other : modules_) {
    if (other.desc.path == m.desc.path && other.desc.bias == m.desc.bias) {
      m.symbolizer_key = other.symbolizer_key;
      break;
    }
  }
  modules_.push_back(std::move(m));
  module_of_id_[s.id_field] = index;
  if (const auto pending = pending_ids_.find(s.id_field); pending != pending_ids_.end()) {
    fmt::module_id_record r;
    r.id = s.id_field;
    r.build_id = pending->second.build_id;
    r.size = pending->second.size;
    r.mtime_ns = pending->second.mtime_ns;
    note_module_id(r);
    pending_ids_.erase(pending);
  }
  for (std::size_t i = 0; i + 1 < s.scratch.size(); i += 2) {
    const std::uint64_t start = s.scratch[i];
    const std::uint64_t size = s.scratch[i + 1];
    const std::uint64_t end = size > ~std::uint64_t{0} - start ? ~std::uint64_t{0} : start + size;
    segments_[start] = segment_end{end, index};
    if (!unresolved_.empty()) resolve_in(start, end, index, s.time);
  }
  ++modules_epoch_;
  const module_event e{s.index, s.time, index};
  for (event_sink* sink : sinks_) sink->on_module(e);
}

void event_merge::state::note_module_id(const fmt::module_id_record& r) {
  const auto it = module_of_id_.find(r.id);
  if (it == module_of_id_.end()) {
    module_desc& d = pending_ids_[r.id];
    d.build_id = std::string(r.build_id);
    d.size = r.size;
    d.mtime_ns = r.mtime_ns;
    return;
  }
  const std::uint32_t index = it->second;
  recorded_module& m = modules_[index];
  m.desc.identified = true;
  m.desc.build_id = std::string(r.build_id);
  m.desc.size = r.size;
  m.desc.mtime_ns = r.mtime_ns;
  // The same path at the same address but another file (rebuilt between a dlclose and a
  // dlopen): symbolized on its own.
  if (m.symbolizer_key != index && modules_[m.symbolizer_key].desc.build_id != m.desc.build_id)
    m.symbolizer_key = index;
}

void event_merge::state::process_unmodule(stream& s) {
  const auto it = module_of_id_.find(s.id_field);
  if (it == module_of_id_.end()) return;
  for (auto seg = segments_.begin(); seg != segments_.end();) {
    if (seg->second.module == it->second)
      seg = segments_.erase(seg);
    else
      ++seg;
  }
  ++modules_epoch_;
  const module_event e{s.index, s.time, it->second};
  for (event_sink* sink : sinks_) sink->on_unmodule(e);
}

// A version 6 ALLOC's stack: any stream's definition merged before it. One that is not was in a
// block that did not reach the file (a thread killed, or lost in a crash): the allocation is
// counted without its stack.
std::uint32_t event_merge::state::process_stack_of(stream& s) {
  if (const std::uint32_t* merged = process_stacks_.find(s.stack_id)) return *merged;
  ++undefined_stack_events_;
  if (no_stack_ == no_module) no_stack_ = intern_stack({});
  return no_stack_;
}

void event_merge::state::process(stream& s) {
  if (!s.unresolved.empty() && s.kind != event::stack) close_unresolved(s);
  switch (s.kind) {
    case event::alloc:
      if (s.stack == not_a_stack) s.stack = process_stack_of(s);
      process_alloc(s);
      break;
    case event::free:
      process_free(s);
      break;
    case event::free_local:
      process_free_local(s);
      break;
    case event::free_kept:
      process_free_kept(s);
      break;
    case event::live:
      process_live(s);
      break;
    case event::module:
      process_module(s);
      break;
    case event::unmodule:
      process_unmodule(s);
      break;
    case event::stack: {
      const std::uint32_t merged = intern_stack(s.scratch, &s);
      bool inserted = false;
      std::uint32_t& id = (process_ids_ ? process_stacks_ : s.stacks).get(s.id_field, inserted);
      // From version 6 two threads that met a stack at the same moment both define it.
      if (process_ids_ && !inserted && id != merged)
        throw block_damage{s.current_block, "damaged block of stream " + std::to_string(s.id) +
                                                ": stack id " + std::to_string(s.id_field) +
                                                " defined again with other frames"};
      id = merged;
      break;
    }
  }
}

void event_merge::state::run() {
  for (event_sink* sink : sinks_) sink->on_begin();
  std::unordered_map<std::uint32_t, std::uint32_t> stream_of_id;
  for (std::size_t b = 0; b < limit_; ++b) {
    const std::uint32_t id = index_.blocks[b].stream;
    auto [it, inserted] = stream_of_id.try_emplace(id, static_cast<std::uint32_t>(streams_.size()));
    if (inserted) {
      streams_.emplace_back();
      streams_.back().id = id;
      streams_.back().index = it->second;
    }
    streams_[it->second].blocks.push_back(static_cast<std::uint32_t>(b));
  }

  // A min-heap of streams by (time of the pending event, deferred, its place among the events of
  // its stamp, stream index).
  const auto later = [this](std::uint32_t a, std::uint32_t b) {
    const stream& x = streams_[a];
    const stream& y = streams_[b];
    if (x.time != y.time) return x.time > y.time;
    if (x.deferred != y.deferred) return x.deferred;
    if (x.order != y.order) return x.order > y.order;
    return a > b;
  };
  std::vector<std::uint32_t> heap;
  for (stream& s : streams_)
    if (advance(s)) heap.push_back(s.index);
  std::make_heap(heap.begin(), heap.end(), later);
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), later);
    const std::uint32_t i = heap.back();
    heap.pop_back();
    stream& s = streams_[i];
    s.deferred = false;
    // Stay on this stream while its next event is still the earliest: no heap work per event.
    for (;;) {
      // An event that must wait does, if another stream's event of its stamp can go first: one
      // not deferred, or a deferred one that the events taken since have let go (the other
      // thread's free of the address this ALLOC receives, the ALLOC of the address this FREE
      // frees). When none can, the events of the stamp have no order that suits them all: this
      // one goes on.
      if (!heap.empty() && streams_[heap.front()].time == s.time && must_wait(s) &&
          (!streams_[heap.front()].deferred || let_go_one(heap, s.time, later))) {
        s.deferred = true;
        heap.push_back(i);
        std::push_heap(heap.begin(), heap.end(), later);
        break;
      }
      process(s);
      if (!advance(s)) break;
      if (!heap.empty() && later(i, heap.front())) {
        heap.push_back(i);
        std::push_heap(heap.begin(), heap.end(), later);
        break;
      }
    }
  }
  // What only the merge needed: the live blocks (the sinks counted what is left) and the
  // tables that interned the stacks. Their memory goes before the stacks are symbolized.
  live_ = detail::u64_map<live_block>();
  wide_.clear();
  for (stream& s : streams_) s.kept = decltype(s.kept)();
  location_of_address_ = detail::u64_map<std::uint32_t>();
  other_locations_.clear();
  child_of_ = detail::u64_map<std::uint32_t>();
  first_child_ = std::vector<std::uint32_t>();
  next_sibling_ = std::vector<std::uint32_t>();
  stack_of_node_ = std::vector<std::uint32_t>();
}

double event_merge::state::run_time_seconds() const noexcept {
  // The events' tick span, or the span of the TIME records' nanoseconds (the first block opens
  // when tracing starts, the recorder writes one more at the end) when that is longer: ticks are
  // coarse (65-130 us), so a short program's events may all share one tick.
  double seconds = 0;
  if (first_tick_ <= last_tick_ && rate_.ns_per_tick() != 0)
    seconds = static_cast<double>(last_tick_ - first_tick_) * rate_.ns_per_tick() / 1e9;
  if (rate_.have) seconds = std::max(seconds, static_cast<double>(max_ns_ - min_ns_) / 1e9);
  return seconds;
}

event_merge::event_merge(const std::uint8_t* data, const file_index& index, std::size_t limit,
                         const detail::file_bytes* file)
    : s_(std::make_unique<state>(data, index, limit, file)) {}

event_merge::~event_merge() = default;

void event_merge::add_sink(event_sink& sink) { s_->sinks_.push_back(&sink); }

void event_merge::run() { s_->run(); }

const recorded_stacks& event_merge::stacks() const noexcept { return s_->stacks_; }

std::uint64_t event_merge::undefined_stack_events() const noexcept {
  return s_->undefined_stack_events_;
}

const std::vector<recorded_module>& event_merge::modules() const noexcept { return s_->modules_; }

std::uint64_t event_merge::threads() const noexcept { return s_->streams_.size(); }

double event_merge::run_time_seconds() const noexcept { return s_->run_time_seconds(); }

}  // namespace lowalloc::analyze
