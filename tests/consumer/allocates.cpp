// A plain program for the consumer's allocation tests: `consumer_allocates N` makes N heap
// allocations of 64 bytes and frees them all.
#include <cstdlib>
#include <memory>
#include <vector>

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 0;
  std::vector<void*> blocks(static_cast<std::size_t>(n));  // one allocation more
  for (void*& b : blocks) b = std::malloc(64);
  for (void* b : blocks) std::free(b);
  return 0;
}
