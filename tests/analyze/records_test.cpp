// The record vocabulary of src/trace/records.hpp, which the recorder encodes with and the reader
// decodes with: every record written by its encoder is byte for byte what the independent test
// writer (tests/support/trace_writer.hpp) writes, and decodes back to its fields.
#include "trace/records.hpp"
#include "analyze/trace_reader.hpp"
#include "support/trace_writer.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace {

namespace fmt = lowalloc::trace_format;
using lowalloc::analyze::detail::payload_error;
using lowalloc::analyze::detail::payload_reader;
using lowalloc_test::trace_writer;

// A payload with every record, from the records.hpp encoders: of format version 5 (its ALLOCs
// name their stacks as they are, and it has a RESET), as trace_writer writes by default.
constexpr std::uint16_t payload_version = trace_writer::per_stream_stacks_version;

std::string encoded_payload() {
  std::vector<unsigned char> buf(4096);
  unsigned char* p = buf.data();
  fmt::block_encoding block;
  p = fmt::encode(p, fmt::time_record{1000, 123456789});
  fmt::process_record proc;
  proc.pid = 42;
  proc.ppid = 7;
  proc.flags = fmt::process_flag_fork_child;
  proc.exe = "/bin/app";
  proc.argc = 2;
  p = fmt::encode(p, proc, 4096);
  p = fmt::put_string(p, "app", 4096);
  p = fmt::put_string(p, "-x", 4096);
  p = fmt::encode(p, fmt::thread_record{4242});
  fmt::module_record mod;
  mod.dt = 1;
  mod.id = 3;
  mod.bias = 0x400000;
  mod.path = "/lib/libx.so";
  mod.segments = 2;
  p = fmt::encode(p, mod, 4096);
  p = fmt::encode(p, fmt::segment{0x400000, 0x1000});
  p = fmt::encode(p, fmt::segment{0x401000, 0x2000});
  p = fmt::encode(p, fmt::module_id_record{3, std::string_view("\x12\xab\x00\xff", 4), 8192,
                                           1700000000123456789u});
  const std::uint64_t ips[] = {0x401234, 0x401200, 0x7fff0000};
  p = fmt::encode_stack(p, 1, ips, 3);
  const std::uint64_t deeper[] = {0x405000, 0x404ff0, 0x401200, 0x7fff0000};
  p = fmt::encode_stack_shared(p, 2, deeper, 4, 2);
  p = fmt::encode(p, fmt::alloc_record{fmt::kind_calloc, 2, 24, 1});
  p = fmt::encode(p, fmt::alloc_record{fmt::kind_malloc, 0, 8, 1});
  p = fmt::encode(p, fmt::free_local_record{1, 0});
  p = fmt::encode(p, fmt::free_record{0, 0x9000}, block);
  p = fmt::encode(p, fmt::free_record{0, 0x8000}, block);  // a negative delta
  p = fmt::encode(p, fmt::unmodule_record{1, 3});
  p = fmt::encode(p, fmt::reset_record{0});
  p = fmt::encode(p, fmt::lost_record{5});
  p = fmt::encode(p, fmt::end_record{1});
  p = fmt::encode(p, fmt::addresses_record{2});
  fmt::address_list_encoder entries;
  p = entries.encode(p, fmt::address_entry{0, 0x5000});
  p = entries.encode(p, fmt::address_entry{3, 0x4000});
  p = fmt::encode(p, fmt::free_kept_record{0, 70}, block);
  p = fmt::encode(p, fmt::free_kept_record{0, 12}, block);  // a negative delta
  p = fmt::encode(p, fmt::kept_record{2});
  fmt::kept_list_encoder drops;
  p = drops.encode(p, fmt::kept_drop{1, 12});
  p = drops.encode(p, fmt::kept_drop{4, 3});
  p = fmt::encode(p, fmt::live_record{1, 2});
  fmt::live_list_encoder live;
  p = live.encode(p, fmt::live_entry{9, 0x7000});
  p = live.encode(p, fmt::live_entry{5, 0x6000});  // both fields go back
  // The events' dts: 2 ticks at the first (event 0), 1 at the third (event 2).
  const std::uint32_t gaps[] = {0, 2};
  const std::uint64_t dts[] = {2, 1};
  p = fmt::encode_ticks(p, gaps, dts, 2);
  return std::string(reinterpret_cast<const char*>(buf.data()),
                     static_cast<std::size_t>(p - buf.data()));
}

