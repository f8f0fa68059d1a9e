// Test frames compiled with -fno-omit-frame-pointer (set in CMakeLists.txt).
#include "unwind_test_support.hpp"

#define UNWIND_TEST_NS fp
#include "unwind_test_chain.inc"
