// `lowalloc report --format pprof`: the profile is gunzipped and decoded by a small protobuf
// decoder below (field numbers of github.com/google/pprof's proto/profile.proto), then its string
// table, sample types, values (their sums against the analysis' totals), locations with their
// inlined lines, functions and mappings are checked; and the command line's --inuse and its
// refusal to write the binary format to a terminal.
#include "analyze/analysis.hpp"
#include "cli/commands.hpp"
#include "report/report.hpp"
#include "support/cli.hpp"
#include "support/trace_writer.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace {

using lowalloc::analyze::analysis;
using lowalloc::analyze::counters;
using lowalloc::analyze::frame;
using lowalloc::report::inuse_at;
using lowalloc::report::report_options;
using lowalloc_test::cli_result;
using lowalloc_test::gunzip;
using lowalloc_test::run_report;
using lowalloc_test::trace_writer;

// --- gzip and protobuf ---------------------------------------------------------------------------

// A protobuf message: its fields in order, each a varint or length-delimited bytes (the only
// wire types profile.proto's messages use).
struct pb_field {
  unsigned number = 0;
  bool is_bytes = false;
  std::uint64_t value = 0;
  std::string bytes;
};
using pb_message = std::vector<pb_field>;

bool read_varint(const std::string& s, std::size_t& i, std::uint64_t& v) {
  v = 0;
  for (unsigned shift = 0; shift < 64; shift += 7) {
    if (i >= s.size()) return false;
    const auto b = static_cast<unsigned char>(s[i++]);
    v |= std::uint64_t{b & 0x7Fu} << shift;
    if ((b & 0x80) == 0) return true;
  }
  return false;
}

pb_message decode(const std::string& s) {
  pb_message m;
  std::size_t i = 0;
  while (i < s.size()) {
    std::uint64_t key = 0;
    pb_field f;
    if (!read_varint(s, i, key)) {
      ADD_FAILURE() << "truncated key at byte " << i;
      return m;
    }
    f.number = static_cast<unsigned>(key >> 3);
    const unsigned wire = key & 7;
    if (wire == 0) {
      if (!read_varint(s, i, f.value)) ADD_FAILURE() << "truncated varint";
    } else if (wire == 2) {
      std::uint64_t n = 0;
      if (!read_varint(s, i, n) || n > s.size() - i) {
        ADD_FAILURE() << "truncated bytes of field " << f.number;
        return m;
      }
      f.is_bytes = true;
      f.bytes = s.substr(i, n);
      i += n;
    } else {
      ADD_FAILURE() << "unexpected wire type " << wire << " of field " << f.number;
      return m;
    }
    m.push_back(std::move(f));
  }
  return m;
}

std::uint64_t scalar(const pb_message& m, unsigned number) {
  std::uint64_t v = 0;  // absent: 0, the default; present more than once: the last wins
  for (const pb_field& f : m)
    if (f.number == number) {
      EXPECT_FALSE(f.is_bytes) << "field " << number;
      v = f.value;
    }
  return v;
}

std::vector<const pb_field*> repeated(const pb_message& m, unsigned number) {
  std::vector<const pb_field*> out;
  for (const pb_field& f : m)
    if (f.number == number) out.push_back(&f);
  return out;
}

// A repeated integer field, packed or not.
std::vector<std::uint64_t> integers(const pb_message& m, unsigned number) {
  std::vector<std::uint64_t> out;
  for (const pb_field* f : repeated(m, number)) {
    if (!f->is_bytes) {
      out.push_back(f->value);
      continue;
    }
    std::size_t i = 0;
    std::uint64_t v = 0;
    while (i < f->bytes.size() && read_varint(f->bytes, i, v)) out.push_back(v);
  }
  return out;
}

// --- the profile, decoded ------------------------------------------------------------------------