TEST(Records, EncodersWriteWhatTheIndependentWriterWrites) {
  trace_writer w;
  w.begin_block(1).time(1000, 123456789);
  w.process(42, 7, fmt::process_flag_fork_child, "/bin/app", {"app", "-x"}).thread(4242);
  w.module(1001, 3, 0x400000, "/lib/libx.so", {{0x400000, 0x1000}, {0x401000, 0x2000}});
  w.module_id(3, std::string("\x12\xab\x00\xff", 4), 8192, 1700000000123456789u);
  w.stack(1, {0x401234, 0x401200, 0x7fff0000});
  w.stack_shared(2, 2, {0x405000, 0x404ff0});
  w.alloc(1003, 24, 0xA000, 1, fmt::kind_calloc).alloc(1003, 8, 0xB000, 1);
  w.free_local(1004, 0);
  w.free(1004, 0x9000).free(1004, 0x8000);  // not allocated in the block: FREE with deltas
  w.unmodule(1005, 3).reset(1005).lost(5).end(1006);
  w.addresses({{0, 0x5000}, {3, 0x4000}});
  w.free_kept(1006, 70).free_kept(1006, 12);
  w.kept({{1, 12}, {4, 3}});
  w.live(1007, {{9, 0x7000}, {5, 0x6000}});
  EXPECT_EQ(encoded_payload(), w.payload() + w.tick_section());
}

// Decodes a block's payload of format `version` with `v`: from version 5, its records before
// the tick section, whose ticks the events must take all of.
template <class Visitor>
void decode_block(const std::string& payload, std::uint16_t version, Visitor& v) {
  const auto* b = reinterpret_cast<const std::uint8_t*>(payload.data());
  fmt::block_decoding block(version);
  std::size_t records = payload.size();
  if (version >= 5) {
    if (const char* wrong = fmt::open_ticks(b, payload.size(), &records, block))
      throw payload_error(wrong);
  }
  payload_reader r(b, b + records);
  while (!r.done()) fmt::decode_record(r, block, v);
  if (!block.ticks_done()) throw payload_error("ticks left");
}

