// Symbolization on a real binary, this test itself (built with -g): return addresses of known
// functions go into a synthetic trace with MODULE records from dl_iterate_phdr, and the function
// names, file:line and inlined calls come back. Also the folding of allocator frames.
#include "analyze/analysis.hpp"
#include "analyze/fold.hpp"
#include "support/trace_writer.hpp"

#include <gtest/gtest.h>

#include <dlfcn.h>
#include <link.h>
#include <unistd.h>

#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

namespace symtest {

std::uintptr_t capture();
std::uintptr_t known_caller();
std::uintptr_t outer_of_inlined();
std::uintptr_t outer_of_two();

int capture_line = 0;
int inlined_call_line = 0;
int inlined_capture_line = 0;
volatile int sink = 0;

__attribute__((noinline)) std::uintptr_t capture() {
  sink = sink + 1;
  return reinterpret_cast<std::uintptr_t>(__builtin_return_address(0));
}

__attribute__((noinline)) std::uintptr_t known_caller() {
  capture_line = __LINE__ + 1;
  const std::uintptr_t ra = capture();
  sink = sink + 1;  // no tail call: the return address stays in known_caller
  return ra;
}

__attribute__((always_inline)) inline std::uintptr_t inlined_helper() {
  inlined_capture_line = __LINE__ + 1;
  const std::uintptr_t ra = capture();
  sink = sink + 2;
  return ra;
}

__attribute__((noinline)) std::uintptr_t outer_of_inlined() {
  inlined_call_line = __LINE__ + 1;
  const std::uintptr_t ra = inlined_helper();
  sink = sink + 3;
  return ra;
}

int level2_call_line = 0;
int outer2_call_line = 0;

__attribute__((always_inline)) inline std::uintptr_t level2() {
  level2_call_line = __LINE__ + 1;
  const std::uintptr_t ra = inlined_helper();
  sink = sink + 4;
  return ra;
}

__attribute__((noinline)) std::uintptr_t outer_of_two() {
  outer2_call_line = __LINE__ + 1;
  const std::uintptr_t ra = level2();
  sink = sink + 5;
  return ra;
}

// A frame whose demangled name carries template arguments.
template <class T>
struct holder {
  __attribute__((noinline)) static std::uintptr_t grow() {
    const std::uintptr_t ra = capture();
    sink = sink + 6;
    return ra;
  }
};

}  // namespace symtest

namespace {

using lowalloc::analyze::analysis;
using lowalloc::analyze::frame;
using lowalloc_test::trace_writer;

struct loaded_module {
  std::string path;
  std::uint64_t bias = 0;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> segments;
};

// The modules of this process, as the recorder describes them.
std::vector<loaded_module> this_process_modules() {
  std::vector<loaded_module> mods;
  dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void* data) {
        auto& out = *static_cast<std::vector<loaded_module>*>(data);
        loaded_module m;
        m.path = info->dlpi_name != nullptr ? info->dlpi_name : "";
        if (m.path.empty() && out.empty()) {
          char buf[PATH_MAX];
          const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
          if (n > 0) m.path.assign(buf, static_cast<std::size_t>(n));
        }
        m.bias = info->dlpi_addr;
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          const ElfW(Phdr)& ph = info->dlpi_phdr[i];
          if (ph.p_type == PT_LOAD)
            m.segments.emplace_back(info->dlpi_addr + ph.p_vaddr, ph.p_memsz);
        }
        if (!m.path.empty()) out.push_back(std::move(m));
        return 0;
      },
      &mods);
  return mods;
}

// A trace writer with an open block that holds MODULE records for this process; `main_path`,
// when given, stands for the program's own file.
trace_writer with_this_process_modules(const std::string& main_path = {}) {
  trace_writer w;
  w.block(1, 0);
  std::uint64_t id = 1;
  for (const loaded_module& m : this_process_modules())
    w.module(1, id, m.bias, id == 1 && !main_path.empty() ? main_path : m.path, m.segments), ++id;
  return w;
}

