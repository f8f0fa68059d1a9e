// The failures that must tell the truth about the traced binaries and the trace file:
// - a binary rebuilt or deleted after tracing prints as module+offset, never with the other
//   binary's functions, and stderr says once which file and how to fix it (--debug-path);
// - a stripped binary says once that it has no lines; its debug file, found by build id in a
//   --debug-path directory, gives them back;
// - a trace read while its program runs says so, not "killed or crashed";
// - a file cut short within its header is a truncated trace, not a foreign file.
#include "analyze/analysis.hpp"
#include "analyze/debug_file.hpp"

#include "command.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

namespace fs = std::filesystem;
namespace analyze = lowalloc::analyze;
using lowalloc::test::command_result;
using lowalloc::test::contains;
using lowalloc::test::program;
using lowalloc::test::read_text;
using lowalloc::test::run_command;

const std::string cli = LOWALLOC_TEST_CLI;

// How many times `part` occurs in `text`.
std::size_t count(const std::string& text, const std::string& part) {
  std::size_t n = 0;
  for (std::size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

// The line of module_program.c that module_alloc() allocates on.
unsigned alloc_line() {
  std::istringstream in(read_text(LOWALLOC_TEST_MODULE_SOURCE));
  std::string text;
  for (unsigned n = 1; std::getline(in, text); ++n)
    if (contains(text, "// MODULE_ALLOC_LINE")) return n;
  ADD_FAILURE() << "no MODULE_ALLOC_LINE in module_program.c";
  return 0;
}

// Whether a report shows module_alloc()'s frame with its file and line as its innermost frame.
// The file as DWARF names it: its directory depends on where the object was compiled (a shared
// compiler cache may hand out another checkout's object), its name and line do not.
bool shows_alloc_line(const std::string& report) {
  const std::string start = "    at module_alloc (";
  const std::size_t at = report.find(start);
  if (at == std::string::npos) return false;
  const std::size_t end = report.find(")\n", at);
  const std::string place = report.substr(at + start.size(), end - at - start.size());
  const std::string wanted = "module_program.c:" + std::to_string(alloc_line());
  return place.size() >= wanted.size() &&
         place.compare(place.size() - wanted.size(), wanted.size(), wanted) == 0 &&
         (place.size() == wanted.size() || place[place.size() - wanted.size() - 1] == '/');
}

class modules_test : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "lowalloc-modules-test-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    std::error_code ignored;
    if (std::getenv("LOWALLOC_TEST_KEEP") == nullptr) fs::remove_all(dir_, ignored);
  }

  command_result lowalloc(std::vector<std::string> args) {
    args.insert(args.begin(), cli);
    return run_command(args, dir_);
  }

  // A copy of the test program `build` at dir_/sub/module_program.
  fs::path copy_program(const std::string& build, const std::string& sub) {
    const fs::path to = dir_ / sub / "module_program";
    fs::create_directories(to.parent_path());
    fs::copy_file(program(build), to, fs::copy_options::overwrite_existing);
    return to;
  }

  // objcopy with `args`; its exit status.
  int objcopy(std::vector<std::string> args) {
    args.insert(args.begin(), LOWALLOC_TEST_OBJCOPY);
    return run_command(args, dir_).status;
  }

  // `lowalloc run` of `exe` with 100 allocations; the trace's path.
  std::string trace(const fs::path& exe) {
    const std::string file = (dir_ / "module.trace").string();
    const command_result r = lowalloc({"run", "-q", "-o", file, "--", exe.string(), "100"});
    EXPECT_EQ(r.status, 0) << r.err;
    return file;
  }

  // The GNU build id of `elf` in hex, as readelf shows it.
  std::string build_id(const fs::path& elf) {
    const command_result r = run_command({LOWALLOC_TEST_READELF, "-n", elf.string()}, dir_);
    const std::string key = "Build ID: ";
    const std::size_t at = r.out.find(key);
    if (at == std::string::npos) {
      ADD_FAILURE() << "no build id in " << elf << ": " << r.out << r.err;
      return {};
    }
    return r.out.substr(at + key.size(), r.out.find('\n', at) - at - key.size());
  }

  fs::path dir_;
};

const std::string changed = "changed since the trace was written";
const std::string missing = "is missing (deleted or moved since the trace was written)";
const std::string no_lines = "has no line information";

