/* K blocks of 1000 bytes live at once, then all freed: the peak grows by 1000K bytes. */
#include "common.h"

struct node {
  struct node* next;
  char payload[992];
};

int main(int argc, char** argv) {
  long k = iterations(argc, argv);
  struct node* head = NULL;
  for (long i = 0; i < k; ++i) {
    struct node* n = malloc(sizeof(struct node));
    n->next = head;
    head = n;
  }
  while (head != NULL) {
    struct node* next = head->next;
    free(head);
    head = next;
  }
  return 0;
}
