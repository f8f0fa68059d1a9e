// Damaged and foreign files: every error names what is wrong and where; damage after a good
// block keeps what was read (analysis::truncation), damage in the first block throws.
#include "analyze/analysis.hpp"
#include "support/trace_writer.hpp"

#include <gtest/gtest.h>

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <thread>

namespace {

using lowalloc::analyze::analysis;
using lowalloc::analyze::trace_error;
using lowalloc_test::trace_writer;

::testing::AssertionResult contains(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "\"" << text << "\" does not contain \"" << part << "\"";
}

analysis run(const std::string& bytes) {
  lowalloc::analyze::options o;
  o.symbolize = false;
  return lowalloc::analyze::analyze_buffer(bytes.data(), bytes.size(), o);
}

// The message of the trace_error that analyzing `bytes` throws.
std::string error_of(const std::string& bytes) {
  try {
    run(bytes);
  } catch (const trace_error& e) {
    return e.what();
  }
  ADD_FAILURE() << "no trace_error";
  return {};
}

// Two good blocks of stream 1 (two allocations each), returning the offset after them.
std::size_t two_good_blocks(trace_writer& w) {
  w.block(1, 0).stack(1, {0x1000}).alloc(1, 8, 0x100, 1).alloc(2, 8, 0x200, 1).end_block();
  w.block(1, 3).alloc(3, 8, 0x300, 1).alloc(4, 8, 0x400, 1).end_block();
  return w.file().size();
}

// A file that begins as a trace does and ends within its 16-byte header is a trace cut short,
// not a foreign file.
TEST(Errors, AHeaderCutShortIsATruncatedTrace) {
  EXPECT_EQ(error_of("L"), "a truncated lowalloc trace (1 byte)");
  EXPECT_EQ(error_of("LOWALLO"), "a truncated lowalloc trace (7 bytes)");
  EXPECT_EQ(error_of(std::string("LOWALLOC\x03\x00", 10)), "a truncated lowalloc trace (10 bytes)");
  EXPECT_EQ(error_of(std::string("LOWALLOC\x03\x00\x10\x00\x00\x00\x00", 15)),
            "a truncated lowalloc trace (15 bytes)");
  EXPECT_EQ(error_of(""), "not a lowalloc trace file: it is empty");
}

TEST(Errors, NotATrace) {
  EXPECT_TRUE(contains(error_of(""), "not a lowalloc trace file"));
  EXPECT_TRUE(contains(error_of("LOWALLOX"), "not a lowalloc trace file"));
  EXPECT_TRUE(contains(error_of("LOWALLOCATIONS OF A DIFFERENT FILE"), "trace format version"));
  std::string elf =
      "\x7f"
      "ELF";
  elf.resize(4096, '\0');
  EXPECT_TRUE(contains(error_of(elf), "not a lowalloc trace file"));
  try {
    (void)lowalloc::analyze::analyze_file("/nonexistent/trace.lat");
    ADD_FAILURE() << "no trace_error";
  } catch (const trace_error& e) {
    EXPECT_TRUE(contains(std::string(e.what()), "cannot open"));
  }
}

// A stream that is not a trace (a pipe, /dev/zero) is refused once its first 8 bytes are in,
// not read to its end first: an endless one would fill memory.
TEST(Errors, AnEndlessStreamThatIsNotATraceIsRefusedAtItsStart) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0) << std::strerror(errno);
  signal(SIGPIPE, SIG_IGN);
  // `yes`, for at most 16 MiB: the writer stops at EPIPE when the reader is gone.
  constexpr std::size_t at_most = std::size_t{16} << 20;
  std::size_t written = 0;
  std::thread writer([&] {
    const std::string chunk(4096, 'y');
    while (written < at_most) {
      const ssize_t n = write(fds[1], chunk.data(), chunk.size());
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      written += static_cast<std::size_t>(n);
    }
    close(fds[1]);
  });
  std::string error;
  try {
    (void)lowalloc::analyze::analyze_file("/dev/fd/" + std::to_string(fds[0]));
    ADD_FAILURE() << "no trace_error";
  } catch (const trace_error& e) {
    error = e.what();
  }
  close(fds[0]);
  writer.join();
  EXPECT_TRUE(contains(error, "not a lowalloc trace file"));
  EXPECT_LT(written, at_most) << "the whole stream was read before its start was looked at";
}