struct line_t {
  std::uint64_t function = 0;
  std::uint64_t line = 0;
};
struct location_t {
  std::uint64_t mapping = 0;
  std::uint64_t address = 0;
  std::vector<line_t> lines;
};
struct function_t {
  std::string name, system_name, filename;
  std::uint64_t start_line = 0;
};
struct mapping_t {
  std::uint64_t start = 0, limit = 0;
  std::string filename, build_id;
  bool functions = false, filenames = false, line_numbers = false, inline_frames = false;
};
struct sample_t {
  std::vector<std::uint64_t> locations;
  std::vector<std::uint64_t> values;
};

struct profile {
  std::vector<std::string> strings;
  std::vector<std::pair<std::string, std::string>> sample_types;
  std::pair<std::string, std::string> period_type;
  std::uint64_t period = 0;
  std::string default_sample_type;
  std::vector<sample_t> samples;
  std::map<std::uint64_t, location_t> locations;
  std::map<std::uint64_t, function_t> functions;
  std::map<std::uint64_t, mapping_t> mappings;

  std::uint64_t total(std::size_t value) const {
    std::uint64_t sum = 0;
    for (const sample_t& s : samples) sum += s.values.at(value);
    return sum;
  }
  const function_t& function_of(const line_t& l) const { return functions.at(l.function); }
  // The sample whose innermost location is at `address`.
  const sample_t* sample_at(std::uint64_t address) const {
    for (const sample_t& s : samples)
      if (!s.locations.empty() && locations.at(s.locations[0]).address == address) return &s;
    return nullptr;
  }
};

profile parse(const std::string& gzipped) {
  const pb_message m = decode(gunzip(gzipped));
  profile p;
  for (const pb_field* f : repeated(m, 6)) p.strings.push_back(f->bytes);
  const auto str = [&](std::uint64_t i) {
    EXPECT_LT(i, p.strings.size()) << "string index out of the table";
    return i < p.strings.size() ? p.strings[i] : std::string("?");
  };
  const auto value_type = [&](const std::string& bytes) {
    const pb_message v = decode(bytes);
    return std::make_pair(str(scalar(v, 1)), str(scalar(v, 2)));
  };
  for (const pb_field* f : repeated(m, 1)) p.sample_types.push_back(value_type(f->bytes));
  const std::vector<const pb_field*> period_type = repeated(m, 11);
  EXPECT_EQ(period_type.size(), 1u);
  if (!period_type.empty()) p.period_type = value_type(period_type[0]->bytes);
  p.period = scalar(m, 12);
  p.default_sample_type = str(scalar(m, 14));
  for (const pb_field* f : repeated(m, 2)) {
    const pb_message s = decode(f->bytes);
    p.samples.push_back({integers(s, 1), integers(s, 2)});
  }
  for (const pb_field* f : repeated(m, 4)) {
    const pb_message l = decode(f->bytes);
    location_t loc{scalar(l, 2), scalar(l, 3), {}};
    for (const pb_field* lf : repeated(l, 4)) {
      const pb_message line = decode(lf->bytes);
      loc.lines.push_back({scalar(line, 1), scalar(line, 2)});
    }
    EXPECT_TRUE(p.locations.emplace(scalar(l, 1), loc).second) << "location id twice";
  }
  for (const pb_field* f : repeated(m, 5)) {
    const pb_message fn = decode(f->bytes);
    function_t out{str(scalar(fn, 2)), str(scalar(fn, 3)), str(scalar(fn, 4)), scalar(fn, 5)};
    EXPECT_TRUE(p.functions.emplace(scalar(fn, 1), out).second) << "function id twice";
  }
  for (const pb_field* f : repeated(m, 3)) {
    const pb_message mp = decode(f->bytes);
    mapping_t out{scalar(mp, 2),      scalar(mp, 3),      str(scalar(mp, 5)), str(scalar(mp, 6)),
                  scalar(mp, 7) != 0, scalar(mp, 8) != 0, scalar(mp, 9) != 0, scalar(mp, 10) != 0};
    EXPECT_TRUE(p.mappings.emplace(scalar(mp, 1), out).second) << "mapping id twice";
  }
  // Every id a message refers to exists (0: none).
  for (const sample_t& s : p.samples) {
    EXPECT_EQ(s.values.size(), p.sample_types.size());
    for (std::uint64_t id : s.locations) EXPECT_EQ(p.locations.count(id), 1u) << id;
  }
  for (const auto& [id, l] : p.locations) {
    if (l.mapping != 0) {
      EXPECT_EQ(p.mappings.count(l.mapping), 1u) << l.mapping;
    }
    for (const line_t& line : l.lines) EXPECT_EQ(p.functions.count(line.function), 1u);
  }
  return p;
}

