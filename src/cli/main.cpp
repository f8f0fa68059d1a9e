// The `lowalloc` command: `lowalloc run` records a program's allocations, `lowalloc report`
// prints what a trace holds, `lowalloc advise` what to change. docs/tracer.md is the manual.
#include "cli/commands.hpp"

#include <cstdio>
#include <cstring>

namespace {

constexpr const char* usage =
    "usage: lowalloc run [-o FILE] [options] -- PROGRAM [ARGS...]\n"
    "       lowalloc report FILE [--format NAME] [--top N] [--sort KEY]\n"
    "       lowalloc advise FILE [--format text|json] [--top N]\n"
    "       lowalloc help [run|report|advise]\n"
    "\n"
    "run     records every heap allocation of PROGRAM with its call stack\n"
    "report  prints the summary, the hot call sites and their sizes from a trace\n"
    "advise  says per hot call site which change removes how many allocations\n";

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fputs(usage, stderr);
    return 125;
  }
  const char* command = argv[1];
  if (std::strcmp(command, "run") == 0) return lowalloc::cli::run_main(argc - 1, argv + 1);
  if (std::strcmp(command, "report") == 0) return lowalloc::cli::report_main(argc - 1, argv + 1);
  if (std::strcmp(command, "advise") == 0) return lowalloc::cli::advise_main(argc - 1, argv + 1);
  if (std::strcmp(command, "help") == 0 || std::strcmp(command, "--help") == 0 ||
      std::strcmp(command, "-h") == 0) {
    if (argc > 2 && std::strcmp(argv[2], "run") == 0) {
      char* args[] = {argv[2], const_cast<char*>("--help"), nullptr};
      return lowalloc::cli::run_main(2, args);
    }
    if (argc > 2 && std::strcmp(argv[2], "report") == 0) {
      char* args[] = {argv[2], const_cast<char*>("--help"), nullptr};
      return lowalloc::cli::report_main(2, args);
    }
    if (argc > 2 && std::strcmp(argv[2], "advise") == 0) {
      char* args[] = {argv[2], const_cast<char*>("--help"), nullptr};
      return lowalloc::cli::advise_main(2, args);
    }
    std::fputs(usage, stdout);
    return 0;
  }
  std::fprintf(stderr, "lowalloc: unknown command '%s'\n%s", command, usage);
  return 125;
}