TEST(Errors, UnknownVersion) {
  trace_writer w(11);
  two_good_blocks(w);
  const std::string m = error_of(w.file());
  EXPECT_TRUE(contains(m, "trace format version 11; this lowalloc reads versions 1 to 10"));
  trace_writer w0(0);
  two_good_blocks(w0);
  EXPECT_TRUE(contains(error_of(w0.file()), "trace format version 0;"));
}

TEST(Errors, LargerHeaderIsSkipped) {
  trace_writer w(1, 24);
  two_good_blocks(w);
  const analysis a = run(w.file());
  EXPECT_EQ(a.totals.allocations, 4u);
  EXPECT_TRUE(a.truncation.empty());
}

TEST(Errors, NoBlocks) {
  trace_writer w;
  EXPECT_TRUE(contains(error_of(w.file()), "no blocks"));
}

TEST(Errors, DamageInTheFirstBlockThrows) {
  trace_writer w;
  two_good_blocks(w);
  std::string bytes = w.file();
  bytes[16] = 'X';  // block magic of the first block
  const std::string m = error_of(bytes);
  EXPECT_TRUE(contains(m, "bad block magic"));
  EXPECT_TRUE(contains(m, "at byte 16"));
}

TEST(Errors, CutAtABlockBoundaryIsNotDamage) {
  trace_writer w;
  two_good_blocks(w);
  const analysis a = run(w.file());
  EXPECT_TRUE(a.truncation.empty());
  EXPECT_FALSE(a.complete);
  EXPECT_EQ(a.totals.allocations, 4u);
}

TEST(Errors, CutInsideABlockKeepsTheBlocksBefore) {
  trace_writer w;
  const std::size_t good = two_good_blocks(w);
  w.block(1, 5).alloc(5, 8, 0x500, 1).end(6).end_block();
  for (std::size_t cut : {good + 3, good + 16, w.file().size() - 1}) {
    const analysis a = run(w.file().substr(0, cut));
    EXPECT_EQ(a.totals.allocations, 4u) << cut;
    EXPECT_FALSE(a.complete);
    EXPECT_TRUE(contains(a.truncation, "cut short")) << cut;
    EXPECT_TRUE(contains(a.truncation, "at byte " + std::to_string(good))) << cut;
  }
}

TEST(Errors, SizesOverTheLimit) {
  trace_writer w;
  const std::size_t good = two_good_blocks(w);
  w.block(1, 5).alloc(5, 8, 0x500, 1).end_block();
  std::string bytes = w.file();
  bytes[good + 4 + 3] = '\x7f';  // compressed size ~2 GiB
  analysis a = run(bytes);
  EXPECT_TRUE(contains(a.truncation, "over the limit"));
  EXPECT_TRUE(contains(a.truncation, "at byte " + std::to_string(good)));
  bytes = w.file();
  bytes[good + 8 + 3] = '\x01';  // decompressed size 16 MiB + n
  a = run(bytes);
  EXPECT_TRUE(contains(a.truncation, "over the limit"));
  EXPECT_EQ(a.totals.allocations, 4u);
}

TEST(Errors, FlippedByteInTheCompressedPayload) {
  trace_writer w;
  const std::size_t good = two_good_blocks(w);
  w.block(1, 5);
  for (std::uint64_t i = 0; i < 200; ++i) w.alloc(5 + i, 8 + i, 0x1000 + i * 48, 1);
  w.end_block();
  const std::size_t payload = good + 16;
  const std::size_t size = w.file().size() - payload;
  // The checksum itself (the frame's last 4 bytes), and bytes inside the compressed data.
  for (std::size_t at : {size - 1, size - 6, size / 2, std::size_t{4}}) {
    std::string bytes = w.file();
    bytes[payload + at] = static_cast<char>(bytes[payload + at] ^ 0x20);
    const analysis a = run(bytes);
    EXPECT_EQ(a.totals.allocations, 4u) << at;
    EXPECT_TRUE(contains(a.truncation, "zstd")) << at;
    EXPECT_TRUE(contains(a.truncation, "at byte " + std::to_string(good))) << at;
    if (at == size - 1) {
      EXPECT_TRUE(contains(a.truncation, "checksum"));
    }
  }
}

