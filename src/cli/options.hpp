// What the subcommands' option parsers share.
#ifndef LOWALLOC_SRC_CLI_OPTIONS_HPP
#define LOWALLOC_SRC_CLI_OPTIONS_HPP

#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

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

/// Whether argv[i] is `--debug-path DIR` (or `--debug-path=DIR`); DIR, made absolute, is added
/// to `dirs` (report, advise, diff and check take it, repeatable: analyze::options::debug_paths).
inline bool debug_path_option(int argc, char** argv, int& i, std::vector<std::string>& dirs) {
  std::string_view value;
  if (!option_value(argc, argv, i, "--debug-path", value)) return false;
  std::error_code ec;
  std::filesystem::path dir = std::filesystem::absolute(std::filesystem::path(value), ec);
  dirs.push_back(ec ? std::string(value) : dir.lexically_normal().string());
  while (dirs.back().size() > 1 && dirs.back().back() == '/') dirs.back().pop_back();
  return true;
}

}  // namespace lowalloc::cli

#endif
