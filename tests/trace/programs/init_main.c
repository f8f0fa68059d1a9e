/* Linked to init_lib, whose static initialiser allocates before the recorder starts. With a
   second argument "free-at-exit", the library's destructor frees the blocks it kept. */
#include <string.h>

long init_lib_loaded(void);
void init_lib_free_at_exit(void);

int main(int argc, char** argv) {
  if (argc > 2 && strcmp(argv[2], "free-at-exit") == 0) init_lib_free_at_exit();
  return init_lib_loaded() == 1 ? 0 : 1;
}