// Format version 4: a block compressed against its stream's previous block reads as the same
// block compressed alone; without a previous block in its stream, or against another payload, it
// is damage, and the blocks before it read.
TEST(Errors, BlocksCompressedAgainstTheStreamsPreviousBlock) {
  const auto blocks = [](trace_writer& w, bool prefixed) {
    w.block(1, 0).stack(1, {0x1000});
    // Sizes no block repeats within itself, and every block repeats.
    for (std::uint64_t i = 0; i < 100; ++i)
      w.alloc(1, i * 7919 % 1000, 0x1000 + 32 * i, 1).free(1, 0x1000 + 32 * i);
    w.end_block();
    w.block(2, 1).stack(1, {0x2000}).alloc(1, 8, 0x9000, 1).free(2, 0x9000).end_block();
    for (std::uint64_t k = 0; k < 3; ++k) {
      w.block(1, 2 + k);
      for (std::uint64_t i = 0; i < 100; ++i)
        w.alloc(2 + k, i * 7919 % 1000, 0x1000 + 32 * i, 1).free(2 + k, 0x1000 + 32 * i);
      if (prefixed)
        w.end_block_prefixed();
      else
        w.end_block();
    }
  };
  trace_writer alone;
  blocks(alone, false);
  trace_writer prefixed;
  blocks(prefixed, true);
  EXPECT_LT(prefixed.file().size() + 100, alone.file().size());
  const analysis a = run(alone.file());
  const analysis b = run(prefixed.file());
  EXPECT_TRUE(b.truncation.empty()) << b.truncation;
  EXPECT_EQ(b.totals.allocations, 401u);
  EXPECT_EQ(b.totals.allocations, a.totals.allocations);
  EXPECT_EQ(b.totals.frees, a.totals.frees);
  EXPECT_EQ(b.totals.temporary, a.totals.temporary);
  EXPECT_EQ(b.run_time_seconds, a.run_time_seconds);

  // Compressed against the end of the previous block's payload (the recorder gives zstd the last
  // 8 KiB of a large block that compressed well): the reader decompresses with the whole payload,
  // which ends with it.
  trace_writer tail;
  tail.block(1, 0).stack(1, {0x1000});
  for (std::uint64_t i = 0; i < 100; ++i)
    tail.alloc(1, i * 7919 % 1000, 0x1000 + 32 * i, 1).free(1, 0x1000 + 32 * i);
  tail.end_block();
  for (std::uint64_t k = 0; k < 3; ++k) {
    tail.block(1, 1 + k);
    for (std::uint64_t i = 0; i < 100; ++i)
      tail.alloc(2 + k, i * 7919 % 1000, 0x1000 + 32 * i, 1).free(2 + k, 0x1000 + 32 * i);
    ASSERT_GT(tail.previous_payload(1).size(), 300u);
    tail.end_block_prefixed(true, 200);
  }
  // Smaller than alone, larger than against whole payloads: the prefix was used, and only its end.
  EXPECT_LT(tail.file().size() + 100, alone.file().size());
  EXPECT_GT(tail.file().size(), prefixed.file().size());
  const analysis e = run(tail.file());
  EXPECT_TRUE(e.truncation.empty()) << e.truncation;
  EXPECT_EQ(e.totals.allocations, 400u);
  EXPECT_EQ(e.totals.frees, 400u);
  EXPECT_EQ(e.totals.temporary, 400u);

  // The first block of its stream, flagged: nothing to decompress it against.
  trace_writer first;
  const std::size_t good = two_good_blocks(first);
  first.block(3, 5).stack(1, {0x1000}).alloc(5, 8, 0x100, 1).end_block_prefixed();
  const analysis c = run(first.file());
  EXPECT_EQ(c.totals.allocations, 4u);
  EXPECT_TRUE(contains(c.truncation, "compressed against its stream's previous block"))
      << c.truncation;
  EXPECT_TRUE(contains(c.truncation, "at byte " + std::to_string(good))) << c.truncation;

  // Compressed against a payload that is not the stream's previous block.
  trace_writer other;
  const std::size_t good2 = two_good_blocks(other);
  other.block(2, 5).stack(1, {0x1000});
  for (std::uint64_t i = 0; i < 50; ++i) other.alloc(5, 24, 0x5000 + 32 * i, 1);
  other.end_block();
  other.block(1, 6);
  for (std::uint64_t i = 0; i < 50; ++i) other.alloc(6, 24, 0x7000 + 32 * i, 1);
  // ADDRESSES of none, and the tick section.
  const std::string payload = other.payload() + std::string("\x1c\x00", 2) + other.tick_section();
  const std::string wrong = other.previous_payload(2);
  other.end_block_raw(trace_writer::compress(payload, &wrong), payload.size(), true);
  const analysis d = run(other.file());
  EXPECT_EQ(d.totals.allocations, 54u);  // stream 2's block is good
  EXPECT_TRUE(contains(d.truncation, "zstd")) << d.truncation;
  EXPECT_FALSE(contains(d.truncation, "at byte " + std::to_string(good2))) << d.truncation;
}

