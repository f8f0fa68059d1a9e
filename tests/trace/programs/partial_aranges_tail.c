/* The third unit of partial_aranges_main.c's program, linked after the allocation's. */
long unit_tail(long n);

long unit_tail(long n) { return n * 3 + 1; }
