// Aggregation of a trace: a k-way merge of the streams by timestamp over one decompressed block
// per stream, live blocks in an open-addressing map, then symbolization and folding of the
// distinct stacks into sites. docs/tracer.md ("What the numbers mean") is the specification.
#include "analyze/analysis.hpp"

#include "analyze/flat_map.hpp"
#include "analyze/fold.hpp"
#include "analyze/symbolize.hpp"
#include "analyze/trace_reader.hpp"
#include "trace/format.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <memory>
#include <unordered_map>
#include <utility>

namespace lowalloc::analyze {

std::size_t histogram::bucket_of(std::uint64_t size) noexcept {
  if (size < exact_sizes) return static_cast<std::size_t>(size);
  // (2^k, 2^(k+1)] holds the sizes whose size - 1 has k + 1 significant bits.
  const auto bits = static_cast<std::size_t>(64 - __builtin_clzll(size - 1));
  return exact_sizes + bits - 9;
}

std::uint64_t histogram::bucket_min(std::size_t bucket) noexcept {
  if (bucket < exact_sizes) return bucket;
  return (std::uint64_t{1} << (bucket - exact_sizes + 8)) + 1;
}

std::uint64_t histogram::bucket_max(std::size_t bucket) noexcept {
  if (bucket < exact_sizes) return bucket;
  const std::size_t k = bucket - exact_sizes + 9;
  return k >= 64 ? ~std::uint64_t{0} : std::uint64_t{1} << k;
}

namespace {

namespace fmt = lowalloc::trace_format;
using detail::block_ref;
using detail::file_index;
using detail::payload_error;
using detail::payload_reader;

constexpr std::uint32_t no_module = ~std::uint32_t{0};
constexpr std::uint64_t buckets_per_stack = 320;  // >= histogram counts, for the bucket map key

/// Damage found while decoding: the block (index into file_index::blocks) and what is wrong.
struct block_damage {
  std::size_t block;
  std::string message;
};

[[noreturn]] void throw_unknown_tag(std::uint8_t tag) {
  static const char hex[] = "0123456789abcdef";
  throw payload_error(std::string("unknown record tag 0x") + hex[tag >> 4] + hex[tag & 15]);
}

struct live_block {
  std::uint64_t size;
  std::uint32_t stack;   // raw stack index
  std::uint32_t stream;  // stream index
};

// A distinct stack as recorded (addresses and the module each lies in), before symbolization.
struct raw_stack {
  std::uint32_t first = 0;  // into engine::frame_addr_ / frame_module_
  std::uint32_t count = 0;
  counters c;  // allocations, bytes_allocated, frees, temporary
  std::uint64_t live_bytes = 0;
  std::uint64_t live_count = 0;
  std::uint64_t at_peak = 0;  // live_bytes at the latest peak, valid when epoch is current
  std::uint64_t epoch = 0;
};

struct module_rec {
  std::uint64_t id = 0;
  detail::module_desc desc;
  std::size_t symbolizer_key = 0;  // modules with the same path and bias share a key
};

struct segment {
  std::uint64_t end;
  std::uint32_t module;
};

enum class event : std::uint8_t { alloc, free, free_local, module, unmodule, stack };

// What the block says about the address of each of its allocations (by ordinal).
enum class slot_state : std::uint8_t {
  lost,    // neither freed in the block nor listed: its free was not recorded
  listed,  // its address is in the block's ADDRESSES record
  local,   // freed by a FREE_LOCAL of the block; the address is never written
};

struct ordinal_slot {
  std::uint64_t addr = 0;  // listed: the address
  std::uint64_t size = 0;  // local: set when the ALLOC is merged
  std::uint32_t raw = 0;
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
  payload_reader reader;
  std::uint64_t clock = 0;
  std::uint64_t prev_addr = 0;            // of FREE records, per block
  std::vector<ordinal_slot> slots;        // the current block's allocations
  std::uint64_t ordinal = 0;              // ALLOC records decoded in the current block
  detail::u64_map<std::uint32_t> stacks;  // stack id -> raw stack index
  bool has_last_alloc = false;            // the latest ALLOC has a known address...
  std::uint64_t last_alloc = 0;           // ...this one
  bool deferred = false;                  // waits for the other streams' events of its stamp