TEST_F(modules_test, a_rebuilt_binary_prints_module_offsets_and_says_so_once) {
  const fs::path exe = copy_program("module_program", "bin");
  const std::string file = trace(exe);
  const fs::path original = copy_program("module_program", "saved");
  copy_program("module_program_edited", "bin");  // rebuilt after the trace, other functions

  const command_result r = lowalloc({"report", file});
  EXPECT_EQ(r.status, 0) << r.err;
  // Never the rebuilt binary's functions on the traced addresses, nor the traced ones.
  EXPECT_FALSE(contains(r.out, "edited_alloc")) << r.out;
  EXPECT_FALSE(contains(r.out, "module_alloc")) << r.out;
  EXPECT_FALSE(contains(r.out, "module_program.c")) << r.out;
  EXPECT_TRUE(contains(r.out, "at module_program+0x")) << r.out;
  EXPECT_EQ(count(r.err, changed), 1u) << r.err;
  const std::string said = "lowalloc report: warning: " + exe.string() + " " + changed +
                           " (build id " + build_id(original) + " when traced, " + build_id(exe) +
                           " now): its frames show as module_program+0xOFFSET";
  EXPECT_TRUE(contains(r.err, said)) << r.err;
  EXPECT_TRUE(contains(r.err, "Keep the traced binary, or pass --debug-path DIR")) << r.err;

  // Two traces of the same binary: still said once.
  const command_result d = lowalloc({"diff", file, file});
  EXPECT_EQ(d.status, 0) << d.err;
  EXPECT_EQ(count(d.err, changed), 1u) << d.err;

  // A copy of the traced binary in a --debug-path directory: the right functions and lines.
  const command_result fixed = lowalloc({"report", file, "--debug-path", original.parent_path()});
  EXPECT_EQ(fixed.status, 0) << fixed.err;
  EXPECT_TRUE(shows_alloc_line(fixed.out)) << fixed.out;
  EXPECT_FALSE(contains(fixed.err, changed)) << fixed.err;
  for (const char* command : {"advise", "check"}) {
    std::vector<std::string> args = {command, file,
                                     "--debug-path=" + original.parent_path().string()};
    if (std::string(command) == "check") args.emplace_back("--max-allocations=1M");
    const command_result c = lowalloc(args);
    EXPECT_EQ(c.status, 0) << command << ": " << c.err;
    EXPECT_FALSE(contains(c.err, changed)) << command << ": " << c.err;
  }
  // A --site limit cannot be checked on the frames without names: before, no allocation passed
  // through module_alloc, and any limit held (exit 0).
  const command_result site =
      lowalloc({"check", file, "--site", "module_alloc", "--max-allocations", "0"});
  EXPECT_EQ(site.status, 2) << site.err;
  EXPECT_TRUE(contains(site.err,
                       "lowalloc check: cannot check --site module_alloc: no allocation "
                       "passes through it, and the frames of a binary that changed"))
      << site.err;
  const command_result named =
      lowalloc({"check", file, "--site", "module_alloc", "--max-allocations", "0", "--debug-path",
                original.parent_path()});
  EXPECT_EQ(named.status, 1) << named.err;
  EXPECT_TRUE(contains(named.err, "FAILED: module_alloc: allocations ")) << named.err;
  const command_result no_dir = lowalloc({"report", file, "--debug-path"});
  EXPECT_NE(no_dir.status, 0);
  EXPECT_TRUE(contains(no_dir.err, "--debug-path needs a value")) << no_dir.err;
}

