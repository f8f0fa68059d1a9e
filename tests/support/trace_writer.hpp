// An encoder of the lowalloc trace format (docs/trace-format.md) for tests: synthetic traces
// with exact, known contents, and damaged ones. Not part of lowalloc's API.
//
//   lowalloc_test::trace_writer w;
//   w.block(1, 1000);                        // stream 1, a block starting with TIME 1000
//   w.stack(1, {0x401234}).alloc(1010, 32, 0x5000, 1).free(1020, 0x5000);
//   w.end_block();
//   w.save(path);
//
// Event methods take absolute times in ticks: the writer turns them into the dt of the stream
// clock (in format version 4 a TICK record before an event whose dt is not 0, from version 5 the
// block's tick section at its end). Like the
// recorder, it writes no address in ALLOC: free() of an allocation made earlier in the open block
// becomes a FREE_LOCAL, any other free() a FREE with the address, and
// end_block() lists the block's allocations that were not freed in an ADDRESSES record (from
// format version 7 then writes ORDERS: each FREE's and listed allocation's order, given with
// order(), else 0). Then it compresses the block (zstd, with a content checksum) and appends it to
// the file.
#ifndef LOWALLOC_TESTS_SUPPORT_TRACE_WRITER_HPP
#define LOWALLOC_TESTS_SUPPORT_TRACE_WRITER_HPP

#include "trace/format.hpp"
#include "trace/records.hpp"

#include <zstd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <iterator>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace lowalloc_test {

class trace_writer {
 public:
  using bytes = std::string;
  static constexpr std::uint16_t per_stream_stacks_version = 5;

  /// A file header of the given version (and header size). By default version 5: the tests
  /// written with it define their stack ids per stream, as up to version 5 (from version 6 the
  /// ids are the process's, and the tests of that ask for it).
  explicit trace_writer(std::uint16_t version = per_stream_stacks_version,
                        std::uint16_t header_size = lowalloc::trace_format::file_header_size)
      : version_(version) {
    file_.append(lowalloc::trace_format::file_magic, 8);
    put_u16(file_, version);
    put_u16(file_, header_size);
    put_u32(file_, 0);
    file_.append(header_size > 16 ? header_size - 16u : 0u, '\0');
  }

  // --- encoding primitives -----------------------------------------------------------------------
  static void put_u16(bytes& out, std::uint16_t v) {
    out += static_cast<char>(v & 0xFF);
    out += static_cast<char>(v >> 8);
  }
  static void put_u32(bytes& out, std::uint32_t v) {
    for (int i = 0; i < 4; ++i) out += static_cast<char>((v >> (8 * i)) & 0xFF);
  }
  static void put_varint(bytes& out, std::uint64_t v) {
    while (v >= 0x80) {
      out += static_cast<char>((v & 0x7F) | 0x80);
      v >>= 7;
    }
    out += static_cast<char>(v);
  }
  static void put_svarint(bytes& out, std::int64_t v) {
    put_varint(out, (static_cast<std::uint64_t>(v) << 1) ^ static_cast<std::uint64_t>(v >> 63));
  }
  static void put_string(bytes& out, const std::string& s) {
    put_varint(out, s.size());
    out += s;
  }

  // --- blocks ------------------------------------------------------------------------------------
  /// Opens a block of `stream` with no record in it yet.
  trace_writer& begin_block(std::uint32_t stream) {
    if (open_) throw std::logic_error("trace_writer: a block is open");
    open_ = true;
    stream_ = stream;
    payload_.clear();
    prev_addr_ = 0;
    prev_stack_ = 0;
    prev_ordinal_ = 0;
    std::fill(std::begin(kept_anchor_), std::end(kept_anchor_), 0);
    free_orders_.clear();
    listed_orders_.clear();
    write_orders_ = true;
    allocs_.clear();
    events_ = 0;
    last_ticked_ = 0;
    tick_gaps_.clear();
    tick_dts_.clear();
    return *this;
  }
  /// Opens a block of `stream` that begins with TIME (ticks, ns).
  trace_writer& block(std::uint32_t stream, std::uint64_t ticks, std::uint64_t ns) {
    return begin_block(stream).time(ticks, ns);
  }
  /// The same with ticks as nanoseconds.
  trace_writer& block(std::uint32_t stream, std::uint64_t ticks) {
    return block(stream, ticks, ticks);
  }

