/* Linked to init_lib, whose static initialiser allocates before the recorder starts. */
long init_lib_loaded(void);

int main(void) { return init_lib_loaded() == 1 ? 0 : 1; }