analysis symbolize_stack(const std::vector<std::uint64_t>& ips, bool fold = true,
                         const std::string& main_path = {}) {
  trace_writer w = with_this_process_modules(main_path);
  w.stack(1, ips).alloc(2, 8, 0x100, 1).end_block();
  lowalloc::analyze::options o;
  o.fold_allocator = fold;
  return lowalloc::analyze::analyze_buffer(w.file().data(), w.file().size(), o);
}

// An address inside libc's own `name` (not a sanitizer's interceptor of the same name).
std::uintptr_t inside_libc(const char* name) {
  void* libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
  void* f = libc != nullptr ? dlsym(libc, name) : nullptr;
  EXPECT_NE(f, nullptr) << name;
  return reinterpret_cast<std::uintptr_t>(f) + 8;
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

TEST(Symbolize, FunctionFileAndLineOfAReturnAddress) {
  const std::uintptr_t ra = symtest::known_caller();
  const analysis a = symbolize_stack({ra});
  ASSERT_EQ(a.sites.size(), 1u);
  ASSERT_EQ(a.sites[0].stack.size(), 1u);
  const frame& f = a.sites[0].stack[0];
  EXPECT_EQ(f.address, ra);
  EXPECT_EQ(f.function, "symtest::known_caller()");
  EXPECT_TRUE(ends_with(f.file, "symbolize_test.cpp")) << f.file;
  EXPECT_EQ(f.line, static_cast<unsigned>(symtest::capture_line));
  EXPECT_FALSE(f.inlined);
  EXPECT_FALSE(f.module.empty());
  EXPECT_EQ(f.offset, ra - this_process_modules()[0].bias);
}

// MODULE_ID says what the traced file was: a file on disk with another build id is not read (its
// functions would be another binary's), and the analysis says so once.
TEST(Symbolize, AModuleWhoseFileChangedIsNotRead) {
  const std::uintptr_t ra = symtest::known_caller();
  const std::uintptr_t ra2 = symtest::outer_of_inlined();
  const std::string other_build(20, '\xab');
  for (const bool before : {false, true}) {
    trace_writer w;
    w.block(1, 0);
    if (before) w.module_id(1, other_build, 0, 0);  // may come before its MODULE record
    std::uint64_t id = 1;
    for (const loaded_module& m : this_process_modules())
      w.module(1, id++, m.bias, m.path, m.segments);
    if (!before) w.module_id(1, other_build, 0, 0);
    w.stack(1, {ra}).stack(2, {ra2}).alloc(2, 8, 0x100, 1).alloc(2, 8, 0x200, 2).end_block();
    const analysis a = lowalloc::analyze::analyze_buffer(w.file().data(), w.file().size(), {});
    ASSERT_EQ(a.sites.size(), 2u);
    for (const lowalloc::analyze::site& site : a.sites) {
      const frame& f = site.stack[0];
      EXPECT_EQ(f.function, "") << f.function;
      EXPECT_EQ(f.file, "");
      EXPECT_EQ(f.module, this_process_modules()[0].path);
      EXPECT_EQ(f.offset, f.address - this_process_modules()[0].bias);
    }
    std::string hex;
    for (int i = 0; i < 20; ++i) hex += "ab";
    ASSERT_EQ(a.module_warnings.size(), 1u);
    const std::string said = "warning: " + this_process_modules()[0].path +
                             " changed since the trace was written (build id " + hex +
                             " when traced, ";
    EXPECT_EQ(a.module_warnings[0].rfind(said, 0), 0u) << a.module_warnings[0];
  }
}

TEST(Symbolize, AModuleWhoseFileIsMissingIsNotRead) {
  const std::uintptr_t ra = symtest::known_caller();
  trace_writer w = with_this_process_modules("/nonexistent/symbolize_test");
  w.module_id(1, std::string(20, '\x01'), 1000, 5);
  w.stack(1, {ra}).alloc(2, 8, 0x100, 1).end_block();
  const analysis a = lowalloc::analyze::analyze_buffer(w.file().data(), w.file().size(), {});
  ASSERT_EQ(a.sites.size(), 1u);
  EXPECT_EQ(a.sites[0].stack[0].function, "");
  EXPECT_EQ(a.sites[0].stack[0].module, "/nonexistent/symbolize_test");
  ASSERT_EQ(a.module_warnings.size(), 1u);
  EXPECT_EQ(a.module_warnings[0].rfind("warning: /nonexistent/symbolize_test is missing (deleted "
                                       "or moved since the trace was written)",
                                       0),
            0u)
      << a.module_warnings[0];
  // Without MODULE_ID (a trace of format 2), the same missing file is only unread, unflagged.
  trace_writer old = with_this_process_modules("/nonexistent/symbolize_test");
  old.stack(1, {ra}).alloc(2, 8, 0x100, 1).end_block();
  EXPECT_TRUE(lowalloc::analyze::analyze_buffer(old.file().data(), old.file().size(), {})
                  .module_warnings.empty());
}

TEST(Symbolize, InlinedCallsAreTheirOwnFrames) {
  const std::uintptr_t ra = symtest::outer_of_inlined();
  const analysis a = symbolize_stack({ra});
  ASSERT_EQ(a.sites.size(), 1u);
  const lowalloc::analyze::frame_list& st = a.sites[0].stack;
  ASSERT_EQ(st.size(), 2u);
  EXPECT_EQ(st[0].function, "symtest::inlined_helper()");
  EXPECT_TRUE(st[0].inlined);
  EXPECT_EQ(st[0].line, static_cast<unsigned>(symtest::inlined_capture_line));
  EXPECT_EQ(st[1].function, "symtest::outer_of_inlined()");
  EXPECT_FALSE(st[1].inlined);
  EXPECT_EQ(st[1].line, static_cast<unsigned>(symtest::inlined_call_line));
  EXPECT_TRUE(ends_with(st[1].file, "symbolize_test.cpp")) << st[1].file;
  EXPECT_EQ(st[0].address, ra);
  EXPECT_EQ(st[1].address, ra);
}

TEST(Symbolize, NestedInlinedCallsInCallerOrder) {
  const std::uintptr_t ra = symtest::outer_of_two();
  const analysis a = symbolize_stack({ra});
  ASSERT_EQ(a.sites.size(), 1u);
  const lowalloc::analyze::frame_list& st = a.sites[0].stack;
  ASSERT_EQ(st.size(), 3u);
  EXPECT_EQ(st[0].function, "symtest::inlined_helper()");
  EXPECT_EQ(st[0].line, static_cast<unsigned>(symtest::inlined_capture_line));
  EXPECT_TRUE(st[0].inlined);
  EXPECT_EQ(st[1].function, "symtest::level2()");
  EXPECT_EQ(st[1].line, static_cast<unsigned>(symtest::level2_call_line));
  EXPECT_TRUE(st[1].inlined);
  EXPECT_EQ(st[2].function, "symtest::outer_of_two()");
  EXPECT_EQ(st[2].line, static_cast<unsigned>(symtest::outer2_call_line));
  EXPECT_FALSE(st[2].inlined);
}

TEST(Symbolize, AProgramWithoutDebugArangesHasItsLinesAndInlinedCalls) {
  // clang writes no .debug_aranges unless asked, and libdw finds a unit by address through that
  // section only: a copy of this test without it must symbolize as the test does.
  char self[PATH_MAX];
  const ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
  ASSERT_GT(len, 0);
  self[len] = 0;
  const std::string copy = ::testing::TempDir() + "symbolize_test_no_aranges";
  const std::string command =
      "objcopy --remove-section .debug_aranges '" + std::string(self) + "' '" + copy + "'";
  ASSERT_EQ(std::system(command.c_str()), 0) << command;
  const std::string check = "readelf -S '" + copy + "' | grep -q debug_aranges";
  ASSERT_NE(std::system(check.c_str()), 0) << "the copy still has .debug_aranges";

  const std::uintptr_t ra = symtest::outer_of_two();
  const analysis a = symbolize_stack({ra}, true, copy);
  std::remove(copy.c_str());
  ASSERT_EQ(a.sites.size(), 1u);
  const lowalloc::analyze::frame_list& st = a.sites[0].stack;
  ASSERT_EQ(st.size(), 3u);
  EXPECT_EQ(st[0].function, "symtest::inlined_helper()");
  EXPECT_EQ(st[0].line, static_cast<unsigned>(symtest::inlined_capture_line));
  EXPECT_TRUE(ends_with(st[0].file, "symbolize_test.cpp")) << st[0].file;
  EXPECT_TRUE(st[0].inlined);
  EXPECT_EQ(st[1].function, "symtest::level2()");
  EXPECT_EQ(st[1].line, static_cast<unsigned>(symtest::level2_call_line));
  EXPECT_EQ(st[2].function, "symtest::outer_of_two()");
  EXPECT_EQ(st[2].line, static_cast<unsigned>(symtest::outer2_call_line));
  EXPECT_FALSE(st[2].inlined);
  EXPECT_EQ(st[2].module, copy);
}

TEST(Symbolize, LibcFramesAreFoldedUnlessAskedNot) {
  // A return address inside libc's malloc (no debug info needed: the ELF symbol names it).
  const std::uintptr_t in_malloc = inside_libc("malloc");
  const std::uintptr_t ra = symtest::known_caller();
  const analysis folded = symbolize_stack({in_malloc, ra});
  ASSERT_EQ(folded.sites.size(), 1u);
  ASSERT_EQ(folded.sites[0].stack.size(), 1u);
  EXPECT_EQ(folded.sites[0].folded_frames, 1u);
  EXPECT_EQ(folded.sites[0].stack[0].function, "symtest::known_caller()");

  const analysis kept = symbolize_stack({in_malloc, ra}, false);
  ASSERT_EQ(kept.sites[0].stack.size(), 2u);
  EXPECT_EQ(kept.sites[0].folded_frames, 0u);
  EXPECT_NE(kept.sites[0].stack[0].function.find("malloc"), std::string::npos)
      << kept.sites[0].stack[0].function;
}

TEST(Fold, BaseName) {
  using lowalloc::analyze::detail::base_name;
  EXPECT_EQ(
      base_name("void std::vector<int, std::allocator<int> >::_M_realloc_insert<int const&>"
                "(__gnu_cxx::__normal_iterator<int*, std::vector<int, std::allocator<int> > >, "
                "int const&)"),
      "std::vector::_M_realloc_insert");
  EXPECT_EQ(base_name("operator new(unsigned long)"), "operator new");
  EXPECT_EQ(base_name("operator new[](unsigned long, std::nothrow_t const&)"), "operator new[]");
  EXPECT_EQ(base_name("operator new(unsigned long, std::align_val_t)"), "operator new");
  EXPECT_EQ(base_name("__gnu_cxx::new_allocator<char>::allocate(unsigned long, void const*)"),
            "__gnu_cxx::new_allocator::allocate");
  EXPECT_EQ(base_name("std::vector<int, std::allocator<int> >::reserve(unsigned long) const"),
            "std::vector::reserve");
  EXPECT_EQ(base_name("std::__cxx11::basic_string<char, std::char_traits<char>, "
                      "std::allocator<char> >::_M_create(unsigned long&, unsigned long)"),
            "std::__cxx11::basic_string::_M_create");
  EXPECT_EQ(base_name("(anonymous namespace)::parse(std::string_view)"),
            "(anonymous namespace)::parse");
  EXPECT_EQ(base_name("std::ostream& std::operator<< <std::char_traits<char> >(std::ostream&, "
                      "char const*)"),
            "std::operator<<");
  EXPECT_EQ(base_name("foo::operator()(int) const"), "foo::operator()");
  // An operator template whose arguments follow with no space.
  EXPECT_EQ(base_name("std::__cxx11::basic_string<char, std::char_traits<char>, "
                      "std::allocator<char> > std::operator+<char, std::char_traits<char>, "
                      "std::allocator<char> >(std::__cxx11::basic_string<char, "
                      "std::char_traits<char>, std::allocator<char> > const&, char const*)"),
            "std::operator+");
  EXPECT_EQ(base_name("bool std::operator==<int>(std::optional<int> const&, int const&)"),
            "std::operator==");
  EXPECT_EQ(base_name("auto std::operator<=><int>(std::optional<int> const&, int const&)"),
            "std::operator<=>");
  EXPECT_EQ(base_name("A::operator<<=(int)"), "A::operator<<=");
  EXPECT_EQ(base_name("malloc"), "malloc");
  EXPECT_EQ(base_name("f() [clone .isra.0]"), "f");
}

frame named(const std::string& function, const std::string& module = "/usr/bin/app") {
  frame f;
  f.function = function;
  f.module = module;
  return f;
}

TEST(Fold, AllocatorFramesAtTheInnermostEnd) {
  using lowalloc::analyze::detail::fold_count;
  using lowalloc::analyze::detail::is_allocator_frame;
  const std::vector<frame> vec_push = {
      named("operator new(unsigned long)", "/usr/lib/x86_64-linux-gnu/libstdc++.so.6"),
      named("std::__new_allocator<int>::allocate(unsigned long, void const*)"),
      named("std::allocator_traits<std::allocator<int> >::allocate(std::allocator<int>&, "
            "unsigned long)"),
      named("std::_Vector_base<int, std::allocator<int> >::_M_allocate(unsigned long)"),
      named("void std::vector<int, std::allocator<int> >::_M_realloc_insert<int const&>("
            "__gnu_cxx::__normal_iterator<int*, std::vector<int, std::allocator<int> > >, int "
            "const&)"),
      named("std::vector<int, std::allocator<int> >::push_back(int const&)"),
      named("collect(int)"),
      named("main"),
  };
  EXPECT_EQ(fold_count(vec_push), 6u);  // push_back too: collect(int) is the user's line
  EXPECT_EQ(fold_count({named("malloc"), named("strdup"), named("user()")}), 2u);
  EXPECT_EQ(fold_count({named("malloc"), named("free")}), 1u);    // never the last frame
  EXPECT_EQ(fold_count({named("user()"), named("malloc")}), 0u);  // only at the innermost end
  EXPECT_EQ(fold_count({}), 0u);
  EXPECT_TRUE(
      is_allocator_frame(named("std::__cxx11::basic_string<char, std::char_traits<char>, "
                               "std::allocator<char> >::_M_mutate(unsigned long, unsigned "
                               "long, char const*, unsigned long)")));
  EXPECT_TRUE(
      is_allocator_frame(named("std::_Rb_tree<int, int, std::_Identity<int>, "
                               "std::less<int>, std::allocator<int> >::_M_get_node()")));
  EXPECT_TRUE(
      is_allocator_frame(named("std::__detail::_Hashtable_alloc<std::allocator<std::__"
                               "detail::_Hash_node<int, false> > >::_M_allocate_node<int "
                               "const&>(int const&)")));
  EXPECT_TRUE(
      is_allocator_frame(named("lowalloc::small_vector_base<int, std::allocator<int> "
                               ">::reallocate(unsigned long)")));
  EXPECT_TRUE(is_allocator_frame(named("__libc_malloc", "/lib/x86_64-linux-gnu/libc.so.6")));
  EXPECT_TRUE(is_allocator_frame(named("__GI___libc_malloc", "/lib/x86_64-linux-gnu/libc.so.6")));
  EXPECT_TRUE(
      is_allocator_frame(named("std::vector<int, std::allocator<int> >::push_back(int "
                               "const&)")));
  // lowalloc's own frames fold by where they are defined: a user's code in a namespace of that
  // name stays.
  frame ours = named("lowalloc::small_vector<int, 8ul, std::allocator<int> >::push_back(int&&)");
  ours.file = "/usr/include/lowalloc/small_vector.hpp";
  EXPECT_TRUE(is_allocator_frame(ours));
  ours.file = "/opt/x/include/lowalloc/detail/relocate.hpp";
  EXPECT_TRUE(is_allocator_frame(ours));
  frame users = named("lowalloc::app::load_config(char const*)");
  users.file = "/home/me/app/src/config.cpp";
  EXPECT_FALSE(is_allocator_frame(users));
  users.file = "/home/me/app/lowalloc/config.cpp";
  EXPECT_FALSE(is_allocator_frame(users));
  // No line information: the names lowalloc's headers define decide, not the namespace (the
  // lowalloc command itself, built without -g, is in namespace lowalloc).
  users.file = "";
  EXPECT_FALSE(is_allocator_frame(users));
  EXPECT_FALSE(is_allocator_frame(named("lowalloc::analyze::build_stacks(int)")));
  EXPECT_FALSE(is_allocator_frame(named("lowalloc::small_vectors_of_mine(int)")));
  EXPECT_TRUE(is_allocator_frame(
      named("lowalloc::small_vector<int, 8ul, std::allocator<int> >::push_back(int&&)")));
  EXPECT_TRUE(is_allocator_frame(
      named("lowalloc::detail::vector_impl<int, std::allocator<int> >::grow_to(unsigned long)")));
  EXPECT_TRUE(is_allocator_frame(
      named("lowalloc::basic_string<char, lowalloc::small_storage<char, 16ul, "
            "std::allocator<char> >, std::char_traits<char> >::append(char const*)")));
  EXPECT_TRUE(is_allocator_frame(named("lowalloc::operator+<char, ...>(...)")));
  frame in_header = named("frobnicate(int)");  // inlined from a standard header
  in_header.file = "/usr/include/c++/12/bits/stl_algo.h";
  EXPECT_TRUE(is_allocator_frame(in_header));
  EXPECT_TRUE(is_allocator_frame(named("_IO_file_doallocate", "/lib/x86_64-linux-gnu/libc.so.6")));
  EXPECT_FALSE(is_allocator_frame(named("my::allocate(unsigned long)")));
  EXPECT_FALSE(is_allocator_frame(named("standard::thing()")));
  frame user_file = named("collect(int)");
  user_file.file = "/home/me/src/collect.cpp";
  EXPECT_FALSE(is_allocator_frame(user_file));
  EXPECT_FALSE(is_allocator_frame(named("")));
}

TEST(Fold, StacksEqualAfterFoldingMergeIntoOneSite) {
  // Two stacks that differ only in allocator frames: one site, when the frames have names.
  const std::uintptr_t ra = symtest::known_caller();
  const std::uintptr_t in_malloc = inside_libc("malloc");
  const std::uintptr_t in_calloc = inside_libc("calloc");
  trace_writer w = with_this_process_modules();
  w.stack(1, {in_malloc, ra}).stack(2, {in_calloc, ra});
  w.alloc(2, 8, 0x100, 1).alloc(3, 16, 0x200, 2).alloc(4, 16, 0x300, 2).end_block();
  const analysis a = lowalloc::analyze::analyze_buffer(w.file().data(), w.file().size());
  ASSERT_EQ(a.sites.size(), 1u);
  EXPECT_EQ(a.sites[0].totals.allocations, 3u);
  EXPECT_EQ(a.sites[0].totals.bytes_allocated, 40u);
  EXPECT_EQ(a.sites[0].sizes.count(16), 2u);
}

TEST(Fold, FoldingHidesFramesFromSitesButTheStacksKeepThem) {
  const std::uintptr_t ra = symtest::holder<std::vector<int>>::grow();
  const std::uintptr_t in_malloc = inside_libc("malloc");
  const std::uintptr_t in_calloc = inside_libc("calloc");
  trace_writer w = with_this_process_modules();
  w.stack(1, {in_malloc, ra}).stack(2, {in_calloc, ra});
  w.alloc(2, 8, 0x100, 1).alloc(3, 16, 0x200, 2).end_block();
  const analysis a = lowalloc::analyze::analyze_buffer(w.file().data(), w.file().size());
  ASSERT_EQ(a.sites.size(), 1u);
  const auto& shown = a.sites[0].stack;
  ASSERT_FALSE(shown.empty());
  EXPECT_NE(
      shown[0].function.find("symtest::holder<std::vector<int, std::allocator<int> > >::grow"),
      std::string::npos)
      << shown[0].function;
  // Both stacks as recorded: the allocation function first, with the whole name.
  const std::vector<std::uint32_t> stacks = a.site_stacks(0);
  ASSERT_EQ(stacks.size(), 2u);
  const char* const names[] = {"malloc", "calloc"};
  for (std::size_t i = 0; i < 2; ++i) {
    const lowalloc::analyze::stack& st = a.stacks.at(stacks[i]);
    EXPECT_EQ(st.allocator_frames, 1u);
    const lowalloc::analyze::frame_list frames = a.stack_frames(stacks[i]);
    ASSERT_EQ(frames.size(), shown.size() + 1);
    EXPECT_NE(frames[0].function.find(names[i]), std::string::npos) << frames[0].function;
    EXPECT_EQ(frames[1].function, shown[0].function);
    EXPECT_EQ(st.site, 0u);
  }
}

}  // namespace