// Collects what the decoder hands over, as text (through a stream: GCC 12 -std=c++20 warns on
// `" " + std::to_string(...)`, a -Wrestrict false positive).
struct recorder_of_fields {
  std::vector<std::string> seen;
  template <class... T>
  void add(const char* name, const T&... v) {
    std::ostringstream s;
    s << name;
    ((s << ' ' << v), ...);
    seen.push_back(s.str());
  }
  void operator()(const fmt::time_record& r) { add("time", r.ticks, r.ns); }
  template <class Items>
  void operator()(const fmt::process_record& r, Items& argv) {
    std::ostringstream s;
    s << "process " << r.pid << ' ' << r.ppid << ' ' << r.flags << ' ' << r.exe;
    while (argv.left() != 0) s << ' ' << argv.next();
    seen.push_back(s.str());
  }
  void operator()(const fmt::thread_record& r) { add("thread", r.tid); }
  template <class Items>
  void operator()(const fmt::module_record& r, Items& segments) {
    std::ostringstream s;
    s << "module " << r.dt << ' ' << r.id << ' ' << r.bias << ' ' << r.path;
    while (segments.left() != 0) {
      const fmt::segment seg = segments.next();
      s << ' ' << seg.start << '+' << seg.size;
    }
    seen.push_back(s.str());
  }
  void operator()(const fmt::module_id_record& r) {
    std::ostringstream s;
    s << "module_id " << r.id << ' ' << std::hex;
    for (const char c : r.build_id)
      s << static_cast<unsigned>(static_cast<unsigned char>(c)) << '.';
    s << std::dec << ' ' << r.size << ' ' << r.mtime_ns;
    seen.push_back(s.str());
  }
  void operator()(const fmt::unmodule_record& r) { add("unmodule", r.dt, r.id); }
  template <class Items>
  void operator()(const fmt::stack_record& r, Items& ips) {
    std::ostringstream s;
    s << "stack " << r.id;
    while (ips.left() != 0) s << ' ' << ips.next();
    seen.push_back(s.str());
  }
  template <class Items>
  void operator()(const fmt::stack_shared_record& r, Items& ips) {
    std::ostringstream s;
    s << "stack_shared " << r.id << ' ' << r.shared << " +";
    while (ips.left() != 0) s << ' ' << ips.next();
    seen.push_back(s.str());
  }
  void operator()(const fmt::reset_record& r) { add("reset", r.dt); }
  void operator()(const fmt::alloc_record& r) {
    add("alloc", unsigned{r.kind}, r.dt, r.size, r.stack);
  }
  void operator()(const fmt::free_record& r) { add("free", r.dt, r.addr); }
  void operator()(const fmt::free_local_record& r) { add("free_local", r.dt, r.distance); }
  void operator()(const fmt::lost_record& r) { add("lost", r.count); }
  void operator()(const fmt::end_record& r) { add("end", r.dt); }
  void operator()(const fmt::exec_record& r) { add("exec", r.dt, r.path); }
  void operator()(const fmt::shadowed_record& r) { add("shadowed", r.functions, r.path); }
  void operator()(const fmt::stopped_record& r) { add("stopped", r.dt, r.reason); }
  template <class Items>
  void operator()(const fmt::addresses_record& r, Items& entries) {
    std::ostringstream s;
    s << "addresses " << r.count;
    while (entries.left() != 0) {
      const fmt::address_entry e = entries.next();
      s << ' ' << e.ordinal << '@' << e.addr;
    }
    seen.push_back(s.str());
  }
  void operator()(const fmt::free_kept_record& r) { add("free_kept", r.dt, r.ordinal); }
  template <class Items>
  void operator()(const fmt::orders_record& r, Items& entries) {
    std::ostringstream s;
    s << "orders " << r.frees << ' ' << r.listed;
    while (entries.left() != 0) s << ' ' << entries.next().order;
    seen.push_back(s.str());
  }
  template <class Items>
  void operator()(const fmt::kept_record& r, Items& entries) {
    std::ostringstream s;
    s << "kept " << r.count;
    while (entries.left() != 0) {
      const fmt::kept_drop e = entries.next();
      s << ' ' << e.ordinal << '>' << e.dropped;
    }
    seen.push_back(s.str());
  }
  template <class Items>
  void operator()(const fmt::live_record& r, Items& entries) {
    std::ostringstream s;
    s << "live " << r.dt << ' ' << r.count;
    while (entries.left() != 0) {
      const fmt::live_entry e = entries.next();
      s << ' ' << e.ordinal << '@' << e.addr;
    }
    seen.push_back(s.str());
  }
  template <class Items>
  void operator()(const fmt::crash_record& r, Items& entries) {
    std::ostringstream s;
    s << "crash " << r.dt << ' ' << r.signal << ' ' << r.tid << ' ' << r.flags << ' ' << r.threads;
    while (entries.left() != 0) {
      const fmt::crash_thread e = entries.next();
      s << ' ' << e.tid << ':' << e.allocations << ':' << e.bytes;
    }
    seen.push_back(s.str());
  }
};

std::vector<std::string> decode_all(const std::string& payload,
                                    std::uint16_t version = payload_version) {
  recorder_of_fields v;
  decode_block(payload, version, v);
  return v.seen;
}

// From format version 6 an ALLOC's stack id is the difference from the block's previous ALLOC's
// (the first's from 0): both encoders write it so, and it decodes to the ids.
TEST(Records, Version6AllocsNameTheirStacksByDifferences) {
  EXPECT_EQ(fmt::version, 10);
  std::vector<unsigned char> buf(256);
  unsigned char* p = buf.data();
  fmt::block_encoding block;
  const std::uint64_t ids[] = {5, 3, 300000, 300001, 0, 7};
  for (std::uint64_t id : ids)
    p = fmt::encode(p, fmt::alloc_record{fmt::kind_malloc, 0, 8, id}, block);
  const std::string payload(reinterpret_cast<const char*>(buf.data()),
                            static_cast<std::size_t>(p - buf.data()));
  trace_writer w(6);
  w.begin_block(1);
  for (std::uint64_t id : ids) w.alloc_untracked(0, 8, id);
  EXPECT_EQ(payload, w.payload());
  EXPECT_EQ(payload.size(), 6u * 3 + 4);  // (the two jumps of about 300,000: 3 bytes each)
  std::string with_ticks = payload;
  with_ticks += w.tick_section();
  EXPECT_EQ(decode_all(with_ticks, 6),
            (std::vector<std::string>{"alloc 0 0 8 5", "alloc 0 0 8 3", "alloc 0 0 8 300000",
                                      "alloc 0 0 8 300001", "alloc 0 0 8 0", "alloc 0 0 8 7"}));
  // Read as version 5, the same bytes are other ids: 5 is written zig-zag, as 10.
  EXPECT_EQ(decode_all(with_ticks, 5)[0], "alloc 0 0 8 10");
}