// Format version 5: a block's tick section gives its events their dts. The same blocks written
// as version 3 (dt in each event), 4 (TICK records) and 5 read alike; a tick section that names
// more events than its block has is damage, and the blocks before it read.
TEST(Errors, TickSectionsGiveEventsTheirTime) {
  const auto blocks = [](trace_writer& w) {
    w.block(1, 0).stack(1, {0x1000});
    for (std::uint64_t i = 0; i < 300; ++i) w.alloc(i / 7, 8 + i % 3, 0x1000 + 16 * i, 1);
    for (std::uint64_t i = 0; i < 300; i += 2) w.free(50 + i / 11, 0x1000 + 16 * i);
    w.end_block();
    w.block(1, 90).alloc(90, 8, 0x9000, 1).free(95, 0x1010).free(400, 0x9000).end(401);
    w.end_block();
  };
  trace_writer v3(3);
  blocks(v3);
  trace_writer v4(4);
  blocks(v4);
  trace_writer v5;
  blocks(v5);
  const analysis a3 = run(v3.file());
  const analysis a4 = run(v4.file());
  const analysis a5 = run(v5.file());
  for (const analysis* a : {&a3, &a4, &a5}) {
    EXPECT_TRUE(a->truncation.empty()) << a->truncation;
    EXPECT_EQ(a->totals.allocations, 301u);
    EXPECT_EQ(a->totals.frees, 152u);
    EXPECT_EQ(a->run_time_seconds, a3.run_time_seconds);
  }
  EXPECT_GT(a3.run_time_seconds, 0.0);
  EXPECT_EQ(a5.totals.peak_bytes, a3.totals.peak_bytes);
  EXPECT_LT(v5.file().size(), v4.file().size());

  trace_writer w;
  const std::size_t good = two_good_blocks(w);
  w.block(1, 5).alloc(6, 8, 0x500, 1);
  const std::string section("\x01\x03\x01\x03\x00\x00\x00", 7);  // the 4th event
  w.end_block_raw(trace_writer::compress(w.payload() + section), w.payload().size() + 7);
  const analysis d = run(w.file());
  EXPECT_EQ(d.totals.allocations, 4u);
  EXPECT_TRUE(contains(d.truncation, "the tick section names more events than the block has"))
      << d.truncation;
  EXPECT_TRUE(contains(d.truncation, "at byte " + std::to_string(good))) << d.truncation;
}

TEST(Errors, AnAllocationLargerThanAnyAddressSpaceIsDamage) {
  // Summed, such sizes wrapped: "bytes allocated 8", and `check --max-bytes` passed.
  trace_writer w;
  w.block(1, 0).stack(1, {0x1000}).alloc(1, 8, 0x100, 1);
  w.alloc(2, (std::uint64_t{1} << 57) + 1, 0x200, 1).end_block();
  EXPECT_TRUE(contains(error_of(w.file()),
                       "an allocation of 144115188075855873 bytes, more than "
                       "an address space holds"));
  trace_writer fits;  // the largest: 2^57
  fits.block(1, 0).stack(1, {0x1000}).alloc(1, std::uint64_t{1} << 57, 0x100, 1).end_block();
  EXPECT_EQ(run(fits.file()).totals.bytes_allocated, std::uint64_t{1} << 57);
}

TEST(Errors, UnknownTag) {
  trace_writer w;
  const std::size_t good = two_good_blocks(w);
  w.block(1, 5).alloc(5, 8, 0x500, 1).raw("\x7f").end_block();
  const analysis a = run(w.file());
  EXPECT_EQ(a.totals.allocations, 4u);  // the damaged block is not read at all
  EXPECT_TRUE(contains(a.truncation, "unknown record tag 0x7f"));
  EXPECT_TRUE(contains(a.truncation, "at byte " + std::to_string(good)));
  EXPECT_TRUE(contains(a.truncation, "stream 1"));
}