// Without a build id, the file's size and modification time tell: a binary touched after the
// trace is not trusted; a copy of the same size in a --debug-path directory is.
TEST_F(modules_test, a_binary_without_build_id_is_checked_by_size_and_time) {
  const fs::path exe = copy_program("module_program_no_build_id", "bin");
  const std::string file = trace(exe);
  const fs::path saved = copy_program("module_program_no_build_id", "saved");
  const command_result same = lowalloc({"report", file});
  EXPECT_EQ(same.status, 0) << same.err;
  EXPECT_TRUE(contains(same.out, "at module_alloc (")) << same.out;
  EXPECT_EQ(same.err, "");

  fs::last_write_time(exe, fs::last_write_time(exe) + std::chrono::hours(1));
  const command_result r = lowalloc({"report", file});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_FALSE(contains(r.out, "module_alloc")) << r.out;
  EXPECT_TRUE(contains(r.out, "at module_program+0x")) << r.out;
  EXPECT_EQ(count(r.err, changed), 1u) << r.err;
  const std::string size = std::to_string(fs::file_size(exe));
  EXPECT_TRUE(contains(
      r.err, exe.string() + " " + changed + " (no build id; size " + size + " bytes, modified "))
      << r.err;
  EXPECT_TRUE(contains(r.err, " UTC when traced, size " + size + " bytes, modified ")) << r.err;

  const command_result fixed = lowalloc({"report", file, "--debug-path", saved.parent_path()});
  EXPECT_TRUE(contains(fixed.out, "at module_alloc (")) << fixed.out;
  EXPECT_EQ(fixed.err, "");
}

TEST_F(modules_test, a_deleted_binary_prints_module_offsets_and_says_it_is_missing) {
  const fs::path exe = copy_program("module_program", "bin");
  const std::string file = trace(exe);
  fs::remove(exe);
  const command_result r = lowalloc({"report", file});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "at module_program+0x")) << r.out;
  EXPECT_FALSE(contains(r.out, "module_alloc")) << r.out;
  EXPECT_EQ(count(r.err, missing), 1u) << r.err;
  EXPECT_TRUE(contains(r.err, "lowalloc report: warning: " + exe.string() + " " + missing))
      << r.err;
}

TEST_F(modules_test, a_stripped_binary_says_it_has_no_lines_and_its_debug_file_gives_them) {
  const fs::path exe = copy_program("module_program", "bin");
  const command_result strip =
      run_command({LOWALLOC_TEST_OBJCOPY, "--strip-debug", exe.string()}, dir_);
  ASSERT_EQ(strip.status, 0) << strip.err;
  const std::string file = trace(exe);

  const command_result r = lowalloc({"report", file});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "at module_alloc (module_program+0x")) << r.out;  // no line
  EXPECT_FALSE(contains(r.out, "module_program.c")) << r.out;
  EXPECT_EQ(count(r.err, no_lines), 1u) << r.err;
  const std::string id = build_id(exe);
  ASSERT_GT(id.size(), 2u);
  EXPECT_TRUE(contains(r.err, "lowalloc report: note: " + exe.string() + " " + no_lines +
                                  " (built without -g, or stripped)"))
      << r.err;
  EXPECT_TRUE(contains(r.err, "or pass --debug-path DIR holding its debug file as DIR/.build-id/" +
                                  id.substr(0, 2) + "/" + id.substr(2) + ".debug"))
      << r.err;

  // Its debug file where a debug directory keeps it, by build id.
  const fs::path debug = dir_ / "debug" / ".build-id" / id.substr(0, 2) / (id.substr(2) + ".debug");
  fs::create_directories(debug.parent_path());
  const command_result keep = run_command(
      {LOWALLOC_TEST_OBJCOPY, "--only-keep-debug", program("module_program"), debug.string()},
      dir_);
  ASSERT_EQ(keep.status, 0) << keep.err;
  const command_result lines =
      lowalloc({"report", file, "--debug-path", (dir_ / "debug").string()});
  EXPECT_EQ(lines.status, 0) << lines.err;
  EXPECT_TRUE(shows_alloc_line(lines.out)) << lines.out;
  EXPECT_FALSE(contains(lines.err, no_lines)) << lines.err;

  // Stripped of its symbol table too: its frames are offsets, and the note does not say they
  // show functions (before, it did).
  const fs::path bare = copy_program("module_program", "bare");
  const command_result strip_all =
      run_command({LOWALLOC_TEST_OBJCOPY, "--strip-all", bare.string()}, dir_);
  ASSERT_EQ(strip_all.status, 0) << strip_all.err;
  const command_result offsets = lowalloc({"report", trace(bare)});
  EXPECT_EQ(offsets.status, 0) << offsets.err;
  EXPECT_FALSE(contains(offsets.out, "module_alloc")) << offsets.out;
  EXPECT_TRUE(contains(offsets.err, "lowalloc report: note: " + bare.string() + " " + no_lines +
                                        " and no symbol table (stripped): its frames show as "
                                        "module_program+0xOFFSET, but for the functions it "
                                        "exports."))
      << offsets.err;
  EXPECT_FALSE(contains(offsets.err, "show functions")) << offsets.err;
}

