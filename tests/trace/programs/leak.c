/* K x (malloc 100, calloc 1 x 20), never freed: 2K leaked blocks, 120K leaked bytes. */
#include "common.h"

int main(int argc, char** argv) {
  long k = iterations(argc, argv);
  void** head = NULL;
  for (long i = 0; i < k; ++i) {
    void** block = malloc(100); /* a list through the first word keeps every block reachable */
    block[0] = head;
    head = block;
    void* small = calloc(1, 20);
    escape(small);
  }
  escape(head);
  return 0;
}