TEST(Records, DecoderGivesBackEveryField) {
  const std::vector<std::string> expected = {
      "time 1000 123456789",
      "process 42 7 1 /bin/app app -x",
      "thread 4242",
      "module 1 3 4194304 /lib/libx.so 4194304+4096 4198400+8192",
      "module_id 3 12.ab.0.ff. 8192 1700000000123456789",
      "stack 1 4198964 4198912 2147418112",
      "stack_shared 2 2 + 4214784 4214768",
      "alloc 1 2 24 1",
      "alloc 0 0 8 1",
      "free_local 1 0",
      "free 0 36864",
      "free 0 32768",
      "unmodule 1 3",
      "reset 0",
      "lost 5",
      "end 1",
      "addresses 2 0@20480 3@16384",
      "free_kept 0 70",
      "free_kept 0 12",
      "kept 2 1>12 4>3",
      "live 1 2 9@28672 5@24576",
  };
  EXPECT_EQ(decode_all(encoded_payload()), expected);
}

TEST(Records, ExecCarriesItsPath) {
  std::vector<unsigned char> buf(64);
  fmt::exec_record e;
  e.dt = 3;
  e.path = "/usr/bin/env";
  unsigned char* p = fmt::encode(buf.data(), e, 4096);
  const std::string payload(reinterpret_cast<const char*>(buf.data()),
                            static_cast<std::size_t>(p - buf.data()));
  EXPECT_EQ(decode_all(payload, 4), std::vector<std::string>{"exec 3 /usr/bin/env"});
}

// FREE_KEPT_FROM (format version 9): an ordinal as the difference from the first of the block's
// 8 anchors that is near it (less than 64 away), else from anchor 0; it becomes the first anchor,
// the one it came from dropped if near, else the last. Two walks through the kept blocks at once,
// a jump back, and one far from every anchor: each step of a walk takes 2 bytes, where
// differences from the previous FREE_KEPT took 3. Both encoders write the same bytes, which
// decode to the ordinals in version 9 and are no records of version 8.
TEST(Records, Version9FreeKeptNamesItsOrdinalFromTheNearestAnchor) {
  EXPECT_EQ(fmt::tag_free_kept_from, 0x28);
  EXPECT_EQ(fmt::kept_anchors, 8u);
  const std::uint64_t ordinals[] = {1000, 5000, 1001, 5002, 1003, 20, 5003, 1004, 4900};
  std::vector<unsigned char> buf(256);  // the walks below take 70 bytes
  unsigned char* p = buf.data();
  fmt::block_encoding block;
  for (std::uint64_t o : ordinals)
    p = fmt::encode_from_anchor(p, fmt::free_kept_record{0, o}, block);
  const std::string payload(reinterpret_cast<const char*>(buf.data()),
                            static_cast<std::size_t>(p - buf.data()));
  // 1000 and 5000 from 0 and 1000 (far: the last anchor dropped), the walks from anchor 1 (the
  // other walk's step came between), 20 from the anchor still 0 (2), the walks then from 2; 4900,
  // 103 from 5003 and farther from the others, from anchor 0 (1004).
  EXPECT_EQ(payload, std::string("\x28\xd0\x0f"
                                 "\x28\xc0\x3e"
                                 "\x29\x02\x29\x04\x29\x04"
                                 "\x2a\x28\x2a\x02\x2a\x02"
                                 "\x28\xf0\x3c",
                                 21));
  trace_writer w(9);
  w.begin_block(1);
  for (std::uint64_t o : ordinals) w.free_kept(0, o);
  EXPECT_EQ(payload, w.payload());
  std::vector<std::string> expected;
  for (std::uint64_t o : ordinals) expected.push_back("free_kept 0 " + std::to_string(o));
  EXPECT_EQ(decode_all(payload + w.tick_section(), 9), expected);
  try {
    decode_all(payload + w.tick_section(), 8);
    ADD_FAILURE() << "decoded as version 8";
  } catch (const payload_error& e) {
    EXPECT_NE(std::string(e.what()).find("unknown record tag 0x28"), std::string::npos) << e.what();
  }
  // A far ordinal drops the last anchor, not a walk's: 8 walks of 3 steps, one after the other,
  // then a step of each of the last 7 from its anchor (2 bytes each; a walk's anchor went to make
  // room for the next walk's start only when it was the last).
  fmt::block_encoding walks;
  p = buf.data();
  for (std::uint64_t walk = 1; walk <= 8; ++walk)
    for (std::uint64_t step = 0; step < 3; ++step)
      p = fmt::encode_from_anchor(p, fmt::free_kept_record{0, walk * 1000 + step}, walks);
  for (unsigned k = 0; k < fmt::kept_anchors; ++k)
    EXPECT_EQ(walks.kept_anchor[k], (8 - k) * 1000 + 2) << k;
  for (std::uint64_t walk = 2; walk <= 8; ++walk) {
    unsigned char* const at = p;
    p = fmt::encode_from_anchor(p, fmt::free_kept_record{0, walk * 1000 + 3}, walks);
    EXPECT_EQ(p - at, 2) << walk;
  }
}

