// Which frames are allocator plumbing: the C and C++ allocation functions by name (base_name,
// so every overload and instantiation), and everything of the standard library, of lowalloc and
// of the C and C++ runtimes by namespace, header or shared object. A list of containers' growth
// members would add nothing: every one of them is in namespace std.
#include "analyze/fold.hpp"

#include <algorithm>
#include <cstring>
#include <iterator>

namespace lowalloc::analyze::detail {

namespace {

bool ident_char(char c) noexcept {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '$';
}

bool ends_with(std::string_view s, std::string_view suffix) noexcept {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

bool starts_with(std::string_view s, std::string_view prefix) noexcept {
  return s.substr(0, prefix.size()) == prefix;
}

template <std::size_t N>
bool one_of(std::string_view s, const std::string_view (&list)[N]) noexcept {
  return std::find(std::begin(list), std::end(list), s) != std::end(list);
}

// C allocation functions, their glibc-internal names, and the C++ allocation functions.
constexpr std::string_view c_allocators[] = {
    "malloc",
    "calloc",
    "realloc",
    "free",
    "reallocarray",
    "posix_memalign",
    "aligned_alloc",
    "memalign",
    "valloc",
    "pvalloc",
    "__libc_malloc",
    "__libc_calloc",
    "__libc_realloc",
    "__libc_free",
    "__libc_memalign",
    "__libc_valloc",
    "__libc_pvalloc",
    "__posix_memalign",
    "__libc_reallocarray",
    "strdup",
    "strndup",
    "__strdup",
    "__strndup",
    "operator new",
    "operator new[]",
    "operator delete",
    "operator delete[]",
    "__GI___libc_malloc",
    "__GI___libc_free",
    "__GI___libc_realloc",
    "_dl_early_allocate",
};

std::string_view module_base(std::string_view path) noexcept {
  const std::size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

// A header of lowalloc's, wherever it is installed: ".../lowalloc/NAME.hpp" or
// ".../lowalloc/detail/NAME.hpp".
bool in_lowalloc_header(std::string_view file) noexcept {
  if (!ends_with(file, ".hpp")) return false;
  const std::size_t slash = file.rfind('/');
  if (slash == std::string_view::npos) return false;
  std::string_view dir = file.substr(0, slash);
  if (ends_with(dir, "/detail")) dir.remove_suffix(7);
  return ends_with(dir, "/lowalloc") || dir == "lowalloc";
}

// What lowalloc's headers define in namespace lowalloc, the first name after "lowalloc::":
// without line information, a frame is lowalloc's own only under one of these names.
constexpr std::string_view lowalloc_names[] = {
    "detail",          "pmr",
    "small_vector",    "small_vector_base",
    "inplace_vector",  "basic_string",
    "small_storage",   "fixed_storage",
    "arena",           "arena_base",
    "arena_allocator", "pool",
    "pool_allocator",  "synchronized_pool",
    "operator+",       "getline",
    "operator>>",      "swap",
    "erase",           "erase_if",
};

bool lowalloc_name(std::string_view name) noexcept {
  constexpr std::string_view ns = "lowalloc::";
  if (!starts_with(name, ns)) return false;
  name.remove_prefix(ns.size());
  std::size_t end = 0;
  while (end < name.size() && name.compare(end, 2, "::") != 0) ++end;
  return one_of(name.substr(0, end), lowalloc_names);
}

}  // namespace

bool is_allocation_function(std::string_view base_name) noexcept {
  return one_of(base_name, c_allocators);
}

std::string base_name(std::string_view s) {
  if (const std::size_t p = s.find(" [clone"); p != std::string_view::npos) s = s.substr(0, p);
  if (const std::size_t p = s.find('@'); p != std::string_view::npos) s = s.substr(0, p);
  std::string out;
  out.reserve(s.size());
  int angle = 0;
  int paren = 0;
  std::size_t i = 0;
  constexpr std::string_view anon = "(anonymous namespace)";
  while (i < s.size()) {
    const bool top = angle == 0 && paren == 0;
    if (top && s.compare(i, 8, "operator") == 0 && (i == 0 || !ident_char(s[i - 1])) &&
        (i + 8 >= s.size() || !ident_char(s[i + 8]))) {
      out += "operator";
      i += 8;
      if (i < s.size() && s[i] == ' ') {
        std::size_t j = i + 1;
        while (j < s.size() && ident_char(s[j])) ++j;
        const std::string_view word = s.substr(i + 1, j - i - 1);
        if (word == "new" || word == "delete") {
          out += ' ';
          out += word;
          i = j;
          if (s.compare(i, 2, "[]") == 0) {
            out += "[]";
            i += 2;
          }
        }
        continue;  // otherwise a conversion operator: its type follows as ordinary text
      }
      if (s.compare(i, 2, "()") == 0) {
        out += "()";
        i += 2;
        continue;
      }
      // The longest operator token: "operator+<char, ...>" is operator+ with template
      // arguments, "operator<< <char>" is operator<<.
      static constexpr std::string_view tokens[] = {
          "<<=", ">>=", "<=>", "->*", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "++",
          "--",  "+=",  "-=",  "*=",  "/=", "%=", "^=", "&=", "|=", "->", "[]", "+",  "-",
          "*",   "/",   "%",   "^",   "&",  "|",  "~",  "!",  "=",  "<",  ">",  ","};
      for (std::string_view t : tokens) {
        if (s.compare(i, t.size(), t) == 0) {
          out += t;
          i += t.size();
          break;
        }
      }
      continue;
    }
    if (top && s.compare(i, anon.size(), anon) == 0) {
      out += "(anonymous\x01namespace)";  // no space: the return type ends at a space
      i += anon.size();
      continue;
    }
    const char c = s[i++];
    if (c == '<') {
      ++angle;
    } else if (c == '>') {
      if (angle > 0) --angle;
    } else if (c == '(') {
      ++paren;
    } else if (c == ')') {
      if (paren > 0) --paren;
    } else if (top) {
      out += c;
    }
  }
  // Trailing qualifiers of member functions.
  for (bool again = true; again;) {
    again = false;
    while (!out.empty() && out.back() == ' ') out.pop_back();
    for (std::string_view q : {" const", " volatile", " &&", " &", " noexcept"}) {
      if (ends_with(out, q)) {
        out.resize(out.size() - q.size());
        again = true;
      }
    }
  }
  // A return type (printed for function templates) ends at the last space before the name.
  std::size_t name_start = 0;
  const std::size_t op = out.rfind("operator");
  const std::size_t space = op == std::string::npos
                                ? out.rfind(' ')
                                : (op == 0 ? std::string::npos : out.rfind(' ', op - 1));
  if (space != std::string::npos) name_start = space + 1;
  std::string name = out.substr(name_start);
  for (char& c : name)
    if (c == '\x01') c = ' ';
  return name;
}

bool is_allocator_frame(const frame& f) {
  if (f.function.empty()) return false;
  const std::string name = base_name(f.function);
  if (is_allocation_function(name)) return true;
  // The standard library around the allocation (push_back, a copy constructor, construct, an
  // inlined std::string append): the user's own line is the first frame outside it, in the
  // names, the headers or the shared objects of the C and C++ runtimes.
  if (starts_with(name, "std::") || starts_with(name, "__gnu_cxx::") ||
      starts_with(name, "__cxxabiv1::"))
    return true;
  // lowalloc's containers, by where they are defined: a user's own code in a namespace of that
  // name, in a file of theirs, stays. Without line information, the names lowalloc's headers
  // define decide (lowalloc's own tool, built without -g, keeps its lowalloc::analyze frames).
  if (starts_with(name, "lowalloc::") &&
      (f.file.empty() ? lowalloc_name(name) : in_lowalloc_header(f.file)))
    return true;
  if (starts_with(f.file, "/usr/include/c++/") ||
      f.file.find("/include/c++/v1/") != std::string::npos)
    return true;
  const std::string_view mod = module_base(f.module);
  if (starts_with(mod, "libstdc++.so") || starts_with(mod, "libc++.so") ||
      starts_with(mod, "libc++abi.so") || starts_with(mod, "libc.so"))
    return true;
  return false;
}

bool is_start_frame(const frame& f) {
  static constexpr std::string_view start_functions[] = {
      "__libc_start_call_main",
      "__libc_start_main_impl",
      "__libc_start_main",
      "__libc_start_main_alias_1",
      "__libc_start_main_alias_2",
      "libc_start_main_stage2",  // musl
      "start_thread",
      "clone",
      "clone3",
      "__clone",
      "__clone3",
      "__clone_internal",
      "_dl_start_user",
      "_dl_init",
      "call_init",
      "__libc_csu_init",
  };
  if (!f.function.empty()) return one_of(base_name(f.function), start_functions);
  const std::string_view mod = module_base(f.module);
  return starts_with(mod, "libc.so") || starts_with(mod, "ld-linux") ||
         starts_with(mod, "ld-musl") || starts_with(mod, "libc.musl");
}

std::size_t start_fold_count(const std::vector<frame>& stack) {
  return start_fold_count(
      stack.size(), 0, [&](std::size_t i) -> const frame& { return stack[i]; },
      [&](std::size_t i) { return is_start_frame(stack[i]); });
}

std::size_t fold_count(const std::vector<frame>& stack) {
  std::size_t n = 0;
  while (n + 1 < stack.size() && is_allocator_frame(stack[n])) ++n;
  return n;
}

}  // namespace lowalloc::analyze::detail