  // The pending event: decoded, not yet merged.
  event kind = event::alloc;
  std::uint64_t time = 0;
  std::uint8_t alloc_kind = 0;
  std::uint64_t size = 0;
  std::uint64_t addr = 0;
  std::uint32_t raw = 0;
  std::uint64_t slot = 0;      // ALLOC: its ordinal; FREE_LOCAL: the ordinal it frees
  bool latest = false;         // FREE_LOCAL of the latest allocation (distance 0)
  std::uint64_t id_field = 0;  // MODULE, UNMODULE and STACK id
  std::uint64_t bias = 0;
  std::string_view path;
  std::vector<std::uint64_t> scratch;  // MODULE: start, size pairs; STACK: addresses
};

class engine {
 public:
  engine(const std::uint8_t* data, const file_index& index, std::size_t limit)
      : data_(data), index_(index), limit_(limit) {}

  void run();
  analysis finish(const options& opts);

 private:
  bool load_block(stream& s);
  void scan_block(stream& s);
  bool advance(stream& s);
  bool decode(stream& s);
  bool must_wait(stream& s);
  void process(stream& s);
  void process_alloc(stream& s);
  void process_free(stream& s);
  void process_free_local(stream& s);
  void process_module(stream& s);
  void process_unmodule(stream& s);
  std::uint32_t intern_stack(const std::vector<std::uint64_t>& ips);
  std::uint32_t module_at(std::uint64_t addr) const;

  void touch(raw_stack& r) noexcept {
    if (r.epoch != epoch_) {
      r.at_peak = r.live_bytes;
      r.epoch = epoch_;
    }
  }
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
  detail::decompressor decompressor_;
  std::vector<stream> streams_;

  analysis out_;
  bool have_process_ = false;
  detail::u64_map<live_block> live_;
  std::uint64_t live_bytes_ = 0;
  std::uint64_t live_count_ = 0;
  std::uint64_t epoch_ = 0;

  std::vector<raw_stack> raws_;
  std::vector<std::uint64_t> frame_addr_;
  std::vector<std::uint32_t> frame_module_;
  std::unordered_map<std::string, std::uint32_t> raw_of_key_;
  std::string key_;
  std::uint32_t no_stack_raw_ = no_module;        // the raw stack of stack id 0, once made
  detail::u64_map<std::uint64_t> bucket_counts_;  // raw * buckets_per_stack + bucket -> count

  std::vector<module_rec> modules_;
  std::unordered_map<std::uint64_t, std::uint32_t> module_of_id_;
  std::map<std::uint64_t, segment> segments_;  // loaded, by start address