TEST(Errors, BlockNotStartingWithTime) {
  trace_writer w;
  const std::size_t good = two_good_blocks(w);
  w.begin_block(1).alloc(5, 8, 0x500, 1).end_block();
  const analysis a = run(w.file());
  EXPECT_TRUE(contains(a.truncation, "TIME"));
  EXPECT_TRUE(contains(a.truncation, "at byte " + std::to_string(good)));
}

TEST(Errors, HugeVarintLengths) {
  {
    trace_writer w;
    two_good_blocks(w);
    std::string rec = "\x02";  // PROCESS with an exe string of 2^40 bytes
    trace_writer::put_varint(rec, 1);
    trace_writer::put_varint(rec, 1);
    trace_writer::put_varint(rec, 0);
    trace_writer::put_varint(rec, std::uint64_t{1} << 40);
    w.block(1, 5).raw(rec).end_block();
    const analysis a = run(w.file());
    EXPECT_TRUE(contains(a.truncation, "string of 1099511627776 bytes over the limit"));
  }
  {
    trace_writer w;
    two_good_blocks(w);
    std::string rec = "\x02";  // PROCESS with argc 2^60
    trace_writer::put_varint(rec, 1);
    trace_writer::put_varint(rec, 1);
    trace_writer::put_varint(rec, 0);
    trace_writer::put_string(rec, "exe");
    trace_writer::put_varint(rec, std::uint64_t{1} << 60);
    w.block(1, 5).raw(rec).end_block();
    EXPECT_TRUE(contains(run(w.file()).truncation, "runs past the end"));
  }
  {
    trace_writer w;
    two_good_blocks(w);
    std::string rec = "\x06";  // STACK with n = 2^62 frames
    trace_writer::put_varint(rec, 1);
    trace_writer::put_varint(rec, std::uint64_t{1} << 62);
    w.block(1, 5).raw(rec + "\x01\x02").end_block();
    EXPECT_TRUE(contains(run(w.file()).truncation, "runs past the end"));
  }
  {
    trace_writer w;
    const std::size_t good = two_good_blocks(w);
    // A varint of 11 bytes, and one whose 10th byte sets bits past 64.
    w.block(1, 5).raw(std::string("\x1a") + std::string(10, '\xff') + "\x01").end_block();
    analysis a = run(w.file());
    EXPECT_TRUE(contains(a.truncation, "varint overflow"));
    EXPECT_TRUE(contains(a.truncation, "at byte " + std::to_string(good)));
    trace_writer w2;
    two_good_blocks(w2);
    w2.block(1, 5).raw(std::string("\x1a") + std::string(9, '\xff') + "\x02").end_block();
    EXPECT_TRUE(contains(run(w2.file()).truncation, "varint overflow"));
  }
}

TEST(Errors, RecordRunningPastThePayload) {
  trace_writer w;
  two_good_blocks(w);
  std::string rec = "\x10";  // ALLOC with its size, then nothing
  trace_writer::put_varint(rec, 8);
  w.block(1, 5).raw(rec).end_block();
  const analysis a = run(w.file());
  EXPECT_TRUE(contains(a.truncation, "runs past the end of the block payload"));
  EXPECT_EQ(a.totals.allocations, 4u);
}

TEST(Errors, StackIdUsedBeforeItIsDefined) {
  trace_writer w;
  const std::size_t good = two_good_blocks(w);
  w.block(1, 5).alloc(5, 8, 0x500, 5).end_block();
  const analysis a = run(w.file());
  EXPECT_TRUE(contains(a.truncation, "stack id 5 used before it is defined"));
  EXPECT_TRUE(contains(a.truncation, "at byte " + std::to_string(good)));

  trace_writer first;  // in the first block: nothing readable
  first.block(1, 0).alloc(1, 8, 0x500, 3).end_block();
  EXPECT_TRUE(contains(error_of(first.file()), "stack id 3 used before it is defined"));
}

