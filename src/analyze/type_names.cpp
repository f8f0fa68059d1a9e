// lowalloc's types as the user writes them. Each `lowalloc::NAME<...>` of a known template is
// parsed into its arguments (themselves abbreviated first), and written again without the
// arguments its declaration defaults (include/lowalloc/string.hpp, string_storage.hpp,
// small_vector.hpp, inplace_vector.hpp).
#include "analyze/type_names.hpp"

#include <algorithm>
#include <cstddef>
#include <iterator>
#include <vector>

namespace lowalloc::analyze {

namespace {

bool ident_char(char c) noexcept {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

bool starts_with(std::string_view s, std::string_view prefix) noexcept {
  return s.substr(0, prefix.size()) == prefix;
}

// The '>' that closes the '<' at `open`, or npos.
std::size_t closing(std::string_view s, std::size_t open) noexcept {
  int depth = 0;
  for (std::size_t i = open; i < s.size(); ++i) {
    if (s[i] == '<' || s[i] == '(') {
      ++depth;
    } else if (s[i] == '>' || s[i] == ')') {
      if (--depth == 0) return s[i] == '>' ? i : std::string_view::npos;
    }
  }
  return std::string_view::npos;
}

// Without spaces: "std::allocator<std::string >" and "std::allocator<std::string>" compare equal.
std::string squeezed(std::string_view s) {
  std::string out;
  std::copy_if(s.begin(), s.end(), std::back_inserter(out), [](char c) { return c != ' '; });
  return out;
}

// A size as the user writes it: "32ul", "32u", "(unsigned long)32" as "32".
std::string size_value(std::string a) {
  if (starts_with(a, "(unsigned long)") || starts_with(a, "(unsigned int)"))
    a.erase(0, a.find(')') + 1);
  std::size_t digits = 0;
  while (digits < a.size() && a[digits] >= '0' && a[digits] <= '9') ++digits;
  if (digits == 0) return a;
  for (std::size_t i = digits; i < a.size(); ++i)
    if (a[i] != 'u' && a[i] != 'U' && a[i] != 'l' && a[i] != 'L') return a;
  a.resize(digits);
  return a;
}

// `arg` is std::TEMPLATE<element> of libstdc++ or libc++ (std::__1::).
bool is_std(const std::string& arg, std::string_view templ, const std::string& element) {
  const std::string a = squeezed(arg);
  const std::string e = squeezed(element);
  for (std::string_view ns : {"std::", "std::__1::"}) {
    std::string expected(ns);
    expected += templ;
    expected += '<';
    expected += e;
    expected += '>';
    if (a == expected) return true;
  }
  return false;
}

// The alias prefix of a character type: "" for char (small_string), "w" for wchar_t
// (small_wstring), "u8", "u16", "u32"; false for any other.
bool char_prefix(const std::string& c, std::string& prefix) {
  static constexpr std::pair<std::string_view, std::string_view> chars[] = {
      {"char", ""}, {"wchar_t", "w"}, {"char8_t", "u8"}, {"char16_t", "u16"}, {"char32_t", "u32"}};
  for (const auto& [name, p] : chars) {
    if (c == name) {
      prefix = std::string(p);
      return true;
    }
  }
  return false;
}

std::string written(std::string_view name, const std::vector<std::string>& args) {
  std::string out = "lowalloc::";
  out += name;
  out += '<';
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (i != 0) out += ", ";
    out += args[i];
  }
  out += '>';
  return out;
}

// The arguments of "lowalloc::NAME<...>" in `s`, if it is that (as rewritten already).
bool arguments_of(const std::string& s, std::string_view name, std::vector<std::string>& args) {
  std::string head = "lowalloc::";
  head += name;
  head += '<';
  if (!starts_with(s, head) || s.back() != '>') return false;
  args =
      split_template_arguments(std::string_view(s).substr(head.size(), s.size() - head.size() - 1));
  return true;
}

// A basic_string of lowalloc's storages as its alias; empty if it is none of them.
std::string string_alias(const std::vector<std::string>& args) {
  std::string prefix;
  if (args.size() < 2 || args.size() > 3 || !char_prefix(args[0], prefix)) return {};
  if (args.size() == 3 && !is_std(args[2], "char_traits", args[0])) return {};
  std::vector<std::string> storage;
  if (arguments_of(args[1], "small_storage", storage) &&
      (storage.size() == 2 || storage.size() == 3) && storage[0] == args[0]) {
    std::string out = "lowalloc::";
    // lowalloc::pmr::small_string and small_wstring: the polymorphic allocator's aliases.
    const bool pmr = storage.size() == 3 && (prefix.empty() || prefix == "w") &&
                     (is_std(storage[2], "pmr::polymorphic_allocator", args[0]));
    if (pmr) out += "pmr::";
    out += "small_" + prefix + "string<" + storage[1];
    if (storage.size() == 3 && !pmr) out += ", " + storage[2];
    return out + ">";
  }
  if (arguments_of(args[1], "fixed_storage", storage) && storage.size() == 2 &&
      storage[0] == args[0])
    return "lowalloc::fixed_" + prefix + "string<" + storage[1] + ">";
  return {};
}

// lowalloc::NAME<args> as the user writes it (args abbreviated already).
std::string rewrite(std::string_view name, std::vector<std::string> args) {
  if (name == "basic_string") {
    std::string alias = string_alias(args);
    if (!alias.empty()) return alias;
    if (args.size() == 3 && is_std(args[2], "char_traits", args[0])) args.pop_back();
  } else if (name == "small_vector" || name == "small_storage") {  // <T, N, Allocator>
    if (args.size() == 3 && is_std(args[2], "allocator", args[0])) args.pop_back();
    if (args.size() >= 2) args[1] = size_value(args[1]);
  } else if (name == "small_vector_base") {  // <T, Allocator>
    if (args.size() == 2 && is_std(args[1], "allocator", args[0])) args.pop_back();
  } else if (name == "inplace_vector" || name == "fixed_storage") {  // <T, N>
    if (args.size() == 2) args[1] = size_value(args[1]);
  }
  return written(name, args);
}

}  // namespace

std::vector<std::string> split_template_arguments(std::string_view s) {
  std::vector<std::string> out;
  int depth = 0;
  std::size_t from = 0;
  for (std::size_t i = 0; i <= s.size(); ++i) {
    if (i == s.size() || (s[i] == ',' && depth == 0)) {
      std::string_view a = s.substr(from, i - from);
      while (!a.empty() && a.front() == ' ') a.remove_prefix(1);
      while (!a.empty() && a.back() == ' ') a.remove_suffix(1);
      out.emplace_back(a);
      from = i + 1;
    } else if (s[i] == '<' || s[i] == '(') {
      ++depth;
    } else if (s[i] == '>' || s[i] == ')') {
      --depth;
    }
  }
  return out;
}

std::string abbreviate_lowalloc_types(std::string_view s) {
  static constexpr std::string_view ns = "lowalloc::";
  static constexpr std::string_view templates[] = {"basic_string",      "small_vector",
                                                   "small_vector_base", "inplace_vector",
                                                   "small_storage",     "fixed_storage"};
  std::string out;
  out.reserve(s.size());
  std::size_t i = 0;
  while (i < s.size()) {
    const std::size_t at = s.find(ns, i);
    if (at == std::string_view::npos) {
      out.append(s.substr(i));
      break;
    }
    out.append(s.substr(i, at - i));
    std::size_t end = at + ns.size();
    while (end < s.size() && ident_char(s[end])) ++end;
    const std::string_view name = s.substr(at + ns.size(), end - at - ns.size());
    const bool whole = at == 0 || !(ident_char(s[at - 1]) || s[at - 1] == ':');
    const bool known =
        std::find(std::begin(templates), std::end(templates), name) != std::end(templates);
    const std::size_t close = whole && known && end < s.size() && s[end] == '<'
                                  ? closing(s, end)
                                  : std::string_view::npos;
    if (close == std::string_view::npos) {
      out.append(s.substr(at, end - at));
      i = end;
      continue;
    }
    std::vector<std::string> args = split_template_arguments(s.substr(end + 1, close - end - 1));
    for (std::string& a : args) a = abbreviate_lowalloc_types(a);
    out += rewrite(name, std::move(args));
    i = close + 1;
    // "small_string<32> >" as "small_string<32>>", as std::string's shortening does.
    if (s.compare(i, 2, " >") == 0) ++i;
  }
  return out;
}

}  // namespace lowalloc::analyze