std::string pprof_of(const analysis& a, inuse_at inuse = inuse_at::end) {
  report_options ro;
  ro.inuse = inuse;
  std::ostringstream out;
  lowalloc::report::write_pprof(out, a, ro);
  return out.str();
}

// --- an analysis by hand, with inlined calls -----------------------------------------------------

frame make_frame(std::uint64_t address, const std::string& module, std::uint64_t bias,
                 const std::string& function, const std::string& file, unsigned line,
                 unsigned function_line, bool inlined = false) {
  frame f;
  f.address = address;
  f.module = module;
  f.offset = address - bias;
  f.function = function;
  f.file = file;
  f.line = line;
  f.function_line = function_line;
  f.inlined = inlined;
  return f;
}

const char* const long_string =
    "std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >";

// Stack 0: operator new (allocator plumbing), tokenize inlined into parse_line at one address,
// main. Stack 1: an address without a symbol in libweird.so, main (the same frame as stack
// 0's). Stack 2: never allocated.
analysis hand_made() {
  analysis a;
  a.process.exe = "/usr/bin/app";
  a.process.argv = {"app", "input.txt"};
  auto table = std::make_shared<lowalloc::analyze::frame_table>();
  table->frames = {
      make_frame(0x7f1000002000, "/usr/lib/libstdc++.so.6", 0x7f1000000000,
                 "operator new(unsigned long)", "", 0, 0),
      make_frame(0x401000, "/usr/bin/app", 0x400000, "tokenize(std::string_view)", "/src/tok.hpp",
                 12, 10, true),
      make_frame(0x401000, "/usr/bin/app", 0x400000, std::string("parse_line(") + long_string + ")",
                 "/src/parser.cpp", 42, 40),
      make_frame(0x402000, "/usr/bin/app", 0x400000, "main", "/src/main.cpp", 10, 5),
      make_frame(0x7f0000001234, "/usr/lib/libweird.so", 0x7f0000000000, "", "", 0, 0),
  };
  table->ids = {0, 1, 2, 3, 4, 3};
  a.frames = table;
  a.stacks.grow_to(3);
  a.stacks[0].first_frame = 0;
  a.stacks[0].frame_count = 4;
  a.stacks[0].allocator_frames = 1;
  a.stacks[0].totals = counters{10, 320, 9, 9, 1, 32, 64, 64, 2};
  a.stacks[1].first_frame = 4;
  a.stacks[1].frame_count = 2;
  a.stacks[1].totals = counters{5, 500, 5, 0, 0, 0, 100, 100, 1};
  for (const auto& st : a.stacks) lowalloc::analyze::add_counters(a.totals, st.totals);
  a.totals.peak_bytes = 164;
  a.totals.peak_allocations = 3;
  lowalloc::analyze::module_desc app;
  app.path = "/usr/bin/app";
  app.bias = 0x400000;
  app.identified = true;
  app.build_id = std::string("\x01\x02\xab\xff", 4);
  lowalloc::analyze::module_desc weird;
  weird.path = "/usr/lib/libweird.so";
  weird.bias = 0x7f0000000000;
  a.modules = {weird, app};
  return a;
}

TEST(Pprof, StringTableSampleTypesAndPeriod) {
  const profile p = parse(pprof_of(hand_made()));
  ASSERT_FALSE(p.strings.empty());
  EXPECT_EQ(p.strings[0], "");
  const std::vector<std::pair<std::string, std::string>> types = {{"alloc_objects", "count"},
                                                                  {"alloc_space", "bytes"},
                                                                  {"inuse_objects", "count"},
                                                                  {"inuse_space", "bytes"}};
  EXPECT_EQ(p.sample_types, types);
  EXPECT_EQ(p.period_type, std::make_pair(std::string("space"), std::string("bytes")));
  EXPECT_EQ(p.period, 1u);
  EXPECT_EQ(p.default_sample_type, "alloc_space");
  // Each string once.
  std::map<std::string, int> seen;
  for (const std::string& s : p.strings) EXPECT_EQ(++seen[s], 1) << s;
}