TEST(Fold, TheCRuntimesStartFramesAtTheOutermostEnd) {
  using lowalloc::analyze::detail::start_fold_count;
  const std::string libc = "/lib/x86_64-linux-gnu/libc.so.6";
  // As glibc 2.36 names them: main's caller, __libc_start_main's internal name, _start.
  EXPECT_EQ(
      start_fold_count({named("malloc", libc), named("main"), named("__libc_start_call_main", libc),
                        named("__libc_start_main_impl", libc), named("_start")}),
      3u);
  EXPECT_EQ(start_fold_count({named("work()"), named("main"), named("__libc_start_main", libc),
                              named("_start")}),
            2u);
  // A thread: its function stays.
  EXPECT_EQ(start_fold_count(
                {named("worker(void*)"), named("start_thread", libc), named("clone3", libc)}),
            2u);
  // Without names: libc's frames, and the frame without a name that calls them (_start).
  frame app = named("");
  app.module = "/usr/bin/app";
  frame in_libc = named("");
  in_libc.module = libc;
  EXPECT_EQ(start_fold_count({app, app, in_libc, in_libc, app}), 3u);
  EXPECT_EQ(start_fold_count({app, in_libc, in_libc}), 2u);
  // Only at the outermost end, and never the last frame.
  EXPECT_EQ(start_fold_count({named("main"), named("user()")}), 0u);
  EXPECT_EQ(start_fold_count({named("__libc_start_main", libc), named("user()")}), 0u);
  EXPECT_EQ(start_fold_count({named("__libc_start_call_main", libc), named("_start")}), 1u);
  EXPECT_EQ(start_fold_count({named("_start")}), 0u);
  EXPECT_EQ(start_fold_count({}), 0u);
  // A user's function of another name in the executable is not the entry point.
  EXPECT_EQ(start_fold_count({named("main"), named("__libc_start_main", libc), named("begin")}),
            0u);
}