// SHADOWED (format version 8): the functions the recorder could not hook, as a mask over
// shadowed_names, and the object that defines them. Both encoders write the same bytes; a mask of
// no function, or of a bit past the names, is damage.
TEST(Records, ShadowedNamesTheFunctionsAndTheObjectThatDefinesThem) {
  EXPECT_EQ(fmt::tag_shadowed, 0x24);
  ASSERT_EQ(fmt::shadowed_count, 12u);
  EXPECT_STREQ(fmt::shadowed_names[0], "malloc");
  EXPECT_STREQ(fmt::shadowed_names[1], "free");
  EXPECT_STREQ(fmt::shadowed_names[9], "pvalloc");
  EXPECT_STREQ(fmt::shadowed_names[10], "operator new");
  EXPECT_STREQ(fmt::shadowed_names[11], "operator delete");
  std::vector<unsigned char> buf(64);
  unsigned char* p =
      fmt::encode(buf.data(), fmt::shadowed_record{0x0F, "/opt/app/bin/server"}, 4096);
  const std::string payload(reinterpret_cast<const char*>(buf.data()),
                            static_cast<std::size_t>(p - buf.data()));
  trace_writer w(8);
  w.begin_block(1).shadowed(0x0F, "/opt/app/bin/server");
  EXPECT_EQ(payload, w.payload());
  EXPECT_EQ(decode_all(payload + w.tick_section(), 8),
            std::vector<std::string>{"shadowed 15 /opt/app/bin/server"});
  for (const std::uint64_t bad : {std::uint64_t{0}, std::uint64_t{1} << 12}) {
    trace_writer b(8);
    b.begin_block(1).shadowed(bad, "/x");
    try {
      decode_all(b.payload() + b.tick_section(), 8);
      ADD_FAILURE() << "mask " << bad << " decoded";
    } catch (const payload_error& e) {
      EXPECT_NE(std::string(e.what()).find("a SHADOWED record names no function"),
                std::string::npos)
          << e.what();
    }
  }
}

// CRASH, in its own test (a record of format version 3): the encoder writes what the
// independent writer writes, and the decoder gives back every field and entry.
TEST(Records, CrashNamesTheSignalTheThreadAndTheUnwrittenBlocks) {
  std::vector<unsigned char> buf(256);
  unsigned char* p = buf.data();
  p = fmt::encode(p, fmt::time_record{1000, 5});
  p = fmt::encode(p, fmt::crash_record{2, 11, 4242, fmt::crash_flag_thread_written, 2});
  p = fmt::encode(p, fmt::crash_thread{4243, 100, 1500});
  p = fmt::encode(p, fmt::crash_thread{4244, 0, 300});
  const std::string payload(reinterpret_cast<const char*>(buf.data()),
                            static_cast<std::size_t>(p - buf.data()));
  trace_writer w;
  w.begin_block(1).time(1000, 5);
  w.crash(1002, 11, 4242, fmt::crash_flag_thread_written, {{4243, 100, 1500}, {4244, 0, 300}});
  EXPECT_EQ(payload, w.payload());

  EXPECT_EQ(
      decode_all(payload, 4),
      (std::vector<std::string>{"time 1000 5", "crash 2 11 4242 1 2 4243:100:1500 4244:0:300"}));
  EXPECT_EQ(fmt::tag_crash, 0x20);
}

