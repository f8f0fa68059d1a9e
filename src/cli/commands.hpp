// The subcommands of the `lowalloc` command.
#ifndef LOWALLOC_SRC_CLI_COMMANDS_HPP
#define LOWALLOC_SRC_CLI_COMMANDS_HPP

namespace lowalloc::cli {

/// `lowalloc run [-o FILE] [options] -- PROGRAM [ARGS...]`; returns PROGRAM's exit status.
int run_main(int argc, char** argv);

/// `lowalloc report FILE [--format NAME] [--top N] [--sort KEY]`; 0, 1 usage, 2 bad file.
int report_main(int argc, char** argv);

/// `lowalloc advise FILE [--format text|json] [--top N]`; 0, 1 usage, 2 bad file.
int advise_main(int argc, char** argv);

/// `lowalloc diff BEFORE AFTER [--format text|json] [--top N]`; 0, 1 usage, 2 bad file.
int diff_main(int argc, char** argv);

/// `lowalloc check TRACE [limits...]`; 0 every limit holds, 1 one is exceeded, 2 the check
/// cannot be made (usage, a trace that cannot be read).
int check_main(int argc, char** argv);

}  // namespace lowalloc::cli

#endif