  std::uint64_t first_tick_ = ~std::uint64_t{0};
  std::uint64_t last_tick_ = 0;
  bool have_pair_ = false;
  std::uint64_t pair_lo_ticks_ = 0, pair_lo_ns_ = 0, pair_hi_ticks_ = 0, pair_hi_ns_ = 0;
  std::uint64_t min_ns_ = 0, max_ns_ = 0;  // CLOCK_MONOTONIC of the first and last TIME records
};

bool engine::load_block(stream& s) {
  while (s.next_block < s.blocks.size()) {
    s.current_block = s.blocks[s.next_block++];
    const block_ref& b = index_.blocks[s.current_block];
    if (b.decompressed > s.capacity || s.buffer == nullptr) {
      s.capacity = std::max<std::size_t>(b.decompressed, 1);
      s.buffer.reset(new std::uint8_t[s.capacity]);
    }
    s.reader = payload_reader();  // an error below is about the block, not a record
    decompressor_.decompress(data_, b, s.buffer.get());
    s.reader = payload_reader(s.buffer.get(), s.buffer.get() + b.decompressed);
    s.prev_addr = 0;
    s.ordinal = 0;
    if (b.decompressed == 0) continue;
    if (s.buffer[0] != fmt::tag_time)
      throw payload_error("the block does not begin with a TIME record");
    scan_block(s);
    s.reader = payload_reader(s.buffer.get(), s.buffer.get() + b.decompressed);
    return true;
  }
  s.buffer.reset();
  s.capacity = 0;
  return false;
}

// A first pass over a block: checks every record and learns the fate of each allocation (freed
// in the block, listed in ADDRESSES, or neither) before any of its events is merged.
void engine::scan_block(stream& s) {
  payload_reader& r = s.reader;
  s.slots.clear();
  bool have_addresses = false;
  while (!r.done()) {
    const std::uint8_t tag = r.byte();
    switch (tag) {
      case fmt::tag_time:
        r.varint();
        r.varint();
        break;
      case fmt::tag_process: {
        r.varint();
        r.varint();
        r.varint();
        r.string();
        const std::uint64_t argc = r.count(1);
        for (std::uint64_t i = 0; i < argc; ++i) r.string();
        break;
      }
      case fmt::tag_thread:
      case fmt::tag_reset:
      case fmt::tag_lost:
      case fmt::tag_end:
        r.varint();
        break;
      case fmt::tag_exec:
        r.varint();
        r.string();
        break;
      case fmt::tag_module: {
        r.varint();
        r.varint();
        r.varint();
        r.string();
        const std::uint64_t n = r.count(2);
        for (std::uint64_t i = 0; i < 2 * n; ++i) r.varint();
        break;
      }
      case fmt::tag_unmodule:
        r.varint();
        r.varint();
        break;
      case fmt::tag_stack: {
        r.varint();
        const std::uint64_t n = r.count(1);
        for (std::uint64_t i = 0; i < n; ++i) r.varint();
        break;
      }
      case fmt::tag_free:
        r.varint();
        r.varint();
        break;
      case fmt::tag_free_local: {
        r.varint();
        const std::uint64_t distance = r.varint();
        const std::uint64_t n = s.slots.size();
        if (distance >= n)
          throw payload_error("FREE_LOCAL of the allocation " + std::to_string(distance) +
                              " back, with " + std::to_string(n) + " in the block before it");
        ordinal_slot& slot = s.slots[static_cast<std::size_t>(n - 1 - distance)];
        if (slot.state == slot_state::local)
          throw payload_error("FREE_LOCAL frees allocation " + std::to_string(n - 1 - distance) +
                              " of the block twice");
        slot.state = slot_state::local;
        break;
      }
      case fmt::tag_addresses: {
        if (have_addresses) throw payload_error("a second ADDRESSES record in the block");
        have_addresses = true;
        const std::uint64_t count = r.count(2);
        std::uint64_t ordinal = 0;
        std::uint64_t addr = 0;
        for (std::uint64_t i = 0; i < count; ++i) {
          const std::uint64_t delta = r.varint();
          if (i != 0 && delta == 0) throw payload_error("ADDRESSES ordinals not increasing");
          ordinal += delta;
          addr += static_cast<std::uint64_t>(r.svarint());
          if (ordinal < delta || ordinal >= s.slots.size())
            throw payload_error("ADDRESSES lists allocation " + std::to_string(ordinal) +
                                " of a block with " + std::to_string(s.slots.size()));
          ordinal_slot& slot = s.slots[static_cast<std::size_t>(ordinal)];
          if (slot.state != slot_state::lost)
            throw payload_error("ADDRESSES lists allocation " + std::to_string(ordinal) +
                                ", which the block frees");
          slot.state = slot_state::listed;
          slot.addr = addr;
        }
        break;
      }
      default:
        if (tag >= fmt::tag_alloc && tag < fmt::tag_alloc + 8) {
          r.varint();
          r.varint();
          r.varint();
          s.slots.emplace_back();
          break;
        }
        throw_unknown_tag(tag);
    }
  }
}

// Decodes up to the next event of the stream that takes part in the merge; false at its end.
bool engine::advance(stream& s) {
  try {
    return decode(s);
  } catch (const payload_error& e) {
    std::string what = "damaged block of stream " + std::to_string(s.id) + ": " + e.what();
    if (s.reader.position() > 0) what += " at payload byte " + std::to_string(s.reader.position());
    throw block_damage{s.current_block, std::move(what)};
  }
}

bool engine::decode(stream& s) {
  for (;;) {
    if (s.reader.done() && !load_block(s)) return false;
    payload_reader& r = s.reader;
    const std::uint8_t tag = r.byte();
    switch (tag) {
      case fmt::tag_time: {
        const std::uint64_t ticks = r.varint();
        const std::uint64_t ns = r.varint();
        s.clock = ticks;
        note_time(ticks);
        if (!have_pair_ || ticks < pair_lo_ticks_) {
          pair_lo_ticks_ = ticks;
          pair_lo_ns_ = ns;
        }
        if (!have_pair_ || ticks > pair_hi_ticks_) {
          pair_hi_ticks_ = ticks;
          pair_hi_ns_ = ns;
        }
        if (!have_pair_ || ns < min_ns_) min_ns_ = ns;
        if (!have_pair_ || ns > max_ns_) max_ns_ = ns;
        have_pair_ = true;
        break;
      }
      case fmt::tag_process: {
        process_info p;
        p.pid = r.varint();
        p.ppid = r.varint();
        const std::uint64_t flags = r.varint();
        p.fork_child = (flags & fmt::process_flag_fork_child) != 0;
        p.exec_child = (flags & fmt::process_flag_exec) != 0;
        p.exe = std::string(r.string());
        const std::uint64_t argc = r.count(1);
        for (std::uint64_t i = 0; i < argc; ++i) p.argv.emplace_back(r.string());
        if (!have_process_) {
          out_.process = std::move(p);
          have_process_ = true;
        }
        break;
      }
      case fmt::tag_thread:
        r.varint();
        break;
      case fmt::tag_module: {
        tick(s, r.varint());
        s.id_field = r.varint();
        s.bias = r.varint();
        s.path = r.string();
        const std::uint64_t n = r.count(2);
        s.scratch.clear();
        for (std::uint64_t i = 0; i < 2 * n; ++i) s.scratch.push_back(r.varint());
        s.kind = event::module;
        return true;
      }
      case fmt::tag_unmodule:
        tick(s, r.varint());
        s.id_field = r.varint();
        s.kind = event::unmodule;
        return true;
      case fmt::tag_stack: {
        s.id_field = r.varint();
        if (s.id_field == 0) throw payload_error("a STACK record defines stack id 0");
        const std::uint64_t n = r.count(1);
        s.scratch.clear();
        if (n > 0) {
          std::uint64_t ip = r.varint();
          s.scratch.push_back(ip);
          for (std::uint64_t i = 1; i < n; ++i) {
            ip += static_cast<std::uint64_t>(r.svarint());
            s.scratch.push_back(ip);
          }
        }
        s.time = s.clock;
        s.kind = event::stack;
        return true;
      }
      case fmt::tag_reset:
        tick(s, r.varint());
        s.stacks.clear();
        break;
      case fmt::tag_free:
        tick(s, r.varint());
        s.prev_addr += static_cast<std::uint64_t>(r.svarint());
        s.addr = s.prev_addr;
        s.kind = event::free;
        return true;
      case fmt::tag_free_local: {
        tick(s, r.varint());
        const std::uint64_t distance = r.varint();  // checked by scan_block
        s.slot = s.ordinal - 1 - distance;
        s.latest = distance == 0;
        s.kind = event::free_local;
        return true;
      }
      case fmt::tag_addresses: {  // read by scan_block
        const std::uint64_t count = r.count(2);
        for (std::uint64_t i = 0; i < count; ++i) {
          r.varint();
          r.varint();
        }
        break;
      }
      case fmt::tag_lost:
        out_.lost_events += r.varint();
        break;
      case fmt::tag_end:
        tick(s, r.varint());
        out_.complete = true;
        break;
      case fmt::tag_exec:  // the image was replaced: it ended normally
        tick(s, r.varint());
        out_.exec_path = std::string(r.string());
        out_.complete = true;
        break;
      default: {
        if (tag >= fmt::tag_alloc && tag < fmt::tag_alloc + 8) {
          tick(s, r.varint());
          s.alloc_kind = static_cast<std::uint8_t>(tag - fmt::tag_alloc);
          s.size = r.varint();
          s.slot = s.ordinal++;
          const std::uint64_t id = r.varint();
          if (id == 0) {
            if (no_stack_raw_ == no_module) no_stack_raw_ = intern_stack({});
            s.raw = no_stack_raw_;
          } else if (const std::uint32_t* raw = s.stacks.find(id)) {
            s.raw = *raw;
          } else {
            throw payload_error("stack id " + std::to_string(id) + " used before it is defined");
          }
          s.kind = event::alloc;
          return true;
        }
        throw_unknown_tag(tag);
      }
    }
  }
}

std::uint32_t engine::module_at(std::uint64_t addr) const {
  auto it = segments_.upper_bound(addr);
  if (it == segments_.begin()) return no_module;
  --it;
  return addr < it->second.end ? it->second.module : no_module;
}

std::uint32_t engine::intern_stack(const std::vector<std::uint64_t>& ips) {
  key_.clear();
  const std::size_t first = frame_addr_.size();
  for (const std::uint64_t ip : ips) {
    // A return address lies just after the call: the call is in the module of ip - 1.
    const std::uint32_t m = module_at(ip == 0 ? 0 : ip - 1);
    frame_addr_.push_back(ip);
    frame_module_.push_back(m);
    key_.append(reinterpret_cast<const char*>(&ip), sizeof ip);
    key_.append(reinterpret_cast<const char*>(&m), sizeof m);
  }
  auto [it, inserted] = raw_of_key_.try_emplace(key_, static_cast<std::uint32_t>(raws_.size()));
  if (inserted) {
    raw_stack r;
    r.first = static_cast<std::uint32_t>(first);
    r.count = static_cast<std::uint32_t>(ips.size());
    raws_.push_back(r);
  } else {
    frame_addr_.resize(first);
    frame_module_.resize(first);
  }
  return it->second;
}

void engine::process_alloc(stream& s) {
  const std::uint64_t size = s.size;
  raw_stack& r = raws_[s.raw];
  counters& t = out_.totals;
  ++t.allocations;
  t.bytes_allocated += size;
  ++out_.allocations_by_kind[s.alloc_kind];
  const std::size_t bucket = histogram::bucket_of(size);
  ++out_.sizes.counts[bucket];
  ++r.c.allocations;
  r.c.bytes_allocated += size;
  bool inserted = false;
  ++bucket_counts_.get(std::uint64_t{s.raw} * buckets_per_stack + bucket, inserted);

  ordinal_slot& slot = s.slots[static_cast<std::size_t>(s.slot)];
  switch (slot.state) {
    case slot_state::lost:
      // Its address was handed out again without a recorded free: never live, a lost event.
      ++out_.lost_events;
      s.has_last_alloc = false;
      return;
    case slot_state::local:
      slot.size = size;
      slot.raw = s.raw;
      s.has_last_alloc = false;
      break;
    case slot_state::listed: {
      live_block& b = live_.get(slot.addr, inserted);
      if (!inserted) {
        // The address is live already: its FREE was not recorded. Drop the old block, uncounted.
        raw_stack& old = raws_[b.stack];
        touch(old);
        old.live_bytes -= b.size;
        --old.live_count;
        live_bytes_ -= b.size;
        --live_count_;
      }
      b = live_block{size, s.raw, s.index};
      s.has_last_alloc = true;
      s.last_alloc = slot.addr;
      break;
    }
  }
  touch(r);
  r.live_bytes += size;
  ++r.live_count;
  live_bytes_ += size;
  ++live_count_;
  if (live_bytes_ > t.peak_bytes) {
    t.peak_bytes = live_bytes_;
    ++epoch_;  // every stack's at_peak is stale: each refreshes it lazily on its next change
  }
}

void engine::process_free_local(stream& s) {
  const ordinal_slot& slot = s.slots[static_cast<std::size_t>(s.slot)];
  raw_stack& r = raws_[slot.raw];
  touch(r);
  r.live_bytes -= slot.size;
  --r.live_count;
  live_bytes_ -= slot.size;
  --live_count_;
  ++r.c.frees;
  ++out_.totals.frees;
  if (s.latest) {  // the stream's latest allocation: nothing allocated in between
    ++r.c.temporary;
    ++out_.totals.temporary;
  }
  s.has_last_alloc = false;
}

// The rule for events of equal stamps (docs/trace-format.md, "Timestamps"): an ALLOC that would
// receive an address still live, and a FREE of an address not live, first let the other
// streams' events of the same stamp go.
bool engine::must_wait(stream& s) {
  if (s.kind == event::alloc) {
    const ordinal_slot& slot = s.slots[static_cast<std::size_t>(s.slot)];
    return slot.state == slot_state::listed && live_.find(slot.addr) != nullptr;
  }
  if (s.kind == event::free) return live_.find(s.addr) == nullptr;
  return false;
}

void engine::process_free(stream& s) {
  live_block b{};
  if (!live_.erase(s.addr, b)) {
    ++out_.unmatched_frees;
    return;
  }
  raw_stack& r = raws_[b.stack];
  touch(r);
  r.live_bytes -= b.size;
  --r.live_count;
  live_bytes_ -= b.size;
  --live_count_;
  ++r.c.frees;
  ++out_.totals.frees;
  if (b.stream == s.index && s.has_last_alloc && s.last_alloc == s.addr) {
    ++r.c.temporary;
    ++out_.totals.temporary;
    s.has_last_alloc = false;
  }
}

void engine::process_module(stream& s) {
  const auto index = static_cast<std::uint32_t>(modules_.size());
  module_rec m;
  m.id = s.id_field;
  m.desc.path = std::string(s.path);
  m.desc.bias = s.bias;
  m.symbolizer_key = index;
  for (const module_rec& other : modules_) {
    if (other.desc.path == m.desc.path && other.desc.bias == m.desc.bias) {
      m.symbolizer_key = other.symbolizer_key;
      break;
    }
  }
  modules_.push_back(std::move(m));
  module_of_id_[s.id_field] = index;
  for (std::size_t i = 0; i + 1 < s.scratch.size(); i += 2) {
    const std::uint64_t start = s.scratch[i];
    const std::uint64_t size = s.scratch[i + 1];
    const std::uint64_t end = size > ~std::uint64_t{0} - start ? ~std::uint64_t{0} : start + size;
    segments_[start] = segment{end, index};
  }
}

void engine::process_unmodule(stream& s) {
  const auto it = module_of_id_.find(s.id_field);
  if (it == module_of_id_.end()) return;
  for (auto seg = segments_.begin(); seg != segments_.end();) {
    if (seg->second.module == it->second)
      seg = segments_.erase(seg);
    else
      ++seg;
  }
}

void engine::process(stream& s) {
  switch (s.kind) {
    case event::alloc:
      process_alloc(s);
      break;
    case event::free:
      process_free(s);
      break;
    case event::free_local:
      process_free_local(s);
      break;
    case event::module:
      process_module(s);
      break;
    case event::unmodule:
      process_unmodule(s);
      break;
    case event::stack: {
      const std::uint32_t raw = intern_stack(s.scratch);
      bool inserted = false;
      s.stacks.get(s.id_field, inserted) = raw;
      break;
    }
  }
}

void engine::run() {
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
  out_.threads = streams_.size();

  // A min-heap of streams by (time of the pending event, deferred, stream index).
  const auto later = [this](std::uint32_t a, std::uint32_t b) {
    const stream& x = streams_[a];
    const stream& y = streams_[b];
    if (x.time != y.time) return x.time > y.time;
    if (x.deferred != y.deferred) return x.deferred;
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
    // A stream popped while deferred has waited for every other event of its stamp: it goes on.
    bool may_wait = !s.deferred;
    s.deferred = false;
    // Stay on this stream while its next event is still the earliest: no heap work per event.
    for (;;) {
      if (may_wait && !heap.empty() && streams_[heap.front()].time == s.time &&
          !streams_[heap.front()].deferred && must_wait(s)) {
        s.deferred = true;
        heap.push_back(i);
        std::push_heap(heap.begin(), heap.end(), later);
        break;
      }
      may_wait = true;
      process(s);
      if (!advance(s)) break;
      if (!heap.empty() && later(i, heap.front())) {
        heap.push_back(i);
        std::push_heap(heap.begin(), heap.end(), later);
        break;
      }
    }
  }
}

analysis engine::finish(const options& opts) {
  analysis& a = out_;
  a.totals.leaked_allocations = live_count_;
  a.totals.leaked_bytes = live_bytes_;
  // Run time: the events' tick span, or the span of the TIME records' nanoseconds (the first
  // block opens when tracing starts, the recorder writes one more at the end) when that is longer:
  // ticks are coarse (65-130 us), so a short program's events may all share one tick.
  if (first_tick_ <= last_tick_ && pair_hi_ticks_ > pair_lo_ticks_ && pair_hi_ns_ > pair_lo_ns_) {
    const double ns_per_tick = static_cast<double>(pair_hi_ns_ - pair_lo_ns_) /
                               static_cast<double>(pair_hi_ticks_ - pair_lo_ticks_);
    a.run_time_seconds = static_cast<double>(last_tick_ - first_tick_) * ns_per_tick / 1e9;
  }
  if (have_pair_)
    a.run_time_seconds = std::max(a.run_time_seconds, static_cast<double>(max_ns_ - min_ns_) / 1e9);

  // Symbolize each distinct (module, address) once, fold, and merge equal stacks into sites.
  std::unique_ptr<detail::symbolizer> sym;
  if (opts.symbolize) sym = std::make_unique<detail::symbolizer>();
  std::map<std::pair<std::uint32_t, std::uint64_t>, std::vector<frame>> resolved;
  std::unordered_map<std::string, std::uint32_t> site_of_key;
  std::vector<std::uint32_t> site_of_raw(raws_.size(), 0);
  std::vector<frame> frames;
  std::string key;
  for (std::size_t ri = 0; ri < raws_.size(); ++ri) {
    raw_stack& r = raws_[ri];
    if (r.c.allocations == 0) continue;
    touch(r);
    frames.clear();
    for (std::uint32_t k = r.first; k < r.first + r.count; ++k) {
      const std::uint64_t addr = frame_addr_[k];
      const std::uint32_t m = frame_module_[k];
      if (m == no_module) {
        frame f;
        f.address = addr;
        frames.push_back(std::move(f));
        continue;
      }
      const module_rec& mod = modules_[m];
      auto [it, inserted] = resolved.try_emplace({mod.symbolizer_key, addr});
      if (inserted) {
        if (sym != nullptr) {
          sym->resolve(mod.symbolizer_key, mod.desc, addr, it->second);
        } else {
          frame f;
          f.address = addr;
          f.module = mod.desc.path;
          f.offset = addr - mod.desc.bias;
          it->second.push_back(std::move(f));
        }
      }
      frames.insert(frames.end(), it->second.begin(), it->second.end());
    }
    const std::size_t folded = opts.fold_allocator ? detail::fold_count(frames) : 0;
    frames.erase(frames.begin(), frames.begin() + static_cast<std::ptrdiff_t>(folded));

    // A site is what the user sees: symbolized frames compare by function, file, line and
    // module (two calls on one line are one site), unsymbolized ones by address.
    key.clear();
    for (const frame& f : frames) {
      if (f.function.empty())
        key.append(reinterpret_cast<const char*>(&f.address), sizeof f.address);
      key += f.module;
      key += '\0';
      key += f.function;
      key += '\0';
      key += f.file;
      key += '\0';
      key.append(reinterpret_cast<const char*>(&f.line), sizeof f.line);
      key += f.inlined ? '1' : '0';
    }
    auto [it, inserted] = site_of_key.try_emplace(key, static_cast<std::uint32_t>(a.sites.size()));
    if (inserted) {
      a.sites.emplace_back();
      a.sites.back().stack = frames;
    }
    site& st = a.sites[it->second];
    site_of_raw[ri] = it->second;
    st.folded_frames = std::max(st.folded_frames, folded);
    st.totals.allocations += r.c.allocations;
    st.totals.bytes_allocated += r.c.bytes_allocated;
    st.totals.frees += r.c.frees;
    st.totals.temporary += r.c.temporary;
    st.totals.leaked_allocations += r.live_count;
    st.totals.leaked_bytes += r.live_bytes;
    st.totals.peak_bytes += r.at_peak;
  }
  bucket_counts_.for_each([&](std::uint64_t k, std::uint64_t count) {
    const auto raw = static_cast<std::size_t>(k / buckets_per_stack);
    const auto bucket = static_cast<std::size_t>(k % buckets_per_stack);
    a.sites[site_of_raw[raw]].sizes.counts[bucket] += count;
  });
  std::stable_sort(a.sites.begin(), a.sites.end(), [](const site& x, const site& y) {
    if (x.totals.allocations != y.totals.allocations)
      return x.totals.allocations > y.totals.allocations;
    return x.totals.bytes_allocated > y.totals.bytes_allocated;
  });
  return std::move(out_);
}

// The file, mapped (or read when it cannot be mapped).
class file_bytes {
 public:
  explicit file_bytes(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw trace_error(std::string("cannot open: ") + std::strerror(errno));
    struct stat st {};
    if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
      size_ = static_cast<std::size_t>(st.st_size);
      if (size_ > 0) {
        void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
        if (p != MAP_FAILED) {
          map_ = p;
          data_ = static_cast<const std::uint8_t*>(p);
          ::close(fd);
          return;
        }
      }
    }
    // Not a regular file, or mmap failed: read it all.
    std::uint8_t chunk[1 << 16];
    for (;;) {
      const ssize_t n = ::read(fd, chunk, sizeof chunk);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        const int err = errno;
        ::close(fd);
        throw trace_error(std::string("cannot read: ") + std::strerror(err));
      }
      if (n == 0) break;
      copy_.insert(copy_.end(), chunk, chunk + n);
    }
    ::close(fd);
    data_ = copy_.data();
    size_ = copy_.size();
  }
  ~file_bytes() {
    if (map_ != nullptr) ::munmap(map_, size_);
  }
  file_bytes(const file_bytes&) = delete;
  file_bytes& operator=(const file_bytes&) = delete;

