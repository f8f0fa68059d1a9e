/* K x two allocations from two lines of one function: 32 bytes freed at once (temporary) and
   64 bytes kept to the end (leaked, and live at the peak): 2K allocations, 96K bytes, K
   temporary, 64K leaked bytes. */
#include "common.h"

__attribute__((noinline)) static void** two_lines(void** head) {
  void* scratch = malloc(32); /* TWO_LINES_FIRST */
  escape(scratch);
  free(scratch);
  void** kept = malloc(64); /* TWO_LINES_SECOND */
  kept[0] = head;           /* a list through the first word keeps every block reachable */
  return kept;
}

int main(int argc, char** argv) {
  long k = iterations(argc, argv);
  void** head = NULL;
  for (long i = 0; i < k; ++i) head = two_lines(head);
  escape(head);
  return 0;
}