// From format version 7 a block with FREEs or ADDRESSES ends with ORDERS: the orders of its FREEs,
// then of its ADDRESSES entries, in two columns of deltas. Both encoders write it; it decodes
// back; and a block that leaves it out, or gives it the wrong counts, is damaged.
TEST(Records, Version7BlocksEndWithTheOrdersOfTheirFreesAndListedAllocations) {
  std::vector<unsigned char> buf(256);
  unsigned char* p = buf.data();
  fmt::block_encoding block;
  p = fmt::encode(p, fmt::alloc_record{fmt::kind_malloc, 0, 8, 1}, block);
  p = fmt::encode(p, fmt::alloc_record{fmt::kind_malloc, 0, 16, 1}, block);
  p = fmt::encode(p, fmt::free_record{0, 0x9000}, block);
  p = fmt::encode(p, fmt::free_record{0, 0x8000}, block);
  p = fmt::encode(p, fmt::addresses_record{2});
  fmt::address_list_encoder entries;
  p = entries.encode(p, fmt::address_entry{0, 0x5000});
  p = entries.encode(p, fmt::address_entry{1, 0x4000});
  p = fmt::encode(p, fmt::orders_record{2, 2});
  fmt::order_list_encoder frees;
  p = frees.encode(p, 1000000);
  p = frees.encode(p, 1000003);
  fmt::order_list_encoder listed;
  p = listed.encode(p, 999999);
  p = listed.encode(p, 1000002);
  const std::string payload(reinterpret_cast<const char*>(buf.data()),
                            static_cast<std::size_t>(p - buf.data()));
  trace_writer w(7);
  w.begin_block(1);
  w.order(999999).alloc(0, 8, 0x5000, 1).order(1000002).alloc(0, 16, 0x4000, 1);
  w.order(1000000).free_address(0, 0x9000).order(1000003).free_address(0, 0x8000);
  w.end_block();
  EXPECT_EQ(payload + w.tick_section(), w.payload());
  // The second value of each column is a delta of 3: one byte.
  EXPECT_EQ(static_cast<unsigned char>(payload[payload.size() - 5]), 6u);
  EXPECT_EQ(decode_all(w.payload(), 7),
            (std::vector<std::string>{"alloc 0 0 8 1", "alloc 0 0 16 1", "free 0 36864",
                                      "free 0 32768", "addresses 2 0@20480 1@16384",
                                      "orders 2 2 1000000 1000003 999999 1000002"}));
  EXPECT_EQ(fmt::tag_orders, 0x23);

  const auto fails_with = [](const std::string& bytes, std::uint16_t version,
                             const std::string& what) {
    try {
      decode_all(bytes, version);
    } catch (const payload_error& e) {
      if (std::string(e.what()).find(what) != std::string::npos) return true;
      ADD_FAILURE() << e.what();
      return false;
    }
    return false;
  };
  // (ORDERS with no orders, then an empty tick section.)
  EXPECT_TRUE(fails_with(std::string("\x23\x00\x00\x00\x01\x00\x00\x00", 8), 6,
                         "an ORDERS record in a trace of format version 6 or older"));
}

// STOPPED (version 10): when the recorder stopped, and why in the system's words; the reason is
// cut to the cap the recorder gives it.
TEST(Records, StoppedSaysWhenAndWhy) {
  EXPECT_EQ(fmt::tag_stopped, 0x25);
  std::vector<unsigned char> buf(64);
  unsigned char* p =
      fmt::encode(buf.data(), fmt::stopped_record{3, "No space left on device"}, 4096);
  const std::string payload(reinterpret_cast<const char*>(buf.data()),
                            static_cast<std::size_t>(p - buf.data()));
  trace_writer w(10);
  w.begin_block(1).stopped(3, "No space left on device");
  EXPECT_EQ(payload, w.payload());
  EXPECT_EQ(decode_all(payload + w.tick_section(), 10),
            std::vector<std::string>{"stopped 3 No space left on device"});
  p = fmt::encode(buf.data(), fmt::stopped_record{0, "No space left on device"}, 8);
  EXPECT_EQ(decode_all(std::string(reinterpret_cast<const char*>(buf.data()),
                                   static_cast<std::size_t>(p - buf.data())) +
                           w.tick_section(),
                       10),
            std::vector<std::string>{"stopped 0 No space"});
}

