// The subcommands of the `lowalloc` command. Their exit statuses follow one scheme (main.cpp,
// docs/lowalloc.1): 2 for a usage error, an unreadable input or an unwritable output.
#ifndef LOWALLOC_SRC_CLI_COMMANDS_HPP
#define LOWALLOC_SRC_CLI_COMMANDS_HPP

namespace lowalloc::cli {

/// Set by the `lowalloc` command before it runs one (main.cpp): the process ends as the command
/// returns, so a command may leave what it read to the exit instead of freeing it piece by
/// piece. False where commands run one after another in one process (the tests).
extern bool process_ends_after_command;

/// `lowalloc run [-o FILE] [options] -- PROGRAM [ARGS...]`: PROGRAM's exit status (128+N for
/// signal N); 125 run's own failure, 126 PROGRAM cannot be executed, 127 it is not found.
int run_main(int argc, char** argv);

/// `lowalloc report FILE [--format NAME] [--top N] [--sort KEY]`; 0, or 2 (usage, bad file).
int report_main(int argc, char** argv);

/// `lowalloc advise FILE [--format text|json] [--top N]`; 0, or 2 (usage, bad file).
int advise_main(int argc, char** argv);

/// `lowalloc diff BEFORE AFTER [--format text|json] [--top N]`; 0, or 2 (usage, bad file).
int diff_main(int argc, char** argv);

/// `lowalloc check TRACE [limits...]`; 0 every limit holds, 1 one is exceeded, 2 the check
/// cannot be made (usage, a trace that cannot be read).
int check_main(int argc, char** argv);

}  // namespace lowalloc::cli

#endif
