/* Linked with -static: lowalloc run cannot preload into it and must say so. */
#include "common.h"

int main(int argc, char** argv) { return (int)iterations(argc, argv); }