  /// Ends the open block with ADDRESSES (if `addresses` and an allocation of the block is not
  /// freed in it), compresses it and appends it; returns the file offset of its header.
  std::size_t end_block(bool addresses = true) { return end(addresses, false); }

  /// end_block(), the payload compressed with the payload of the stream's previous block as a
  /// zstd prefix, and the header's stream id flagged so (format version 4). With `tail`, only the
  /// last `tail` bytes of that payload are the prefix (as lowalloc's recorder does).
  std::size_t end_block_prefixed(bool addresses = true, std::size_t tail = std::string::npos) {
    return end(addresses, true, tail);
  }

  /// Appends the open block with `compressed` as its payload bytes and the given size fields (and
  /// the stream id's prefixed flag).
  std::size_t end_block_raw(const bytes& compressed, std::size_t decompressed_size,
                            bool prefixed = false) {
    if (!open_) throw std::logic_error("trace_writer: no open block");
    open_ = false;
    const std::size_t offset = file_.size();
    put_u32(file_, lowalloc::trace_format::block_magic);
    put_u32(file_, static_cast<std::uint32_t>(compressed.size()));
    put_u32(file_, static_cast<std::uint32_t>(decompressed_size));
    put_u32(file_, prefixed ? stream_ | lowalloc::trace_format::stream_prefixed : stream_);
    file_ += compressed;
    previous_[stream_] = payload_;
    return offset;
  }

  /// The payload of the stream's last block ended (empty if none).
  const bytes& previous_payload(std::uint32_t stream) { return previous_[stream]; }

