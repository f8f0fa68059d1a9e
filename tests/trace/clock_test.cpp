// The recorder's choice of clock (src/trace/clock.cpp, built into this test): it takes the TSC
// when CPUID says the counter is invariant, which must be when Linux lists both constant_tsc and
// nonstop_tsc for the processor.
#include "trace/clock.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <string>

namespace {

bool has_flag(const std::string& flags_line, const std::string& flag) {
  return (" " + flags_line + " ").find(" " + flag + " ") != std::string::npos;
}

TEST(Clock, InvariantTscAsLinuxListsIt) {
#if defined(__x86_64__)
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  bool found = false;
  while (std::getline(cpuinfo, line)) {
    if (line.compare(0, 5, "flags") == 0) {
      found = true;
      break;  // the first processor's
    }
  }
  if (!found) GTEST_SKIP() << "no flags line in /proc/cpuinfo";
  EXPECT_EQ(lowalloc::trace::cpu_has_invariant_tsc(),
            has_flag(line, "constant_tsc") && has_flag(line, "nonstop_tsc"))
      << line;
#else
  EXPECT_FALSE(lowalloc::trace::cpu_has_invariant_tsc());
#endif
}

}  // namespace