TEST(Pprof, OneSamplePerStackWhoseValuesAddUpToTheTotals) {
  const analysis a = hand_made();
  for (const inuse_at inuse : {inuse_at::end, inuse_at::peak}) {
    const profile p = parse(pprof_of(a, inuse));
    EXPECT_EQ(p.samples.size(), 2u);  // the stack that never allocated has none
    EXPECT_EQ(p.total(0), a.totals.allocations);
    EXPECT_EQ(p.total(1), a.totals.bytes_allocated);
    const bool peak = inuse == inuse_at::peak;
    EXPECT_EQ(p.total(2), peak ? a.totals.peak_allocations : a.totals.leaked_allocations);
    EXPECT_EQ(p.total(3), peak ? a.totals.peak_bytes : a.totals.leaked_bytes);
    const sample_t* s0 = p.sample_at(0x401000);
    ASSERT_NE(s0, nullptr);
    const std::vector<std::uint64_t> expected = peak ? std::vector<std::uint64_t>{10, 320, 2, 64}
                                                     : std::vector<std::uint64_t>{10, 320, 1, 32};
    EXPECT_EQ(s0->values, expected);
  }
}

TEST(Pprof, InlinedCallsAreLinesOfOneLocationInnermostFirst) {
  const profile p = parse(pprof_of(hand_made()));
  const sample_t* s0 = p.sample_at(0x401000);
  ASSERT_NE(s0, nullptr);
  // Folded as the report's sites: operator new is not shown; tokenize+parse_line, then main.
  ASSERT_EQ(s0->locations.size(), 2u);
  const location_t& inner = p.locations.at(s0->locations[0]);
  ASSERT_EQ(inner.lines.size(), 2u);
  const function_t& tokenize = p.function_of(inner.lines[0]);
  EXPECT_EQ(tokenize.name, "tokenize(std::string_view)");
  EXPECT_EQ(tokenize.filename, "/src/tok.hpp");
  EXPECT_EQ(tokenize.start_line, 10u);
  EXPECT_EQ(inner.lines[0].line, 12u);
  const function_t& parse_line = p.function_of(inner.lines[1]);
  EXPECT_EQ(parse_line.name, "parse_line(std::string)");  // as the text report shortens it
  EXPECT_EQ(parse_line.system_name, std::string("parse_line(") + long_string + ")");
  EXPECT_EQ(parse_line.filename, "/src/parser.cpp");
  EXPECT_EQ(parse_line.start_line, 40u);
  EXPECT_EQ(inner.lines[1].line, 42u);
  const location_t& outer = p.locations.at(s0->locations[1]);
  EXPECT_EQ(outer.address, 0x402000u);
  ASSERT_EQ(outer.lines.size(), 1u);
  EXPECT_EQ(p.function_of(outer.lines[0]).name, "main");
  EXPECT_EQ(outer.lines[0].line, 10u);
  // main's frame is one location for both stacks.
  const sample_t* s1 = p.sample_at(0x7f0000001234);
  ASSERT_NE(s1, nullptr);
  ASSERT_EQ(s1->locations.size(), 2u);
  EXPECT_EQ(s1->locations[1], s0->locations[1]);
  // Without a symbol: the address and its mapping, no line.
  EXPECT_TRUE(p.locations.at(s1->locations[0]).lines.empty());
}