// Format version 6: streams may define one stack id each, with the same frames only; and ids are
// never given twice, so there is no RESET.
TEST(Errors, InVersion6AStackIdDefinedAgainWithOtherFramesIsDamage) {
  trace_writer w(6);
  w.block(1, 100).thread(1).stack(1, {0x1000}).alloc(101, 8, 0x500, 1).end_block();
  w.block(2, 100).thread(2).stack(1, {0x1000}).alloc(150, 8, 0x600, 1);
  w.stack(1, {0x2000}).alloc(170, 8, 0x700, 1).end_block();
  const analysis a = run(w.file());
  EXPECT_TRUE(contains(a.truncation, "stack id 1 defined again with other frames"));
  EXPECT_EQ(a.totals.allocations, 1u);  // (the damaged block is not read)

  trace_writer r(6);  // in the first block: nothing readable
  r.block(1, 100).thread(1).stack(1, {0x1000}).alloc(101, 8, 0x500, 1).reset(102).end_block();
  EXPECT_TRUE(contains(error_of(r.file()), "a RESET record in a trace of format version 6"));
}

TEST(Errors, DamageStopsReadingAtThatBlockForAllStreams) {
  // Stream 2's damaged block sits between two blocks of stream 1 whose events are later: the
  // block after the damage is not read although its own stream is intact.
  trace_writer w;
  w.block(1, 0).stack(1, {0x1000}).alloc(10, 8, 0x100, 1).end_block();
  const std::size_t damaged = w.file().size();
  w.block(2, 0).stack(1, {0x2000}).alloc(1, 8, 0x200, 1).raw("\x7e").end_block();
  w.block(1, 20).alloc(20, 8, 0x300, 1).end(30).end_block();
  const analysis a = run(w.file());
  EXPECT_EQ(a.totals.allocations, 1u);
  EXPECT_FALSE(a.complete);
  EXPECT_TRUE(contains(a.truncation, "unknown record tag 0x7e"));
  EXPECT_TRUE(contains(a.truncation, "stream 2"));
  EXPECT_TRUE(contains(a.truncation, "at byte " + std::to_string(damaged)));
  EXPECT_EQ(a.threads, 1u);
}

// Two good blocks, then a third of two allocations that `damage` ends.
analysis with_third_block(const std::function<void(trace_writer&)>& damage) {
  trace_writer w;
  two_good_blocks(w);
  w.block(1, 5).alloc(5, 8, 0x500, 1).alloc(6, 8, 0x600, 1);
  damage(w);
  w.end_block(false);
  return run(w.file());
}

TEST(Errors, BadFreeLocalAndAddresses) {
  const auto with = with_third_block;
  analysis a = with([](trace_writer& w) { w.free_local(7, 2); });
  EXPECT_TRUE(contains(a.truncation, "FREE_LOCAL of the allocation 2 back, with 2 in the block"));
  EXPECT_EQ(a.totals.allocations, 4u);
  a = with([](trace_writer& w) { w.free_local(7, 0).free_local(8, 0); });
  EXPECT_TRUE(contains(a.truncation, "frees allocation 1 of the block twice"));
  a = with([](trace_writer& w) { w.addresses({{0, 0x500}, {2, 0x600}}); });
  EXPECT_TRUE(contains(a.truncation, "ADDRESSES lists allocation 2 of a block with 2"));
  a = with([](trace_writer& w) { w.free_local(7, 0).addresses({{1, 0x600}}); });
  EXPECT_TRUE(contains(a.truncation, "which the block frees"));
  a = with([](trace_writer& w) { w.addresses({{1, 0x600}, {1, 0x500}}); });
  EXPECT_TRUE(contains(a.truncation, "not increasing"));
  a = with([](trace_writer& w) { w.addresses({{0, 0x500}}).addresses({{1, 0x600}}); });
  EXPECT_TRUE(contains(a.truncation, "a second ADDRESSES record"));
  a = with([](trace_writer& w) { w.addresses({{0, 0x500}, {1, 0x600}}); });
  EXPECT_TRUE(a.truncation.empty()) << a.truncation;
  EXPECT_EQ(a.totals.allocations, 6u);
  EXPECT_EQ(a.totals.leaked_allocations, 6u);
}

// Format version 7: a block with FREEs or ADDRESSES ends with ORDERS, which gives each of them
// one order; without it, or with other counts, the block is damaged.
analysis with_orders_block(const std::function<void(trace_writer&)>& damage) {
  trace_writer w(7);
  w.block(1, 0).stack(1, {0x1000}).alloc(1, 8, 0x100, 1).end_block();  // 0x100 listed
  w.block(1, 5).alloc(5, 8, 0x500, 1).free(5, 0x500).free_address(6, 0x100);
  damage(w);
  w.end_block();
  return run(w.file());
}

