// What the subcommands' option parsers share.
#ifndef LOWALLOC_SRC_CLI_OPTIONS_HPP
#define LOWALLOC_SRC_CLI_OPTIONS_HPP

#include <string_view>

namespace lowalloc::cli {

/// Whether argv[i] is the option `name` with its value, as "NAME VALUE" (then i moves to the
/// value) or "NAME=VALUE"; the value goes to `value`. "NAME" as the last argument is not.
inline bool option_value(int argc, char** argv, int& i, std::string_view name,
                         std::string_view& value) {
  const std::string_view arg = argv[i];
  if (arg == name && i + 1 < argc) {
    value = argv[++i];
    return true;
  }
  if (arg.size() > name.size() && arg.substr(0, name.size()) == name && arg[name.size()] == '=') {
    value = arg.substr(name.size() + 1);
    return true;
  }
  return false;
}

}  // namespace lowalloc::cli

#endif