// The sections of the ELF file open as `fd`, by name: their type, flags and bytes (empty for
// SHT_NOBITS).
struct elf_section {
  std::uint32_t type = 0;
  std::uint64_t flags = 0;
  std::string bytes;
};
std::map<std::string, elf_section> elf_sections(int fd) {
  std::map<std::string, elf_section> out;
  elf_version(EV_CURRENT);
  Elf* elf = elf_begin(fd, ELF_C_READ, nullptr);
  EXPECT_NE(elf, nullptr) << elf_errmsg(-1);
  if (elf == nullptr) return out;
  std::size_t names = 0;
  EXPECT_EQ(elf_getshdrstrndx(elf, &names), 0);
  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn != nullptr; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr shdr;
    if (gelf_getshdr(scn, &shdr) == nullptr) continue;
    elf_section& s = out[elf_strptr(elf, names, shdr.sh_name)];
    s.type = shdr.sh_type;
    s.flags = shdr.sh_flags;
    if (shdr.sh_type == SHT_NOBITS) continue;
    if (Elf_Data* d = elf_rawdata(scn, nullptr); d != nullptr && d->d_size != 0)
      s.bytes.assign(static_cast<const char*>(d->d_buf), d->d_size);
  }
  elf_end(elf);
  return out;
}

// The section header of section `name` of the ELF file at `path` (all zero if there is none).
GElf_Shdr section_header(const fs::path& path, const std::string& name) {
  GElf_Shdr found{};
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return found;
  elf_version(EV_CURRENT);
  Elf* elf = elf_begin(fd, ELF_C_READ, nullptr);
  std::size_t names = 0;
  if (elf != nullptr && elf_getshdrstrndx(elf, &names) == 0) {
    for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn != nullptr; scn = elf_nextscn(elf, scn)) {
      GElf_Shdr shdr;
      if (gelf_getshdr(scn, &shdr) != nullptr && name == elf_strptr(elf, names, shdr.sh_name))
        found = shdr;
    }
  }
  elf_end(elf);
  ::close(fd);
  return found;
}

