// symbol_index against the function it stands in for: for every symbol of real modules (this
// test, the C library, libstdc++, a stripped program), the name of addresses at, inside, at the
// end of and just past it, and of addresses spread over the module, must be the one
// dwfl_module_addrinfo gives.
#include "analyze/symbol_index.hpp"

#include <dlfcn.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <link.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace {

using lowalloc::analyze::detail::symbol_index;

const Dwfl_Callbacks callbacks = {nullptr, dwfl_standard_find_debuginfo, nullptr, nullptr};

struct dwfl_session {
  Dwfl* dwfl = nullptr;
  Dwfl_Module* mod = nullptr;
  explicit dwfl_session(const std::string& path) {
    dwfl = dwfl_begin(&callbacks);
    if (dwfl == nullptr) return;
    dwfl_report_begin(dwfl);
    mod = dwfl_report_elf(dwfl, path.c_str(), path.c_str(), -1, 0x100000, true);
    dwfl_report_end(dwfl, nullptr, nullptr);
  }
  ~dwfl_session() {
    if (dwfl != nullptr) dwfl_end(dwfl);
  }
  dwfl_session(const dwfl_session&) = delete;
  dwfl_session& operator=(const dwfl_session&) = delete;
};

std::string text(const char* name) { return name != nullptr ? name : "(none)"; }

// The loaded object that holds `address`, by path.
std::string module_of(const void* address) {
  Dl_info info{};
  if (dladdr(address, &info) == 0 || info.dli_fname == nullptr) return "";
  return info.dli_fname;
}

std::string self_path() {
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : "";
}

// Compares the two on the addresses around symbols (at most about `symbols` of them, evenly
// chosen: libdwfl scans the whole table for each address) and on `spread` addresses over the
// module; returns how many addresses were compared.
std::size_t compare_module(const std::string& path, std::size_t spread, int symbols = 400) {
  dwfl_session s(path);
  EXPECT_NE(s.mod, nullptr) << path;
  if (s.mod == nullptr) return 0;
  Dwarf_Addr lo = 0, hi = 0;
  dwfl_module_info(s.mod, nullptr, &lo, &hi, nullptr, nullptr, nullptr, nullptr);
  std::vector<Dwarf_Addr> addresses;
  const int count = dwfl_module_getsymtab(s.mod);
  const int stride = count / symbols + 1;
  for (int i = 1; i < count; i += stride) {
    GElf_Sym sym;
    GElf_Addr value = 0;
    if (dwfl_module_getsym_info(s.mod, i, &sym, &value, nullptr, nullptr, nullptr) == nullptr)
      continue;
    if (value == 0) continue;
    for (Dwarf_Addr a : {value, value + 1, value + sym.st_size / 2, value + sym.st_size - 1,
                         value + sym.st_size, value + sym.st_size + 1, value - 1})
      addresses.push_back(a);
  }
  std::mt19937_64 rng(42);
  for (std::size_t i = 0; i < spread && hi > lo; ++i) addresses.push_back(lo + rng() % (hi - lo));
  symbol_index index(s.mod);
  std::size_t differ = 0;
  for (Dwarf_Addr pc : addresses) {
    GElf_Off off = 0;
    GElf_Sym sym;
    const std::string want =
        text(dwfl_module_addrinfo(s.mod, pc, &off, &sym, nullptr, nullptr, nullptr));
    const std::string got = text(index.name(s.mod, pc));
    if (got != want && ++differ <= 10)
      ADD_FAILURE() << path << " at " << std::hex << pc << ": " << got << ", libdwfl " << want;
  }
  EXPECT_EQ(differ, 0u) << path;
  return addresses.size();
}

TEST(SymbolIndex, ThisProgramAsLibdwflNamesIt) {
  EXPECT_GT(compare_module(self_path(), 500), 500u);
}

TEST(SymbolIndex, TheCLibraryAsLibdwflNamesIt) {
  const std::string libc = module_of(reinterpret_cast<const void*>(&strlen));
  ASSERT_FALSE(libc.empty());
  EXPECT_GT(compare_module(libc, 500), 500u);
}

TEST(SymbolIndex, LibstdcxxAsLibdwflNamesIt) {
  const std::string libstdcxx = module_of(reinterpret_cast<const void*>(&std::terminate));
  ASSERT_FALSE(libstdcxx.empty());
  EXPECT_GT(compare_module(libstdcxx, 500), 500u);
}

// A program stripped of its full symbol table: names come from .dynsym, and much of the code lies
// between exported symbols (the case where labels and libdwfl's own answer matter). Every
// symbol: aliases of one address that bind differently (python's environ and __environ) are
// where the choice is made.
TEST(SymbolIndex, AStrippedProgramAsLibdwflNamesIt) {
  for (const char* path : {"/usr/bin/python3", "/usr/bin/perl", "/usr/bin/sqlite3"}) {
    if (access(path, R_OK) != 0) continue;
    char resolved[4096];
    if (realpath(path, resolved) == nullptr) continue;
    EXPECT_GT(compare_module(resolved, 2000, 100000), 500u);
    return;
  }
  GTEST_SKIP() << "no stripped program to read";
}

}  // namespace
