// The clock's state and its choice at start (clock.hpp).
#include "trace/clock.hpp"

#if defined(__x86_64__)
#include <cpuid.h>
#endif

namespace lowalloc::trace {

bool use_tsc = false;
shared_stamps stamps;

// The kernel's constant_tsc and nonstop_tsc flags, which it sets on Intel and AMD processors
// from this bit (CPUID 0x80000007, EDX bit 8, "invariant TSC"). Read from /proc/cpuinfo before:
// 30 us a process, where a traced build starts thousands.
bool cpu_has_invariant_tsc() {
#if defined(__x86_64__)
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  // 0 when the processor has no such leaf.
  return __get_cpuid(0x80000007, &eax, &ebx, &ecx, &edx) != 0 && (edx & (1u << 8)) != 0;
#else
  return false;
#endif
}

}  // namespace lowalloc::trace