  const std::uint8_t* data() const noexcept { return data_; }
  std::size_t size() const noexcept { return size_; }

 private:
  void* map_ = nullptr;
  const std::uint8_t* data_ = nullptr;
  std::size_t size_ = 0;
  std::vector<std::uint8_t> copy_;
};

}  // namespace

analysis analyze_buffer(const void* data, std::size_t size, const options& opts) {
  static const std::uint8_t empty = 0;
  const auto* bytes = size == 0 ? &empty : static_cast<const std::uint8_t*>(data);
  const file_index index = detail::index_blocks(bytes, size);

  // Damage stops reading at the damaged block: blocks before it in the file are read, the
  // ones after it are not. Decoding finds damage in merge order, not file order, so on damage
  // the merge runs again without the damaged block and what follows it (only a damaged file
  // pays for this).
  std::size_t limit = index.blocks.size();
  bool damaged = index.damaged;
  std::string damage = index.damage;
  std::uint64_t damage_offset = index.damage_offset;
  for (;;) {
    if (limit == 0) {
      if (damaged) throw trace_error(damage, damage_offset);
      throw trace_error("no blocks: the traced process wrote no events", fmt::file_header_size);
    }
    engine e(bytes, index, limit);
    try {
      e.run();
    } catch (const block_damage& d) {
      limit = d.block;
      damaged = true;
      damage = d.message;
      damage_offset = index.blocks[d.block].offset;
      continue;
    }
    analysis a = e.finish(opts);
    if (damaged) a.truncation = trace_error(damage, damage_offset).what();
    return a;
  }
}

analysis analyze_file(const std::string& path, const options& opts) {
  const file_bytes file(path);
  return analyze_buffer(file.data(), file.size(), opts);
}

}  // namespace lowalloc::analyze