  static bytes compress(const bytes& payload, const bytes* prefix = nullptr) {
    ZSTD_CCtx* c = ZSTD_createCCtx();
    ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 1);
    ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, 3);
    if (prefix != nullptr) ZSTD_CCtx_refPrefix(c, prefix->data(), prefix->size());
    bytes out(ZSTD_compressBound(payload.size()), '\0');
    const std::size_t n = ZSTD_compress2(c, out.data(), out.size(), payload.data(), payload.size());
    ZSTD_freeCCtx(c);
    if (ZSTD_isError(n)) throw std::runtime_error(ZSTD_getErrorName(n));
    out.resize(n);
    return out;
  }

  // --- records (into the open block) -------------------------------------------------------------
  trace_writer& time(std::uint64_t ticks, std::uint64_t ns) {
    payload_ += static_cast<char>(lowalloc::trace_format::tag_time);
    put_varint(payload_, ticks);
    put_varint(payload_, ns);
    clock_[stream_] = ticks;
    return *this;
  }
  trace_writer& process(std::uint64_t pid, std::uint64_t ppid, std::uint64_t flags,
                        const std::string& exe, const std::vector<std::string>& argv) {
    payload_ += static_cast<char>(lowalloc::trace_format::tag_process);
    put_varint(payload_, pid);
    put_varint(payload_, ppid);
    put_varint(payload_, flags);
    put_string(payload_, exe);
    put_varint(payload_, argv.size());
    for (const std::string& a : argv) put_string(payload_, a);
    return *this;
  }
  trace_writer& thread(std::uint64_t tid) {
    payload_ += static_cast<char>(lowalloc::trace_format::tag_thread);
    put_varint(payload_, tid);
    return *this;
  }
  trace_writer& module(std::uint64_t t, std::uint64_t id, std::uint64_t bias,
                       const std::string& path,
                       const std::vector<std::pair<std::uint64_t, std::uint64_t>>& segments) {
    payload_ += static_cast<char>(lowalloc::trace_format::tag_module);
    put_varint(payload_, dt(t));
    put_varint(payload_, id);
    put_varint(payload_, bias);
    put_string(payload_, path);
    put_varint(payload_, segments.size());
    for (const auto& [start, size] : segments) {
      put_varint(payload_, start);
      put_varint(payload_, size);
    }
    return *this;
  }
  /// MODULE_ID of module `id`: its build id's bytes, its file's size and mtime.
  trace_writer& module_id(std::uint64_t id, const std::string& build_id, std::uint64_t size,
                          std::uint64_t mtime_ns) {
    payload_ += static_cast<char>(lowalloc::trace_format::tag_module_id);
    put_varint(payload_, id);
    put_string(payload_, build_id);
    put_varint(payload_, size);
    put_varint(payload_, mtime_ns);
    return *this;
  }
  trace_writer& unmodule(std::uint64_t t, std::uint64_t id) {
    payload_ += static_cast<char>(lowalloc::trace_format::tag_unmodule);
    put_varint(payload_, dt(t));
    put_varint(payload_, id);
    return *this;
  }
  /// STACK `id`: return addresses, innermost first.
  trace_writer& stack(std::uint64_t id, const std::vector<std::uint64_t>& ips) {
    payload_ += static_cast<char>(lowalloc::trace_format::tag_stack);
    put_varint(payload_, id);
    put_varint(payload_, ips.size());
    put_return_addresses(ips);
    return *this;
  }
  /// Return addresses: the first absolute, the others deltas from the one before.
  void put_return_addresses(const std::vector<std::uint64_t>& ips) {
    for (std::size_t i = 0; i < ips.size(); ++i) {
      if (i == 0)
        put_varint(payload_, ips[0]);
      else
        put_svarint(payload_, static_cast<std::int64_t>(ips[i] - ips[i - 1]));
    }
  }
  /// STACK_SHARED `id`: the `added` return addresses, innermost first, then the `shared`
  /// outermost ones of the stream's previous stack.
  trace_writer& stack_shared(std::uint64_t id, std::uint64_t shared,
                             const std::vector<std::uint64_t>& added) {
    payload_ += static_cast<char>(lowalloc::trace_format::tag_stack_shared);
    put_varint(payload_, id);
    put_varint(payload_, shared);
    put_varint(payload_, added.size());
    put_return_addresses(added);
    return *this;
  }
  trace_writer& reset(std::uint64_t t) {
    payload_ += static_cast<char>(lowalloc::trace_format::tag_reset);
    put_varint(payload_, dt(t));
    return *this;
  }
  /// ALLOC at time `t` of `addr`; `kind` is a trace_format::alloc_kind. An earlier allocation
  /// of the same address in the block that is not freed is dropped from ADDRESSES, as the
  /// recorder does (its free was not seen).
  trace_writer& alloc(std::uint64_t t, std::uint64_t size, std::uint64_t addr,
                      std::uint64_t stack_id, unsigned kind = 0) {
    event(lowalloc::trace_format::tag_alloc | kind, t);
    put_varint(payload_, size);
    put_stack_id(stack_id);
    for (block_alloc& a : allocs_)
      if (a.addr == addr && a.state == unfreed) a.state = forgotten;
    allocs_.push_back(block_alloc{addr, unfreed, take_order()});
    return *this;
  }
  /// From format version 7: the order (docs/trace-format.md, "Timestamps") of the next ALLOC
  /// (for the ADDRESSES entry that lists it) or FREE written; 0 when not given.
  trace_writer& order(std::uint64_t o) {
    order_ = o;
    return *this;
  }
  /// ALLOC at time `t` that the writer does not keep: the caller writes its free (free_local(),
  /// free_address()) or lists it (addresses()) itself. For large generated traces, where keeping
  /// every allocation of a block would be quadratic.
  trace_writer& alloc_untracked(std::uint64_t t, std::uint64_t size, std::uint64_t stack_id) {
    take_order();  // (listed_orders() gives it, if it is listed)
    event(lowalloc::trace_format::tag_alloc, t);
    put_varint(payload_, size);
    put_stack_id(stack_id);
    return *this;
  }
  /// FREE of `addr` as written, whatever the block allocated.
  trace_writer& free_address(std::uint64_t t, std::uint64_t addr) {
    event(lowalloc::trace_format::tag_free, t);
    put_svarint(payload_, static_cast<std::int64_t>(addr - prev_addr_));
    prev_addr_ = addr;
    free_orders_.push_back(take_order());
    return *this;
  }
  /// A free of `addr` at time `t`: FREE_LOCAL when the block allocated it, else FREE.
  trace_writer& free(std::uint64_t t, std::uint64_t addr) {
    for (std::size_t i = allocs_.size(); i-- > 0;) {
      if (allocs_[i].addr == addr && allocs_[i].state == unfreed) {
        allocs_[i].state = freed;
        return free_local(t, allocs_.size() - 1 - i);
      }
    }
    return free_address(t, addr);
  }
  /// FREE_LOCAL as written: frees the allocation `distance` back in the block.
  trace_writer& free_local(std::uint64_t t, std::uint64_t distance) {
    take_order();  // (a FREE_LOCAL has none)
    event(lowalloc::trace_format::tag_free_local, t);
    put_varint(payload_, distance);
    return *this;
  }
  /// ADDRESSES as written: (ordinal, address) pairs in increasing ordinal.
  /// From version 7 the entries' orders are 0, unless listed_orders() says otherwise.
  trace_writer& addresses(const std::vector<std::pair<std::uint64_t, std::uint64_t>>& listed) {
    listed_orders_.assign(listed.size(), 0);
    payload_ += static_cast<char>(lowalloc::trace_format::tag_addresses);
    put_varint(payload_, listed.size());
    std::uint64_t ordinal = 0;
    std::uint64_t addr = 0;
    for (const auto& [o, a] : listed) {
      put_varint(payload_, o - ordinal);
      put_svarint(payload_, static_cast<std::int64_t>(a - addr));
      ordinal = o;
      addr = a;
    }
    return *this;
  }
  /// The orders of the entries of the ADDRESSES record just written (version 7), for ORDERS.
  trace_writer& listed_orders(const std::vector<std::uint64_t>& orders) {
    listed_orders_ = orders;
    return *this;
  }
  /// ORDERS as written: the FREEs' orders, then the ADDRESSES entries', as delta columns.
  trace_writer& orders(const std::vector<std::uint64_t>& frees,
                       const std::vector<std::uint64_t>& listed) {
    payload_ += static_cast<char>(lowalloc::trace_format::tag_orders);
    put_varint(payload_, frees.size());
    put_varint(payload_, listed.size());
    for (const std::vector<std::uint64_t>* column : {&frees, &listed}) {
      std::uint64_t prev = 0;
      for (std::uint64_t o : *column) {
        put_svarint(payload_, static_cast<std::int64_t>(o - prev));
        prev = o;
      }
    }
    return *this;
  }
  /// The open block ends without the ORDERS record end_block() writes (a damaged block).
  trace_writer& without_orders() {
    write_orders_ = false;
    return *this;
  }
  /// FREE_KEPT as written: frees the kept allocation of stream ordinal `ordinal`. From version 9
  /// as the recorder writes it, from the block's near anchor (FREE_KEPT_FROM).
  trace_writer& free_kept(std::uint64_t t, std::uint64_t ordinal) {
    namespace fmt = lowalloc::trace_format;
    if (version_ >= 9) {
      const unsigned k = fmt::near_anchor(kept_anchor_, ordinal);
      event(fmt::tag_free_kept_from | k, t);
      put_svarint(payload_, static_cast<std::int64_t>(ordinal - kept_anchor_[k]));
      fmt::move_anchors(kept_anchor_, k, ordinal);
      return *this;
    }
    event(fmt::tag_free_kept, t);
    put_svarint(payload_, static_cast<std::int64_t>(ordinal - prev_ordinal_));
    prev_ordinal_ = ordinal;
    return *this;
  }
  /// KEPT as written: (block ordinal, dropped stream ordinal) pairs in increasing ordinal. End
  /// the block with end_block(false) after it.
  trace_writer& kept(const std::vector<std::pair<std::uint64_t, std::uint64_t>>& drops = {}) {
    payload_ += static_cast<char>(lowalloc::trace_format::tag_kept);
    put_varint(payload_, drops.size());
    std::uint64_t ordinal = 0;
    for (const auto& [o, dropped] : drops) {
      put_varint(payload_, o - ordinal);
      put_varint(payload_, dropped);
      ordinal = o;
    }
    return *this;
  }
  /// LIVE as written: (stream ordinal, address) pairs.
  trace_writer& live(std::uint64_t t,
                     const std::vector<std::pair<std::uint64_t, std::uint64_t>>& entries) {
    payload_ += static_cast<char>(lowalloc::trace_format::tag_live);
    put_varint(payload_, dt(t));
    put_varint(payload_, entries.size());
    std::uint64_t ordinal = 0;
    std::uint64_t addr = 0;
    for (const auto& [o, a] : entries) {
      put_svarint(payload_, static_cast<std::int64_t>(o - ordinal));
      put_svarint(payload_, static_cast<std::int64_t>(a - addr));
      ordinal = o;
      addr = a;
    }
    return *this;
  }
  /// Leaves the open block's unfreed allocation of `addr` out of ADDRESSES (a lost free).
  trace_writer& forget(std::uint64_t addr) {
    for (block_alloc& a : allocs_)
      if (a.addr == addr && a.state == unfreed) a.state = forgotten;
    return *this;
  }
  /// realloc(old, size) returning `addr`: FREE old then ALLOC (realloc).
  trace_writer& realloc(std::uint64_t t, std::uint64_t old, std::uint64_t size, std::uint64_t addr,
                        std::uint64_t stack_id) {
    free(t, old);
    return alloc(t, size, addr, stack_id, lowalloc::trace_format::kind_realloc);
  }
  trace_writer& lost(std::uint64_t count) {
    payload_ += static_cast<char>(lowalloc::trace_format::tag_lost);
    put_varint(payload_, count);
    return *this;
  }
  trace_writer& end(std::uint64_t t) {
    payload_ += static_cast<char>(lowalloc::trace_format::tag_end);
    put_varint(payload_, dt(t));
    return *this;
  }
  /// STOPPED (version 10) at time t: the recorder could not write any more, for `reason`.
  trace_writer& stopped(std::uint64_t t, const std::string& reason) {
    payload_ += static_cast<char>(lowalloc::trace_format::tag_stopped);
    put_varint(payload_, dt(t));
    put_string(payload_, reason);
    return *this;
  }
  /// SHADOWED (version 8): the functions of mask `functions` are defined by `path`, ahead of the
  /// recorder.
  trace_writer& shadowed(std::uint64_t functions, const std::string& path) {
    payload_ += static_cast<char>(lowalloc::trace_format::tag_shadowed);
    put_varint(payload_, functions);
    put_string(payload_, path);
    return *this;
  }
  /// CRASH: signal `signal` in thread `tid`, with `flags`, and the (tid, allocations, bytes) of
  /// the threads whose block was not written.
  struct crash_entry {
    std::uint64_t tid, allocations, bytes;
  };
  trace_writer& crash(std::uint64_t t, std::uint64_t signal, std::uint64_t tid, std::uint64_t flags,
                      const std::vector<crash_entry>& threads) {
    payload_ += static_cast<char>(lowalloc::trace_format::tag_crash);
    put_varint(payload_, dt(t));
    put_varint(payload_, signal);
    put_varint(payload_, tid);
    put_varint(payload_, flags);
    put_varint(payload_, threads.size());
    for (const crash_entry& e : threads) {
      put_varint(payload_, e.tid);
      put_varint(payload_, e.allocations);
      put_varint(payload_, e.bytes);
    }
    return *this;
  }
  /// Arbitrary bytes into the payload (damaged records).
  trace_writer& raw(const bytes& b) {
    payload_ += b;
    return *this;
  }

  // --- the file ----------------------------------------------------------------------------------
  const bytes& file() const noexcept { return file_; }
  bytes& file() noexcept { return file_; }
  const bytes& payload() const noexcept { return payload_; }
  /// The tick section of the open block so far (format version 5; empty before): what ends its
  /// payload.
  bytes tick_section() const {
    bytes out;
    if (version_ < 5) return out;
    put_varint(out, tick_gaps_.size());
    for (std::uint64_t g : tick_gaps_) put_varint(out, g);
    for (std::uint64_t d : tick_dts_) put_varint(out, d);
    put_u32(out, static_cast<std::uint32_t>(out.size()));
    return out;
  }

  void save(const std::string& path) const {
    std::FILE* f = std::fopen(path.c_str(), "wb");
    if (f == nullptr) throw std::runtime_error("cannot write " + path);
    const bool ok = std::fwrite(file_.data(), 1, file_.size(), f) == file_.size();
    if (std::fclose(f) != 0 || !ok) throw std::runtime_error("cannot write " + path);
  }

 private:
  std::size_t end(bool addresses, bool prefixed, std::size_t tail = std::string::npos) {
    if (addresses) {
      std::vector<std::pair<std::uint64_t, std::uint64_t>> listed;  // ordinal, address
      std::vector<std::uint64_t> orders;
      for (std::size_t i = 0; i < allocs_.size(); ++i) {
        if (allocs_[i].state != unfreed) continue;
        listed.emplace_back(i, allocs_[i].addr);
        orders.push_back(allocs_[i].order);
      }
      if (!listed.empty()) this->addresses(listed).listed_orders(orders);
    }
    if (version_ >= 7 && write_orders_ && (!free_orders_.empty() || !listed_orders_.empty()))
      orders(free_orders_, listed_orders_);
    payload_ += tick_section();
    const bytes& previous = previous_[stream_];
    const bytes prefix =
        tail < previous.size() ? previous.substr(previous.size() - tail) : previous;
    return end_block_raw(compress(payload_, prefixed ? &prefix : nullptr), payload_.size(),
                         prefixed);
  }

  // The tag of an event record and its dt: inline before version 4, a TICK first in version 4,
  // in the block's tick section from version 5.
  // An ALLOC's stack: the id, from version 6 the difference from the block's previous ALLOC's.
  void put_stack_id(std::uint64_t id) {
    if (version_ < 6) {
      put_varint(payload_, id);
      return;
    }
    put_svarint(payload_, static_cast<std::int64_t>(id - prev_stack_));
    prev_stack_ = id;
  }
  void event(unsigned tag, std::uint64_t t) {
    const std::uint64_t d = dt(t);
    if (version_ < 4) {
      payload_ += static_cast<char>(tag);
      put_varint(payload_, d);
      return;
    }
    if (version_ >= 5) {
      if (d != 0) {
        tick_gaps_.push_back(events_ - last_ticked_);
        tick_dts_.push_back(d);
        last_ticked_ = events_;
      }
      ++events_;
      payload_ += static_cast<char>(tag);
      return;
    }
    if (d != 0) {
      payload_ += static_cast<char>(lowalloc::trace_format::tag_tick);
      put_varint(payload_, d);
    }
    payload_ += static_cast<char>(tag);
  }
  std::uint64_t dt(std::uint64_t t) {
    std::uint64_t& c = clock_[stream_];
    if (t < c) throw std::logic_error("trace_writer: time goes backwards in a stream");
    const std::uint64_t d = t - c;
    c = t;
    return d;
  }
  enum alloc_state { unfreed, freed, forgotten };
  struct block_alloc {
    std::uint64_t addr;
    alloc_state state;
    std::uint64_t order;
  };
  std::uint64_t take_order() {
    const std::uint64_t o = order_;
    order_ = 0;
    return o;
  }

  std::uint16_t version_;
  std::uint64_t events_ = 0;       // event records in the open block
  std::uint64_t last_ticked_ = 0;  // the index of the last with a dt (0: none yet)
  std::vector<std::uint64_t> tick_gaps_;
  std::vector<std::uint64_t> tick_dts_;
  bytes file_;
  std::vector<block_alloc> allocs_;  // the open block's allocations, by ordinal
  bytes payload_;
  bool open_ = false;
  std::uint32_t stream_ = 0;
  std::uint64_t prev_addr_ = 0;
  std::uint64_t prev_stack_ = 0;  // the block's previous ALLOC's stack id (version 6)
  std::uint64_t prev_ordinal_ = 0;
  std::uint64_t kept_anchor_[lowalloc::trace_format::kept_anchors] = {};  // version 9
  std::uint64_t order_ = 0;                   // of the next ALLOC or FREE (version 7)
  std::vector<std::uint64_t> free_orders_;    // the open block's FREEs' (version 7)
  std::vector<std::uint64_t> listed_orders_;  // its ADDRESSES entries' (version 7)
  bool write_orders_ = true;                  // end_block() writes ORDERS (version 7)
  std::map<std::uint32_t, std::uint64_t> clock_;
  std::map<std::uint32_t, bytes> previous_;  // each stream's last payload
};

}  // namespace lowalloc_test

#endif