TEST(Pprof, MappingsWithBuildIdsTheProgramFirst) {
  const profile p = parse(pprof_of(hand_made()));
  ASSERT_EQ(p.mappings.size(), 2u);  // operator new's library is folded away
  const mapping_t& app = p.mappings.at(1);
  EXPECT_EQ(app.filename, "/usr/bin/app");
  EXPECT_EQ(app.build_id, "0102abff");
  EXPECT_EQ(app.start, 0x400000u);
  EXPECT_GT(app.limit, 0x402000u);
  EXPECT_TRUE(app.functions);
  EXPECT_TRUE(app.filenames);
  EXPECT_TRUE(app.line_numbers);
  EXPECT_TRUE(app.inline_frames);
  const mapping_t& weird = p.mappings.at(2);
  EXPECT_EQ(weird.filename, "/usr/lib/libweird.so");
  EXPECT_EQ(weird.build_id, "");
  EXPECT_FALSE(weird.functions);
  EXPECT_FALSE(weird.line_numbers);
  EXPECT_FALSE(weird.inline_frames);
  for (const auto& [id, l] : p.locations)
    EXPECT_EQ(l.mapping, l.address == 0x7f0000001234 ? 2u : 1u) << std::hex << l.address;
}

TEST(Pprof, WithoutFoldingTheAllocatorFramesAreLocationsToo) {
  analysis a = hand_made();
  a.folded = false;
  const profile p = parse(pprof_of(a));
  const sample_t* s0 = p.sample_at(0x7f1000002000);
  ASSERT_NE(s0, nullptr);
  ASSERT_EQ(s0->locations.size(), 3u);
  const location_t& op_new = p.locations.at(s0->locations[0]);
  ASSERT_EQ(op_new.lines.size(), 1u);
  EXPECT_EQ(p.function_of(op_new.lines[0]).name, "operator new(unsigned long)");
  EXPECT_EQ(p.locations.at(s0->locations[1]).lines.size(), 2u);
  EXPECT_EQ(p.mappings.size(), 3u);
  // A library with functions but no file names.
  const mapping_t& libstdcxx = p.mappings.at(p.locations.at(s0->locations[0]).mapping);
  EXPECT_EQ(libstdcxx.filename, "/usr/lib/libstdc++.so.6");
  EXPECT_TRUE(libstdcxx.functions);
  EXPECT_FALSE(libstdcxx.filenames);
}

// --- from a trace -----------------------------------------------------------------------------

// Stack 1 allocates 3 x 100 bytes, stack 2 50 bytes: the peak, 350 bytes in 4 blocks; stack 1's
// are freed, stack 2 allocates 10 more bytes and both of its blocks are live at the end.
std::string peak_trace() {
  trace_writer w;
  w.block(1, 0).process(7, 1, 0, "/nonexistent/app", {"app"});
  w.module(1, 1, 0x400000, "/nonexistent/app", {{0x400000, 0x1000}});
  w.module_id(1, "\xde\xad\xbe\xef", 4096, 0);
  w.stack(1, {0x400100}).stack(2, {0x400200});
  w.alloc(2, 100, 0xA1, 1).alloc(3, 100, 0xA2, 1).alloc(4, 100, 0xA3, 1).alloc(5, 50, 0xB1, 2);
  w.free(6, 0xA1).free(7, 0xA2).free(8, 0xA3).alloc(9, 10, 0xB2, 2).end(10).end_block();
  return w.file();
}

analysis analyzed(const std::string& trace) {
  lowalloc::analyze::options o;
  o.symbolize = false;
  return lowalloc::analyze::analyze_buffer(trace.data(), trace.size(), o);
}

TEST(Pprof, InUseAtTheEndOrAtThePeakPerStack) {
  const analysis a = analyzed(peak_trace());
  EXPECT_EQ(a.totals.peak_bytes, 350u);
  EXPECT_EQ(a.totals.peak_allocations, 4u);
  const profile end = parse(pprof_of(a, inuse_at::end));
  const profile peak = parse(pprof_of(a, inuse_at::peak));
  ASSERT_NE(end.sample_at(0x400100), nullptr);
  ASSERT_NE(end.sample_at(0x400200), nullptr);
  ASSERT_NE(peak.sample_at(0x400100), nullptr);
  ASSERT_NE(peak.sample_at(0x400200), nullptr);
  EXPECT_EQ(end.sample_at(0x400100)->values, (std::vector<std::uint64_t>{3, 300, 0, 0}));
  EXPECT_EQ(end.sample_at(0x400200)->values, (std::vector<std::uint64_t>{2, 60, 2, 60}));
  EXPECT_EQ(peak.sample_at(0x400100)->values, (std::vector<std::uint64_t>{3, 300, 3, 300}));
  EXPECT_EQ(peak.sample_at(0x400200)->values, (std::vector<std::uint64_t>{2, 60, 1, 50}));
  EXPECT_EQ(peak.total(2), a.totals.peak_allocations);
  EXPECT_EQ(peak.total(3), a.totals.peak_bytes);
  EXPECT_EQ(end.total(2), a.totals.leaked_allocations);
  EXPECT_EQ(end.total(3), a.totals.leaked_bytes);
}

