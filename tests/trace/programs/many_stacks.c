/* One thread that allocates from 2^17 distinct call stacks (stack_chain.h), K times over
   (argv[1]). The recorder's table of stacks grows from its first 1,024 slots to
   2^18; in every round after the first each stack is found in it again. */
#include "stack_chain.h"

enum { bits = 17 };

int main(int argc, char** argv) {
  long k = iterations(argc, argv);
  for (long round = 0; round < k; ++round)
    for (unsigned i = 0; i < 1u << bits; ++i) chain(i, bits);
  return 0;
}