TEST(Errors, OrdersRecordsThatBreakTheBlocksRules) {
  const auto with = with_orders_block;
  analysis a = with([](trace_writer& w) { w.without_orders(); });
  EXPECT_TRUE(contains(a.truncation, "a FREE record in a block with no orders for it"))
      << a.truncation;
  EXPECT_EQ(a.totals.allocations, 1u);  // the first block's
  // A block's ADDRESSES without its ORDERS.
  trace_writer unordered(7);
  unordered.block(1, 0).stack(1, {0x1000}).alloc(1, 8, 0x100, 1).without_orders().end_block();
  EXPECT_TRUE(contains(error_of(unordered.file()),
                       "the block has no ORDERS record, and 1 ADDRESSES entries"));
  a = with([](trace_writer& w) { w.without_orders().orders({}, {}); });
  EXPECT_TRUE(contains(a.truncation, "a FREE record in a block with no orders for it"))
      << a.truncation;
  a = with([](trace_writer& w) { w.without_orders().orders({3, 4}, {}); });
  EXPECT_TRUE(contains(a.truncation, "ORDERS gives 2 orders to 1 FREE records")) << a.truncation;
  a = with([](trace_writer& w) { w.without_orders().orders({3}, {4}); });
  EXPECT_TRUE(contains(a.truncation, "ORDERS gives 1 orders to 0 ADDRESSES entries"))
      << a.truncation;
  a = with([](trace_writer& w) { w.orders({3}, {}).free_address(7, 0x200); });
  EXPECT_TRUE(contains(a.truncation, "a second ORDERS record")) << a.truncation;
  a = with([](trace_writer&) {});
  EXPECT_TRUE(a.truncation.empty()) << a.truncation;
  EXPECT_EQ(a.totals.allocations, 2u);
  EXPECT_EQ(a.totals.frees, 2u);
  EXPECT_EQ(a.totals.leaked_allocations, 0u);
}

TEST(Errors, KeptRecordsThatBreakTheBlocksRules) {
  const auto with = with_third_block;
  analysis a = with([](trace_writer& w) { w.kept({{2, 0}}); });
  EXPECT_TRUE(contains(a.truncation, "KEPT lists allocation 2 of a block with 2"));
  a = with([](trace_writer& w) { w.free_local(7, 0).kept({{1, 0}}); });
  EXPECT_TRUE(contains(a.truncation, "KEPT lists allocation 1, which the block frees"));
  a = with([](trace_writer& w) { w.addresses({{0, 0x500}}).kept({{0, 1}}); });
  EXPECT_TRUE(contains(a.truncation, "which the block frees or lists in ADDRESSES"));
  a = with([](trace_writer& w) { w.kept().kept(); });
  EXPECT_TRUE(contains(a.truncation, "a second KEPT record"));
  a = with([](trace_writer& w) { w.addresses({{0, 0x500}}).kept(); });
  EXPECT_TRUE(a.truncation.empty()) << a.truncation;
  EXPECT_EQ(a.totals.allocations, 6u);
  EXPECT_EQ(a.totals.leaked_allocations, 6u);
  EXPECT_EQ(a.lost_events, 0u);
}

TEST(Errors, TrailingBytesAfterTheFrame) {
  trace_writer w;
  const std::size_t good = two_good_blocks(w);
  w.begin_block(1);
  w.time(5, 5).alloc(5, 8, 0x500, 1);
  const std::string payload = w.payload() + w.tick_section();
  w.end_block_raw(trace_writer::compress(payload) + "junk", payload.size());
  const analysis a = run(w.file());
  EXPECT_TRUE(contains(a.truncation, "zstd frame"));
  EXPECT_TRUE(contains(a.truncation, "at byte " + std::to_string(good)));
}

TEST(Errors, WrongDecompressedSize) {
  trace_writer w;
  two_good_blocks(w);
  w.begin_block(1);
  w.time(5, 5).alloc(5, 8, 0x500, 1);
  const std::string payload = w.payload() + w.tick_section();
  w.end_block_raw(trace_writer::compress(payload), payload.size() + 3);
  EXPECT_TRUE(contains(run(w.file()).truncation, "block header says"));
}

}  // namespace
