// The `lowalloc` command: `lowalloc run` records a program's allocations, `lowalloc report`
// prints what a trace holds, `lowalloc advise` what to change, `lowalloc diff` what changed and
// `lowalloc check` whether limits hold. docs/tracer.md is the manual.
#include "cli/commands.hpp"

#include <cstdio>
#include <cstring>
#include <utility>

namespace {

constexpr const char* usage =
    "usage: lowalloc run [-o FILE] [options] -- PROGRAM [ARGS...]\n"
    "       lowalloc report FILE [--format NAME] [--top N] [--sort KEY]\n"
    "       lowalloc advise FILE [--format text|json] [--top N]\n"
    "       lowalloc diff BEFORE AFTER [--format text|json] [--top N]\n"
    "       lowalloc check TRACE [--max-allocations N] [--baseline OLD --max-increase P%] ...\n"
    "       lowalloc help [run|report|advise|diff|check]\n"
    "\n"
    "run     records every heap allocation of PROGRAM with its call stack\n"
    "report  prints the summary, the hot call sites and their sizes from a trace\n"
    "advise  says per hot call site which change removes how many allocations\n"
    "diff    compares two traces: the totals and each site's change\n"
    "check   fails (exit 1) when a trace exceeds limits: a gate for CI\n";

using command_main = int (*)(int, char**);
constexpr std::pair<const char*, command_main> commands[] = {{"run", lowalloc::cli::run_main},
                                                             {"report", lowalloc::cli::report_main},
                                                             {"advise", lowalloc::cli::advise_main},
                                                             {"diff", lowalloc::cli::diff_main},
                                                             {"check", lowalloc::cli::check_main}};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fputs(usage, stderr);
    return 125;
  }
  const char* command = argv[1];
  for (const auto& [name, command_main] : commands)
    if (std::strcmp(command, name) == 0) return command_main(argc - 1, argv + 1);
  if (std::strcmp(command, "help") == 0 || std::strcmp(command, "--help") == 0 ||
      std::strcmp(command, "-h") == 0) {
    for (const auto& [name, command_main] : commands) {
      if (argc > 2 && std::strcmp(argv[2], name) == 0) {
        char* args[] = {argv[2], const_cast<char*>("--help"), nullptr};
        return command_main(2, args);
      }
    }
    std::fputs(usage, stdout);
    return 0;
  }
  std::fprintf(stderr, "lowalloc: unknown command '%s'\n%s", command, usage);
  return 125;
}