TEST(Pprof, TheModulesBuildIdAndAddresses) {
  const profile p = parse(pprof_of(analyzed(peak_trace())));
  ASSERT_EQ(p.mappings.size(), 1u);
  const mapping_t& m = p.mappings.begin()->second;
  EXPECT_EQ(m.filename, "/nonexistent/app");
  EXPECT_EQ(m.build_id, "deadbeef");
  EXPECT_EQ(m.start, 0x400000u);
  EXPECT_FALSE(m.functions);  // not symbolized
  for (const auto& [id, l] : p.locations) {
    EXPECT_TRUE(l.address == 0x400100 || l.address == 0x400200) << std::hex << l.address;
    EXPECT_TRUE(l.lines.empty());
  }
}

// --- the command line ----------------------------------------------------------------------------

std::string trace_file() {
  const std::string path =
      ::testing::TempDir() + "/lowalloc_pprof_" + std::to_string(::getpid()) + ".trace";
  trace_writer w;
  w.file() = peak_trace();
  w.save(path);
  return path;
}

TEST(PprofCli, WrittenToAFileOrPipeWithInuse) {
  const std::string path = trace_file();
  const int null_fd = ::open("/dev/null", O_WRONLY);
  ASSERT_GE(null_fd, 0);
  for (const char* inuse : {"end", "peak"}) {
    const cli_result r = run_report({path, "--format", "pprof", "--inuse", inuse}, null_fd);
    EXPECT_EQ(r.status, 0) << r.err;
    const profile p = parse(r.out);
    EXPECT_EQ(p.total(0), 5u);
    EXPECT_EQ(p.total(1), 360u);
    EXPECT_EQ(p.total(2), std::string(inuse) == "end" ? 2u : 4u);
    EXPECT_EQ(p.total(3), std::string(inuse) == "end" ? 60u : 350u);
  }
  const cli_result bad = run_report({path, "--format", "pprof", "--inuse", "start"}, null_fd);
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.err.find("--inuse is end or peak, not 'start'"), std::string::npos) << bad.err;
  const cli_result missing = run_report({path, "--inuse"}, null_fd);
  EXPECT_EQ(missing.status, 2);
  EXPECT_NE(missing.err.find("--inuse needs a value"), std::string::npos) << missing.err;
  ::close(null_fd);
  std::remove(path.c_str());
}

TEST(PprofCli, NotWrittenToATerminal) {
  const lowalloc_test::pseudo_terminal pty;
  if (!pty.ok()) GTEST_SKIP() << "no pseudo-terminal";
  const int terminal = pty.fd();
  const std::string path = trace_file();
  const cli_result r = run_report({path, "--format", "pprof"}, terminal);
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("--format pprof is binary: not written to a terminal"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("-o FILE"), std::string::npos) << r.err;
  // The text formats are; and with -o the profile goes to its file, whatever standard output is.
  EXPECT_EQ(run_report({path, "--format", "folded"}, terminal).status, 0);
  const std::string out_path = path + ".pb.gz";
  const cli_result to_file = run_report({path, "--format", "pprof", "-o", out_path}, terminal);
  EXPECT_EQ(to_file.status, 0) << to_file.err;
  EXPECT_EQ(to_file.out, "");
  std::ifstream in(out_path, std::ios::binary);
  const std::string written((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(parse(written).total(0), 5u);
  std::remove(out_path.c_str());
  std::remove(path.c_str());
}

}  // namespace
