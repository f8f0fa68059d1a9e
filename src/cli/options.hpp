// What the subcommands' option parsers share.
#ifndef LOWALLOC_SRC_CLI_OPTIONS_HPP
#define LOWALLOC_SRC_CLI_OPTIONS_HPP

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace lowalloc::cli {

/// Whether `arg` is an option (known or not) rather than an operand: it starts with '-' and is
/// not "-" alone. After "--" nothing is an option, whatever it looks like (argument_kinds).
inline bool looks_like_option(std::string_view arg) { return arg.size() > 1 && arg[0] == '-'; }

/// The arguments of a command line told apart, in their order: the first "--" ends the options
/// and is neither; every argument after it is an operand (a trace file), whatever it looks like;
/// before it, one that looks_like_option() is an option.
class argument_kinds {
 public:
  enum kind { end_of_options, operand, option };
  kind of(std::string_view arg) {
    if (!ended_ && arg == "--") {
      ended_ = true;
      return end_of_options;
    }
    return ended_ || !looks_like_option(arg) ? operand : option;
  }

 private:
  bool ended_ = false;
};

/// What parse_count() made of a text.
enum class count_status { ok, not_a_count, too_large };

/// `text` as a count: one or more ASCII decimal digits and nothing else (no sign, no space, no
/// "0x"), at most 2^64 - 1. Every number of the commands' command lines goes through here, so
/// that " 5", "+5" and "5x" are refused alike, and so is a count too large to hold, instead of
/// being wrapped around or cut down to another one.
inline count_status parse_count(std::string_view text, std::uint64_t& out) {
  if (text.empty()) return count_status::not_a_count;
  std::uint64_t n = 0;
  bool too_large = false;
  for (const char c : text) {
    if (c < '0' || c > '9') return count_status::not_a_count;
    const auto digit = static_cast<std::uint64_t>(c - '0');
    too_large = too_large || n > (std::numeric_limits<std::uint64_t>::max() - digit) / 10;
    n = n * 10 + digit;
  }
  if (too_large) return count_status::too_large;
  out = n;
  return count_status::ok;
}

/// `value`, given to `option`, as a count from 0 to `most` (parse_count); empty if it is one
/// (then in `out`), else the usage error, which names the option and the value.
inline std::string read_count(std::string_view option, std::string_view value, std::uint64_t most,
                              std::uint64_t& out) {
  std::uint64_t n = 0;
  const count_status status = parse_count(value, n);
  if (status == count_status::not_a_count)
    return std::string(option) + " needs a number (decimal digits only), not '" +
           std::string(value) + "'";
  if (status == count_status::too_large || n > most)
    return std::string(option) + " needs a number from 0 to " + std::to_string(most) + ", not '" +
           std::string(value) + "'";
  out = n;
  return {};
}

/// The scale of a count's suffix: none 1, k (or K), M, G powers of 1000, KiB, MiB, GiB powers of
/// 1024; 0 for any other text.
inline std::uint64_t count_suffix_scale(std::string_view suffix) {
  if (suffix.empty()) return 1;
  if (suffix == "k" || suffix == "K") return 1000;
  if (suffix == "M") return 1000 * 1000;
  if (suffix == "G") return 1000 * 1000 * 1000;
  if (suffix == "KiB") return 1024;
  if (suffix == "MiB") return 1024 * 1024;
  if (suffix == "GiB") return 1024 * 1024 * 1024;
  return 0;
}

/// `value`, given to `option`, as a count with an optional suffix after its digits (`lowalloc
/// check`'s limits: 300k, 64MiB): the digits as parse_count() takes them, times the suffix's
/// scale, at most 2^64 - 1. Empty if it is one (then in `out`), else the usage error.
inline std::string read_count_with_suffix(std::string_view option, std::string_view value,
                                          std::uint64_t& out) {
  const std::size_t digits = std::min(value.find_first_not_of("0123456789"), value.size());
  const std::uint64_t scale = count_suffix_scale(value.substr(digits));
  std::uint64_t n = 0;
  const count_status status = parse_count(value.substr(0, digits), n);
  if (status == count_status::not_a_count || scale == 0)
    return std::string(option) +
           " needs a count (decimal digits, then k, M, G, KiB, MiB or GiB if any), not '" +
           std::string(value) + "'";
  constexpr std::uint64_t most = std::numeric_limits<std::uint64_t>::max();
  if (status == count_status::too_large || n > most / scale)
    return std::string(option) + " needs a count of at most " + std::to_string(most) + ", not '" +
           std::string(value) + "'";
  out = n * scale;
  return {};
}

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
/// An empty DIR sets `error` instead: it names no directory.
inline bool debug_path_option(int argc, char** argv, int& i, std::vector<std::string>& dirs,
                              std::string& error) {
  std::string_view value;
  if (!option_value(argc, argv, i, "--debug-path", value)) return false;
  if (value.empty()) {
    error = "--debug-path needs a directory";
    return true;
  }
  std::error_code ec;
  std::filesystem::path dir = std::filesystem::absolute(std::filesystem::path(value), ec);
  dirs.push_back(ec ? std::string(value) : dir.lexically_normal().string());
  while (dirs.back().size() > 1 && dirs.back().back() == '/') dirs.back().pop_back();
  return true;
}

}  // namespace lowalloc::cli

#endif
