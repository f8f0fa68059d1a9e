// The `lowalloc` command: `lowalloc run` records a program's allocations, `lowalloc report`
// prints what a trace holds, `lowalloc advise` what to change, `lowalloc diff` what changed and
// `lowalloc check` whether limits hold. docs/tracer.md is the manual, docs/lowalloc.1 the man
// page.
//
// Exit status of every command but `run`: 0 success, 1 only for `check` when a limit is
// exceeded, 2 a usage error (bad option, missing argument, unknown command), an input that
// cannot be read or an output that cannot be written. `run` passes PROGRAM's status through and
// keeps env(1)'s scheme for its own failures (125, 126, 127).
#include "cli/commands.hpp"
#include "cli/output_file.hpp"

#include <cstdio>
#include <cstring>
#include <utility>

#ifndef LOWALLOC_VERSION
#error "LOWALLOC_VERSION is defined by src/cli/CMakeLists.txt (the project's version)"
#endif

namespace {

constexpr int exit_usage = 2;

constexpr const char* usage =
    "usage: lowalloc run [-o FILE] [options] -- PROGRAM [ARGS...]\n"
    "       lowalloc report FILE [--format NAME] [--top N] [--sort KEY]\n"
    "       lowalloc advise FILE [--format text|json] [--top N]\n"
    "       lowalloc diff BEFORE AFTER [--format text|json] [--top N]\n"
    "       lowalloc check TRACE [--max-allocations N] [--baseline OLD --max-increase P%] ...\n"
    "       lowalloc help [COMMAND]\n"
    "       lowalloc --version\n"
    "\n"
    "run     records every heap allocation of PROGRAM with its call stack\n"
    "report  prints the summary, the hot call sites and their sizes from a trace\n"
    "advise  says per hot call site which change removes how many allocations\n"
    "diff    compares two traces: the totals and each site's change\n"
    "check   fails (exit 1) when a trace exceeds limits: a gate for CI\n"
    "help    prints this text, or a command's options (lowalloc help run)\n"
    "\n"
    "Exit status: 0 success, 1 a limit of `check` exceeded, 2 a usage error or a file that\n"
    "cannot be read or written; `run` exits with PROGRAM's status (125, 126, 127 for its own\n"
    "failures). `man lowalloc` has the details.\n";

using command_function = int (*)(int, char**);
constexpr std::pair<const char*, command_function> commands[] = {
    {"run", lowalloc::cli::run_main},
    {"report", lowalloc::cli::report_main},
    {"advise", lowalloc::cli::advise_main},
    {"diff", lowalloc::cli::diff_main},
    {"check", lowalloc::cli::check_main}};

bool is_help(const char* arg) {
  return std::strcmp(arg, "help") == 0 || std::strcmp(arg, "--help") == 0 ||
         std::strcmp(arg, "-h") == 0;
}

// `lowalloc help [COMMAND]`: the general usage, or COMMAND's own help.
int help_main(int argc, char** argv) {
  if (argc > 3) {
    std::fprintf(stderr, "lowalloc help: one command only\n\n%s", usage);
    return exit_usage;
  }
  if (argc < 3 || is_help(argv[2])) {
    std::fputs(usage, stdout);
    return lowalloc::cli::flush_stdout("help", "the help") ? 0 : exit_usage;
  }
  for (const auto& [name, command_main] : commands) {
    if (std::strcmp(argv[2], name) == 0) {
      char* args[] = {argv[2], const_cast<char*>("--help"), nullptr};
      const int status = command_main(2, args);
      if (status != 0) return status;
      return lowalloc::cli::flush_stdout("help", "the help") ? 0 : exit_usage;
    }
  }
  std::fprintf(stderr, "lowalloc help: unknown command '%s' (run, report, advise, diff, check)\n",
               argv[2]);
  return exit_usage;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fputs(usage, stderr);
    return exit_usage;
  }
  const char* command = argv[1];
  for (const auto& [name, command_main] : commands) {
    if (std::strcmp(command, name) == 0) {
      lowalloc::cli::process_ends_after_command = true;
      const int status = command_main(argc - 1, argv + 1);
      // What a command printed and left to the exit to write (its --help): a failure there would
      // not change the exit status. `run`'s status is PROGRAM's, which wrote its own output.
      if (status != 0 || std::strcmp(name, "run") == 0) return status;
      return lowalloc::cli::flush_stdout(name, "the output") ? 0 : exit_usage;
    }
  }
  if (is_help(command)) return help_main(argc, argv);
  if (std::strcmp(command, "--version") == 0) {
    std::puts("lowalloc " LOWALLOC_VERSION);
    return lowalloc::cli::flush_stdout("", "the version") ? 0 : exit_usage;
  }
  std::fprintf(stderr, "lowalloc: unknown command '%s'\n\n%s", command, usage);
  return exit_usage;
}