// Format version 4: an event's dt is a TICK record before it when not 0; from version 5 the
// block's tick section lists them. Both decode to the events of the version 3 encoding of the same
// block, and the encoders write what the writer writes.
TEST(Records, TicksDecodeToTheEventsOfVersion3) {
  EXPECT_EQ(fmt::version, 10);
  EXPECT_EQ(fmt::tag_tick, 0x22);
  const auto block = [](trace_writer& w) {
    w.begin_block(1).time(100, 5);
    for (std::uint64_t i = 0; i < 5; ++i) w.alloc(100 + i / 4, 8 + i, 0xA000 + 16 * i, 1);
    w.free(103, 0xA020);
    w.free(103, 0xA040);
    w.free(107, 0xA000);
    w.free_kept(107, 9).free_address(300, 0x5000);
  };
  trace_writer v5;
  block(v5);
  trace_writer v4(4);
  block(v4);
  trace_writer v3(3);
  block(v3);
  const std::vector<std::string> events = {
      "time 100 5",     "alloc 0 0 8 1",  "alloc 0 0 9 1",  "alloc 0 0 10 1",
      "alloc 0 0 11 1", "alloc 0 1 12 1", "free_local 2 2", "free_local 0 0",
      "free_local 4 4", "free_kept 0 9",  "free 193 20480",
  };
  EXPECT_EQ(decode_all(v3.payload(), 3), events);
  EXPECT_EQ(decode_all(v4.payload(), 4), events);
  const std::string v5_payload = v5.payload() + v5.tick_section();
  EXPECT_EQ(decode_all(v5_payload, 5), events);
  // 11 bytes of dt fewer (10 events, one dt of 2 bytes), 4 TICKs (of 2, 2, 2 and 3 bytes) more.
  EXPECT_EQ(v4.payload().size() + 2, v3.payload().size());
  // Version 5: the records are version 4's without the TICKs; the section is the count, 4 gaps
  // (events 4, 5, 7 and 9), 4 dts (1, 2, 4 and 193, of 2 bytes) and 4 bytes of its size.
  EXPECT_EQ(v5.payload().size() + 9, v4.payload().size());
  EXPECT_EQ(v5.tick_section(), std::string("\x04\x04\x01\x02\x02\x01\x02\x04\xc1\x01"
                                           "\x0a\x00\x00\x00",
                                           14));

  std::vector<unsigned char> buf(256);
  fmt::block_encoding enc;
  unsigned char* p = fmt::encode(buf.data(), fmt::time_record{100, 5});
  for (std::uint64_t i = 0; i < 5; ++i)
    p = fmt::encode(p, fmt::alloc_record{fmt::kind_malloc, 0, 8 + i, 1});
  p = fmt::encode(p, fmt::free_local_record{0, 2});
  p = fmt::encode(p, fmt::free_local_record{0, 0});
  p = fmt::encode(p, fmt::free_local_record{0, 4});
  p = fmt::encode(p, fmt::free_kept_record{0, 9}, enc);
  p = fmt::encode(p, fmt::free_record{0, 0x5000}, enc);
  const std::uint32_t gaps[] = {4, 1, 2, 2};
  const std::uint64_t dts[] = {1, 2, 4, 193};
  p = fmt::encode_ticks(p, gaps, dts, 4);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(buf.data()),
                        static_cast<std::size_t>(p - buf.data())),
            v5_payload);
  // Version 4: ticks add up until an event takes them; the next event's dt is 0 again.
  EXPECT_EQ(decode_all(std::string("\x22\x02\x22\x03\x10\x08\x01\x10\x08\x01", 10), 4),
            (std::vector<std::string>{"alloc 0 5 8 1", "alloc 0 0 8 1"}));
}