// `path` with bytes of the compressed stream of section `name` flipped halfway through it.
void damage_compressed_section(const fs::path& path, const std::string& name) {
  const GElf_Shdr shdr = section_header(path, name);
  ASSERT_NE(shdr.sh_flags & SHF_COMPRESSED, 0u) << name;
  std::string bytes = read_text(path.string());
  for (std::size_t k = 0; k < 16; ++k)
    bytes[shdr.sh_offset + sizeof(Elf64_Chdr) + shdr.sh_size / 2 + k] ^= 0x5A;
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

// Whether inflate_debug_file(fd of `path`) gives a copy; closes both.
bool inflates(const fs::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  const int copy = lowalloc::analyze::detail::inflate_debug_file(fd);
  if (copy >= 0) ::close(copy);
  if (fd >= 0) ::close(fd);
  return copy >= 0;
}

// A debug file whose DWARF is compressed (as Debian's -dbg and -dbgsym packages ship theirs) is
// inflated into a copy in memory before libdw reads it: the copy has every section of the file
// that `objcopy --decompress-debug-sections` makes, byte for byte, and none compressed, but for
// the compressed sections symbolization never reads (location lists, macros, call frames, name
// indexes), which are empty; a file with nothing to inflate, or one that is not ELF, gives -1; a
// compressed section that does not inflate gives -1 and leaves the descriptor as it was.
TEST_F(modules_test, a_compressed_debug_file_is_inflated_section_by_section) {
  const fs::path compressed = dir_ / "compressed.debug";
  const fs::path inflated = dir_ / "inflated.debug";
  ASSERT_EQ(objcopy({"--only-keep-debug", "--compress-debug-sections=zlib",
                     program("module_program"), compressed.string()}),
            0);
  ASSERT_EQ(objcopy({"--decompress-debug-sections", compressed.string(), inflated.string()}), 0);
  const int fd = ::open(compressed.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  const auto original = elf_sections(fd);
  std::size_t were_compressed = 0;
  for (const auto& [name, s] : original) were_compressed += (s.flags & SHF_COMPRESSED) != 0;
  EXPECT_GE(were_compressed, 3u);  // .debug_info, .debug_abbrev, .debug_line at least
  const int copy = lowalloc::analyze::detail::inflate_debug_file(fd);
  ASSERT_GE(copy, 0);
  EXPECT_NE(copy, fd);
  EXPECT_NE(::fcntl(copy, F_GETFD) & FD_CLOEXEC, 0);
  const auto got = elf_sections(copy);
  const int objcopy_fd = ::open(inflated.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(objcopy_fd, 0);
  const auto by_objcopy = elf_sections(objcopy_fd);
  // Every section the original has, the others as they were, the compressed ones as objcopy
  // inflates them, or empty.
  const std::set<std::string> never_read = {
      ".debug_loclists",     ".debug_loc",      ".debug_macro",    ".debug_macinfo",
      ".debug_frame",        ".debug_pubnames", ".debug_pubtypes", ".debug_gnu_pubnames",
      ".debug_gnu_pubtypes", ".debug_names"};
  EXPECT_EQ(got.size(), original.size());
  std::size_t emptied = 0;
  for (const auto& [name, was] : original) {
    SCOPED_TRACE(name);
    const auto it = got.find(name);
    ASSERT_NE(it, got.end());
    const elf_section& now = it->second;
    EXPECT_EQ(now.type, was.type);
    EXPECT_EQ(now.flags, was.flags & ~std::uint64_t{SHF_COMPRESSED});
    if ((was.flags & SHF_COMPRESSED) != 0 && never_read.count(name) != 0) {
      EXPECT_TRUE(now.bytes.empty()) << now.bytes.size() << " bytes";
      ++emptied;
      continue;
    }
    const std::string& bytes =
        (was.flags & SHF_COMPRESSED) != 0 ? by_objcopy.at(name).bytes : was.bytes;
    EXPECT_TRUE(now.bytes == bytes) << now.bytes.size() << " bytes, expected " << bytes.size();
  }
  // (module_program, built with optimization, has location lists.)
  if (original.count(".debug_loclists") != 0) {
    EXPECT_GE(emptied, 1u);
  }
  ::close(copy);
  ::close(objcopy_fd);

  // Nothing to inflate, or not ELF: -1.
  EXPECT_FALSE(inflates(inflated));
  const fs::path text = dir_ / "text";
  std::ofstream(text) << std::string(4096, 'x');
  EXPECT_FALSE(inflates(text));
  EXPECT_TRUE(inflates(compressed));

  // A compressed stream damaged in its middle: -1, and `fd` is still the file, at offset 0.
  const fs::path damaged = dir_ / "damaged.debug";
  fs::copy_file(compressed, damaged);
  damage_compressed_section(damaged, ".debug_info");
  const int dfd = ::open(damaged.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(dfd, 0);
  EXPECT_EQ(lowalloc::analyze::detail::inflate_debug_file(dfd), -1);
  EXPECT_EQ(::lseek(dfd, 0, SEEK_CUR), 0);
  EXPECT_EQ(elf_sections(dfd).count(".debug_info"), 1u);
  ::close(dfd);
  ::close(fd);
}

// The report reads a compressed debug file, found by build id in a --debug-path directory, as
// it reads the same file uncompressed: the same lines. A debug file whose compressed DWARF is
// damaged costs the lines, not the report.
TEST_F(modules_test, a_stripped_binary_gets_its_lines_from_a_compressed_debug_file) {
  const fs::path exe = copy_program("module_program", "bin");
  ASSERT_EQ(objcopy({"--strip-debug", exe.string()}), 0);
  const std::string file = trace(exe);
  const std::string id = build_id(exe);
  ASSERT_GT(id.size(), 2u);
  const fs::path debug = dir_ / "debug" / ".build-id" / id.substr(0, 2) / (id.substr(2) + ".debug");
  fs::create_directories(debug.parent_path());

  ASSERT_EQ(objcopy({"--only-keep-debug", program("module_program"), debug.string()}), 0);
  const std::string debug_dir = (dir_ / "debug").string();
  const char* formats[] = {"text", "json"};
  std::string plain[2];
  for (int i = 0; i < 2; ++i) {
    const command_result r =
        lowalloc({"report", "--format", formats[i], file, "--debug-path", debug_dir});
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.err, "");
    plain[i] = r.out;
  }
  EXPECT_TRUE(shows_alloc_line(plain[0])) << plain[0];

  ASSERT_EQ(objcopy({"--only-keep-debug", "--compress-debug-sections=zlib",
                     program("module_program"), debug.string()}),
            0);
  ASSERT_NE(section_header(debug, ".debug_line").sh_flags & SHF_COMPRESSED, 0u);
  for (int i = 0; i < 2; ++i) {
    SCOPED_TRACE(formats[i]);
    const command_result r =
        lowalloc({"report", "--format", formats[i], file, "--debug-path", debug_dir});
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.err, "");
    EXPECT_EQ(r.out, plain[i]);
  }

  // Damage the compressed .debug_line: the report still succeeds, without that line.
  damage_compressed_section(debug, ".debug_line");
  const command_result damaged = lowalloc({"report", file, "--debug-path", debug_dir});
  EXPECT_EQ(damaged.status, 0) << damaged.err;
  EXPECT_TRUE(contains(damaged.out, "at module_alloc (")) << damaged.out;
  EXPECT_FALSE(shows_alloc_line(damaged.out)) << damaged.out;
}

// A unit compiled with a relative source path names its file relative to its compilation
// directory: the report joins the two (as debuggers do), so the file reads from any directory.
TEST_F(modules_test, a_file_named_relative_to_its_compilation_directory_is_made_absolute) {
  const fs::path exe = program("module_program_relative");
  const std::string file = trace(exe);
  const command_result r = lowalloc({"report", file});
  EXPECT_EQ(r.status, 0) << r.err;
  const std::string wanted = "    at module_alloc (" +
                             fs::path(LOWALLOC_TEST_MODULE_SOURCE).lexically_normal().string() +
                             ":" + std::to_string(alloc_line()) + ")\n";
  EXPECT_TRUE(contains(r.out, wanted)) << wanted << r.out;
  EXPECT_FALSE(contains(r.out, "../")) << r.out;
}

// A program whose .debug_aranges lists some of its units only, as a Go program built with cgo
// lists its C units and not its Go ones. libdwfl takes each listed range to reach to the start of
// the next, so a frame in an unlisted unit after a listed one was given that one's last line.
TEST_F(modules_test, a_unit_that_debug_aranges_does_not_list_has_its_own_lines) {
  const fs::path exe = dir_ / "partial_aranges";
  fs::copy_file(program("partial_aranges"), exe);
  // unit_alloc's address, then the sets of .debug_aranges that do not hold it.
  const command_result symbols = run_command({LOWALLOC_TEST_READELF, "-sW", exe.string()}, dir_);
  std::uint64_t alloc_at = 0;
  std::istringstream lines(symbols.out);
  for (std::string line; std::getline(lines, line);)
    if (line.size() > 11 && line.compare(line.size() - 11, 11, " unit_alloc") == 0) {
      std::istringstream fields(line);
      std::string index, value;
      fields >> index >> value;
      alloc_at = std::stoull(value, nullptr, 16);
    }
  ASSERT_NE(alloc_at, 0u) << symbols.out;
  const fs::path all = dir_ / "aranges";
  ASSERT_EQ(objcopy({"--dump-section", ".debug_aranges=" + all.string(), exe.string()}), 0);
  const std::string bytes = read_text(all.string());
  const auto word = [&bytes](std::size_t at, std::size_t n) {
    std::uint64_t v = 0;
    for (std::size_t i = 0; i < n; ++i)
      v |= std::uint64_t{static_cast<unsigned char>(bytes[at + i])} << (8 * i);
    return v;
  };
  std::string kept;
  std::size_t dropped = 0;
  for (std::size_t set = 0; set + 16 <= bytes.size();) {
    const std::size_t end = set + 4 + word(set, 4);  // 32-bit DWARF: a length, then the set
    ASSERT_LE(end, bytes.size());
    bool holds = false;
    for (std::size_t at = set + 16; at + 16 <= end; at += 16)  // after a 16-byte header
      holds = holds || (alloc_at >= word(at, 8) && alloc_at < word(at, 8) + word(at + 8, 8));
    if (holds)
      ++dropped;
    else
      kept += bytes.substr(set, end - set);
    set = end;
  }
  ASSERT_EQ(dropped, 1u);
  ASSERT_FALSE(kept.empty()) << "main's unit is listed";
  const fs::path some = dir_ / "aranges.kept";
  std::ofstream(some, std::ios::binary) << kept;
  ASSERT_EQ(objcopy({"--update-section", ".debug_aranges=" + some.string(), exe.string()}), 0);

  const std::string file = trace(exe);
  const command_result r = lowalloc({"report", file});
  EXPECT_EQ(r.status, 0) << r.err;
  unsigned line = 0;
  std::istringstream in(
      read_text(fs::path(LOWALLOC_TEST_MODULE_SOURCE).parent_path() / "partial_aranges_alloc.c"));
  std::string text;
  for (unsigned n = 1; std::getline(in, text); ++n)
    if (contains(text, "// UNIT_ALLOC_LINE")) line = n;
  ASSERT_NE(line, 0u);
  const std::string start = "    at unit_alloc (";
  const std::size_t at = r.out.find(start);
  ASSERT_NE(at, std::string::npos) << r.out;
  const std::string place =
      r.out.substr(at + start.size(), r.out.find(")\n", at) - at - start.size());
  const std::string wanted = "partial_aranges_alloc.c:" + std::to_string(line);
  EXPECT_TRUE(place.size() >= wanted.size() &&
              place.compare(place.size() - wanted.size(), wanted.size(), wanted) == 0)
      << place;
}

TEST_F(modules_test, a_trace_read_while_its_program_runs_says_so) {
  // module_program waits on a pipe after 5,000 kept allocations (over a block's worth: one
  // block is written before it waits).
  int in[2];
  ASSERT_EQ(pipe(in), 0);
  const std::string file = (dir_ / "running.trace").string();
  const std::string out = (dir_ / "running.out").string();
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in[0], 0);
  posix_spawn_file_actions_addclose(&actions, in[1]);
  posix_spawn_file_actions_addopen(&actions, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  std::vector<std::string> args = {cli,    "run", "-q", "-o", file, "--", program("module_program"),
                                   "5000", "wait"};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  ASSERT_EQ(posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ), 0);
  posix_spawn_file_actions_destroy(&actions);
  close(in[0]);

  // Read it until a block is there (the recorder's writer thread writes it).
  command_result r;
  const std::vector<std::string> report = {cli, "report", file};
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(8);
  do {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    r = run_command(report, dir_);
  } while (r.status != 0 && std::chrono::steady_clock::now() < deadline);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(contains(read_text(out), "ready"));
  EXPECT_TRUE(contains(r.out, "\nthe program is still running (pid ")) << r.out;
  EXPECT_FALSE(contains(r.out, "did not finish")) << r.out;
  const analyze::analysis a = analyze::analyze_file(file);
  EXPECT_FALSE(a.complete);
  EXPECT_TRUE(a.running);
  EXPECT_TRUE(contains(r.out, "(pid " + std::to_string(a.process.pid) + "); the trace so far"))
      << r.out;
  EXPECT_TRUE(fs::exists("/proc/" + std::to_string(a.process.pid)));

  // Let it finish: the same trace is complete, and says nothing of running.
  close(in[1]);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  const command_result done = lowalloc({"report", file});
  EXPECT_EQ(done.status, 0) << done.err;
  EXPECT_FALSE(contains(done.out, "still running")) << done.out;
  EXPECT_FALSE(contains(done.out, "did not finish")) << done.out;
}

TEST_F(modules_test, a_ten_byte_prefix_of_a_trace_is_a_truncated_trace) {
  const std::string file = trace(program("module_program"));
  const std::string bytes = read_text(file);
  ASSERT_GT(bytes.size(), 16u);
  const fs::path cut = dir_ / "cut.trace";
  std::ofstream(cut, std::ios::binary) << bytes.substr(0, 10);
  const command_result r = lowalloc({"report", cut.string()});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err,
            "lowalloc report: " + cut.string() + ": a truncated lowalloc trace (10 bytes)\n");
  EXPECT_EQ(r.out, "");

  // A file that does not begin as a trace is still not one.
  const fs::path other = dir_ / "other.trace";
  std::ofstream(other, std::ios::binary) << "LOWALLOW and more text than a header";
  const command_result o = lowalloc({"report", other.string()});
  EXPECT_EQ(o.status, 2);
  EXPECT_TRUE(contains(o.err, other.string() + ": not a lowalloc trace file")) << o.err;
}

}  // namespace