// A version 5 tick section that does not fit its block's events, or is cut, is an error, and so
// is a TICK record.
TEST(Records, TickSectionsThatBreakTheRulesFail) {
  const auto fails_with = [](const std::string& payload, const std::string& what) {
    try {
      decode_all(payload, 5);
    } catch (const payload_error& e) {
      if (std::string(e.what()).find(what) != std::string::npos) return true;
      ADD_FAILURE() << e.what();
      return false;
    }
    ADD_FAILURE() << "no error";
    return false;
  };
  const std::string two_allocs("\x10\x08\x01\x10\x08\x01", 6);
  const auto section = [](const std::string& body) {
    std::string s = body;
    const auto n = static_cast<char>(body.size());
    return s + n + std::string(3, '\0');
  };
  // Good: the second event has dt 3.
  EXPECT_EQ(decode_all(two_allocs + section(std::string("\x01\x01\x03", 3)), 5),
            (std::vector<std::string>{"alloc 0 0 8 1", "alloc 0 3 8 1"}));
  EXPECT_TRUE(fails_with(two_allocs, "tick section"));
  EXPECT_TRUE(fails_with(std::string("\x10\x08\x01\x05\x00\x00\x00", 7),
                         "the tick section's size is past the block's start"));
  EXPECT_TRUE(fails_with(two_allocs + section(std::string("\x01\x05\x03", 3)), "ticks left"));
  EXPECT_TRUE(fails_with(two_allocs + section(std::string("\x02\x01\x00\x03\x01", 5)),
                         "gives one event two ticks"));
  EXPECT_TRUE(fails_with(two_allocs + section(std::string("\x09\x01\x03", 3)),
                         "the tick section's count is too large"));
  EXPECT_TRUE(fails_with(two_allocs + section(std::string("\x01\x01\x83", 3)),
                         "a dt of the tick section is cut"));
  EXPECT_TRUE(fails_with(two_allocs + section(std::string("\x01\x01\x03\x00", 4)),
                         "bytes after its last dt"));
  EXPECT_TRUE(fails_with(std::string("\x22\x01", 2) + two_allocs + section(std::string(1, '\0')),
                         "a TICK record in a trace of format version 5"));
}

// A visitor that takes no list item: the decoder still leaves the reader at the next record.
struct ignore_all {
  int records = 0;
  template <class R>
  void operator()(const R&) {
    ++records;
  }
  template <class R, class Items>
  void operator()(const R&, Items&) {
    ++records;
  }
};

TEST(Records, ItemsTheVisitorLeavesAreSkipped) {
  ignore_all v;
  decode_block(encoded_payload(), payload_version, v);
  EXPECT_EQ(v.records, 21);
}

TEST(Records, Version4RecordsInAnOlderTraceFail) {
  const auto fails_with = [](const std::string& payload, const std::string& what) {
    try {
      decode_all(payload, 3);
    } catch (const payload_error& e) {
      return std::string(e.what()).find(what) != std::string::npos;
    }
    return false;
  };
  EXPECT_TRUE(
      fails_with(std::string("\x22\x01", 2), "a TICK record in a trace of format version 3"));
  EXPECT_TRUE(fails_with(std::string("\x10\x00\x08\x01\x22\x01\x10\x00\x08\x01", 10),
                         "a TICK record in a trace of format version 3"));
}

TEST(Records, RuleBreakingRecordsFail) {
  const auto fails_with = [](const std::string& payload, const std::string& what) {
    try {
      decode_all(payload, 4);
    } catch (const payload_error& e) {
      return std::string(e.what()).find(what) != std::string::npos;
    }
    return false;
  };
  EXPECT_TRUE(fails_with(std::string("\x06\x00\x01\x10", 4), "defines stack id 0"));
  EXPECT_TRUE(fails_with(std::string("\x09\x00\x01\x01\x10", 5), "defines stack id 0"));
  EXPECT_TRUE(fails_with(std::string("\x09\x01\x00\x00", 4), "of no frame"));
  EXPECT_TRUE(fails_with(std::string("\x09\x01\x00\x05\x10", 5), "runs past the end"));
  // ADDRESSES: a second entry with ordinal delta 0.
  EXPECT_TRUE(fails_with(std::string("\x1c\x02\x00\x02\x00\x02", 6), "ordinals not increasing"));
  // KEPT: a second entry with ordinal delta 0.
  EXPECT_TRUE(
      fails_with(std::string("\x1f\x02\x01\x05\x00\x06", 6), "KEPT ordinals not increasing"));
  EXPECT_TRUE(fails_with("\x7f", "unknown record tag 0x7f"));
  EXPECT_TRUE(fails_with(std::string("\x10\x00", 2), "runs past the end"));
}

}  // namespace
