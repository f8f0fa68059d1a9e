// Classifying an allocation by the standard-library operation that made it (operation.hpp).
//
// The frames between the allocation function and the user's code name the operation in both
// standard libraries: libstdc++'s growth members (_M_realloc_insert, _M_mutate, _M_get_node...)
// as exported symbols of libstdc++.so or as DWARF inline frames of its headers, libc++'s
// (__push_back_slow_path, __grow_by, __construct_node...) in namespace std::__1. The outermost
// frame of a standard container is the member the user called; the frames inside it say what
// that call did (grew the buffer, made a node, rehashed).
#include "analyze/operation.hpp"

#include "analyze/type_names.hpp"

#include "analyze/fold.hpp"

#include <algorithm>
#include <array>

namespace lowalloc::analyze {

namespace {

bool starts_with(std::string_view s, std::string_view prefix) noexcept {
  return s.substr(0, prefix.size()) == prefix;
}

bool ends_with(std::string_view s, std::string_view suffix) noexcept {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// Removes the inline namespaces of both libraries: "std::__cxx11::basic_string" and
// "std::__1::basic_string" are "std::basic_string".
std::string without_inline_namespaces(std::string s) {
  for (std::string_view ns : {"__cxx11::", "__1::"}) {
    for (std::size_t at = s.find(ns); at != std::string::npos; at = s.find(ns, at))
      s.erase(at, ns.size());
  }
  return s;
}

// One frame, as the classification reads it.
struct frame_name {
  std::string cls;        // "std::vector", "std::_Rb_tree", "" for a free function
  std::string member;     // "push_back", "_M_realloc_insert", "make_shared"
  std::string qualified;  // cls::member (or member)
  const frame* f = nullptr;
};

frame_name name_of(const frame& f) {
  frame_name n;
  n.f = &f;
  n.qualified = without_inline_namespaces(detail::base_name(f.function));
  const std::size_t sep = n.qualified.rfind("::");
  if (sep == std::string::npos) {
    n.member = n.qualified;
  } else {
    n.cls = n.qualified.substr(0, sep);
    n.member = n.qualified.substr(sep + 2);
  }
  return n;
}

// The containers and functions a user calls, by the class (or free function) name.
enum class family {
  none,
  vector,
  string,
  tree,
  hash,
  list,
  forward_list,
  deque,
  stringstream,
  function,
  shared_ptr,
  make_shared,
  make_unique,
  concatenation,
  to_string,
};

family family_of(const frame_name& n) {
  static constexpr std::pair<std::string_view, family> classes[] = {
      {"std::vector", family::vector},
      {"std::basic_string", family::string},
      {"std::map", family::tree},
      {"std::multimap", family::tree},
      {"std::set", family::tree},
      {"std::multiset", family::tree},
      {"std::unordered_map", family::hash},
      {"std::unordered_multimap", family::hash},
      {"std::unordered_set", family::hash},
      {"std::unordered_multiset", family::hash},
      {"std::list", family::list},
      {"std::forward_list", family::forward_list},
      {"std::deque", family::deque},
      {"std::basic_ostringstream", family::stringstream},
      {"std::basic_stringstream", family::stringstream},
      {"std::basic_stringbuf", family::stringstream},
      {"std::function", family::function},
      {"std::shared_ptr", family::shared_ptr},
  };
  for (const auto& [cls, fam] : classes)
    if (n.cls == cls) return fam;
  static constexpr std::pair<std::string_view, family> functions[] = {
      {"std::make_shared", family::make_shared}, {"std::allocate_shared", family::make_shared},
      {"std::make_unique", family::make_unique}, {"std::operator+", family::concatenation},
      {"std::to_string", family::to_string},
  };
  for (const auto& [fn, fam] : functions)
    if (n.qualified == fn) return fam;
  return family::none;
}

bool any_member(const std::vector<frame_name>& names, std::size_t end,
                std::initializer_list<std::string_view> members) {
  for (std::size_t i = 0; i < end; ++i)
    if (std::find(members.begin(), members.end(), names[i].member) != members.end()) return true;
  return false;
}

bool any_class(const std::vector<frame_name>& names, std::size_t end,
               std::initializer_list<std::string_view> classes) {
  for (std::size_t i = 0; i < end; ++i)
    if (std::find(classes.begin(), classes.end(), names[i].cls) != classes.end()) return true;
  return false;
}

// Whether the function's only parameter is a const reference to its own class: a copy
// constructor or copy assignment ("vector(std::vector<int, std::allocator<int> > const&)").
bool takes_own_type(const frame& f, std::string_view cls_text) {
  const std::string params = without_inline_namespaces(f.function);
  const std::size_t open = params.rfind('(');
  if (open == std::string::npos) return false;
  std::string_view p = std::string_view(params).substr(open + 1);
  const std::size_t close = p.find(')');
  if (close == std::string_view::npos) return false;
  p = p.substr(0, close);
  return ends_with(p, " const&") && starts_with(p, cls_text) &&
         p.size() == cls_text.size() + 7;  // exactly "CLASS const&"
}

// The class text (with template arguments) of a member function's name, inline namespaces
// removed: what takes_own_type compares its parameter with.
std::string class_text(const frame& f) {
  const std::string s = without_inline_namespaces(f.function);
  // The qualifier ends at the last "::" at template depth 0 before the parameters.
  int angle = 0;
  int paren = 0;
  std::size_t last = std::string::npos;
  std::size_t start = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '<') {
      ++angle;
    } else if (c == '>') {
      if (angle > 0) --angle;
    } else if (c == '(') {
      if (angle == 0 && paren == 0) break;
      ++paren;
    } else if (c == ')') {
      if (paren > 0) --paren;
    } else if (c == ' ' && angle == 0 && paren == 0) {
      start = i + 1;  // a return type before the name
    } else if (c == ':' && angle == 0 && paren == 0 && i + 1 < s.size() && s[i + 1] == ':') {
      last = i;
    }
  }
  if (last == std::string::npos || last < start) return {};
  return s.substr(start, last - start);
}

bool is_default_argument(std::string_view a) {
  for (std::string_view d : {"std::allocator<", "std::less<", "std::hash<", "std::equal_to<",
                             "std::char_traits<", "std::default_delete<"})
    if (starts_with(a, d)) return true;
  return false;
}

// A type without its default template arguments, recursively, std::basic_string<char> as
// std::string.
std::string simplify_type(std::string_view t) {
  const std::size_t open = t.find('<');
  if (open == std::string_view::npos || t.back() != '>') return std::string(t);
  const std::string_view name = t.substr(0, open);
  std::vector<std::string> args = split_template_arguments(t.substr(open + 1, t.size() - open - 2));
  while (args.size() > 1 && is_default_argument(args.back())) args.pop_back();
  for (std::string& a : args) a = simplify_type(a);
  if (name == "std::basic_string" && args.size() == 1) {
    if (args[0] == "char") return "std::string";
    if (args[0] == "wchar_t") return "std::wstring";
  }
  if (name == "std::basic_stringbuf" && args.size() == 1 && args[0] == "char")
    return "std::stringbuf";
  if (name == "std::basic_ostringstream" && args.size() == 1 && args[0] == "char")
    return "std::ostringstream";
  if (name == "std::basic_stringstream" && args.size() == 1 && args[0] == "char")
    return "std::stringstream";
  std::string out(name);
  out += '<';
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (i != 0) out += ", ";
    out += args[i];
  }
  out += '>';
  // lowalloc's strings and vectors as their aliases (std::vector<lowalloc::small_string<32>>).
  if (out.find("lowalloc::") != std::string::npos) return abbreviate_lowalloc_types(out);
  return out;
}

// The first template argument of the function's own name: T of "std::make_shared<T, Args...>".
std::string function_template_argument(const frame& f, std::string_view qualified) {
  const std::string s = without_inline_namespaces(f.function);
  const std::size_t at = s.find(std::string(qualified) + "<");
  if (at == std::string::npos) return {};
  const std::size_t open = at + qualified.size();
  int depth = 0;
  for (std::size_t i = open; i < s.size(); ++i) {
    if (s[i] == '<') {
      ++depth;
    } else if (s[i] == '>') {
      if (--depth == 0) {
        const std::vector<std::string> args =
            split_template_arguments(std::string_view(s).substr(open + 1, i - open - 1));
        return args.empty() ? std::string() : simplify_type(args[0]);
      }
    }
  }
  return {};
}

bool in_header(const frame& f, std::initializer_list<std::string_view> suffixes) {
  for (std::string_view s : suffixes)
    if (ends_with(f.file, s)) return true;
  return false;
}

}  // namespace

const std::vector<operation_kind_info>& operation_kinds() {
  static const std::vector<operation_kind_info> kinds = {
      {"vector_growth", "growth"},
      {"vector_reserve", "reserve"},
      {"vector_resize", "resize"},
      {"vector_construction", "construction"},
      {"vector_copy", "copy"},
      {"vector_insert", "insert"},
      {"vector_assign", "assign"},
      {"string_construction", "construction"},
      {"string_copy", "copy"},
      {"string_growth", "growth"},
      {"string_concatenation", "operator+"},
      {"to_string", "to_string"},
      {"stringstream", "stream buffer"},
      {"tree_node", "node"},
      {"hash_node", "node"},
      {"hash_buckets", "buckets"},
      {"list_node", "node"},
      {"forward_list_node", "node"},
      {"deque_map", "map of chunks"},
      {"deque_chunk", "chunk"},
      {"make_shared", "object and control block"},
      {"shared_ptr_control_block", "control block"},
      {"function_callable", "callable on the heap"},
      {"make_unique", "object"},
      {"new", "a new-expression"},
      {"other", ""},
  };
  return kinds;
}

std::string operation_text(const operation& op) {
  if (op.kind == "other") return {};
  std::string_view description;
  for (const operation_kind_info& k : operation_kinds())
    if (k.kind == op.kind) description = k.description;
  std::string text;
  if (op.kind == "make_shared" || op.kind == "make_unique") {
    // "std::make_shared<T>": the type is the smart pointer's argument.
    const std::size_t open = op.container.find('<');
    text = "std::" + op.member;
    if (open != std::string::npos) text += op.container.substr(open);
  } else if (op.kind == "new") {
    return op.member + " (a new-expression)";
  } else if (op.kind == "string_concatenation" || op.kind == "to_string") {
    text = op.kind == "to_string" ? "std::to_string" : "std::string operator+";
  } else {
    text = op.container.empty() ? std::string("std") : op.container;
    // A constructor ("basic_string", "vector"): the class named once.
    std::string_view name = op.container;
    if (const std::size_t open = name.find('<'); open != std::string_view::npos)
      name = name.substr(0, open);
    if (const std::size_t sep = name.rfind("::"); sep != std::string_view::npos)
      name = name.substr(sep + 2);
    const bool constructor = op.member == name || op.member == "basic_string" ||
                             (op.kind == "function_callable" && op.member == "function");
    if (constructor)
      text += " constructor";
    else if (!op.member.empty())
      text += "::" + op.member;
  }
  if (!description.empty() && description != op.member && description != "construction") {
    text += " (";
    text += description;
    text += ')';
  }
  return text;
}

operation_classifier::operation_classifier(const frame_table& table)
    : table_(table), known_(table.frames.size(), 0) {}

operation operation_classifier::classify(const std::uint32_t* ids, std::size_t n) {
  bool any = false;
  for (std::size_t i = 0; i < n; ++i) {
    std::uint8_t& k = known_[ids[i]];
    if (k == 0) {
      const frame& f = table_.frames[ids[i]];
      const frame_name name = name_of(f);
      const bool part = family_of(name) != family::none || name.qualified == "operator new" ||
                        name.qualified == "operator new[]" ||
                        in_header(f, {"/bits/std_function.h", "/__functional/function.h"}) ||
                        starts_with(name.cls, "std::_Function_base") ||
                        starts_with(name.cls, "std::__function::");
      k = part ? 2 : 1;
    }
    any = any || k == 2;
  }
  if (!any) return operation{};
  frames_.clear();
  for (std::size_t i = 0; i < n; ++i) frames_.push_back(&table_.frames[ids[i]]);
  return detail::classify(frames_);
}

namespace detail {

std::string container_type(std::string_view function) {
  frame f;
  f.function = std::string(function);
  const std::string cls = class_text(f);
  return cls.empty() ? std::string() : simplify_type(cls);
}

operation classify(const std::vector<const frame*>& frames) {
  std::vector<frame_name> names;
  names.reserve(frames.size());
  for (const frame* f : frames) names.push_back(name_of(*f));

  operation op;
  // The innermost frame of a container or function the user calls is the one that allocated;
  // outwards from it, the frames of the same object (the same container type, or the function
  // that wraps it: operator+ around a string's append, make_shared around shared_ptr) lead to
  // the member called. Another container further out called it: a std::vector<std::string>'s
  // push_back that copies its argument allocates as a string copy, not as the vector.
  std::size_t outer = names.size();
  family fam = family::none;
  for (std::size_t i = 0; i < names.size(); ++i) {
    const family f = family_of(names[i]);
    if (f != family::none) {
      outer = i;
      fam = f;
      break;
    }
  }
  if (fam != family::none) {
    const auto container = [](family f) {
      return f == family::vector || f == family::string || f == family::tree || f == family::hash ||
             f == family::list || f == family::forward_list || f == family::deque;
    };
    std::string type = container(fam) ? simplify_type(class_text(*names[outer].f)) : "";
    for (std::size_t j = outer + 1; j < names.size(); ++j) {
      const family f = family_of(names[j]);
      if (f == family::none) continue;  // the library's own helpers between
      const bool wraps =
          (fam == family::string &&
           (f == family::concatenation || f == family::to_string || f == family::stringstream)) ||
          (fam == family::shared_ptr && f == family::make_shared);
      if (f == fam && container(f)) {
        if (simplify_type(class_text(*names[j].f)) != type) break;
      } else if (f != fam && !wraps) {
        break;
      }
      outer = j;
      fam = f;
      if (!container(f)) type.clear();
    }
  }
  // std::function's frames for a lambda carry no qualified name: its header tells.
  if (fam == family::none || fam == family::function) {
    for (std::size_t i = names.size(); i-- > 0;) {
      const frame& f = *names[i].f;
      if (in_header(f, {"/bits/std_function.h", "/__functional/function.h"}) ||
          starts_with(names[i].cls, "std::_Function_base") ||
          starts_with(names[i].cls, "std::__function::")) {
        op.kind = "function_callable";
        op.container = "std::function";
        op.member = "function";
        return op;
      }
    }
  }
  if (fam == family::none) {
    // A new-expression of the program's own: operator new right under the frame after the
    // allocator's (malloc from the program stays "other"). Only where that frame has debug
    // information: without it, the standard library's members inlined into it (a push_back, a
    // map insertion) do not show, and operator new under it says nothing.
    if (names.size() >= 2 && !names.back().f->file.empty()) {
      const std::string& caller_of_user = names[names.size() - 2].qualified;
      if (caller_of_user == "operator new" || caller_of_user == "operator new[]") {
        op.kind = "new";
        op.member = caller_of_user;
      }
    }
    return op;
  }

  const frame_name& n = names[outer];
  const frame& of = *n.f;
  op.member = n.member;
  if (!n.cls.empty()) op.container = simplify_type(class_text(of));
  const std::size_t inner = outer;  // frames [0, inner) are inside the member called

  switch (fam) {
    case family::vector:
      if (any_member(names, inner + 1,
                     {"_M_realloc_insert", "_M_realloc_append", "__push_back_slow_path",
                      "__emplace_back_slow_path"}))
        op.kind = "vector_growth";
      else if (n.member == "reserve")
        op.kind = "vector_reserve";
      else if (n.member == "resize" || any_member(names, inner, {"_M_default_append", "__append"}))
        op.kind = "vector_resize";
      else if (n.member == "vector")
        op.kind = takes_own_type(of, class_text(of)) ? "vector_copy" : "vector_construction";
      else if (n.member == "operator=")
        op.kind = "vector_copy";
      else if (n.member == "insert" || n.member == "emplace")
        op.kind = "vector_insert";
      else if (n.member == "assign")
        op.kind = "vector_assign";
      else
        op.kind = "vector_growth";  // push_back, emplace_back through a member not listed
      break;
    case family::string:
      if (n.member == "basic_string")
        op.kind = takes_own_type(of, class_text(of)) ? "string_copy" : "string_construction";
      else if (n.member == "operator=" || n.member == "assign")
        op.kind = takes_own_type(of, class_text(of)) ? "string_copy" : "string_growth";
      else if (n.member == "_M_assign")  // libstdc++'s copy assignment, exported
        op.kind = "string_copy";
      else if (n.member == "_M_construct" || n.member == "__init")  // the constructor inlined
        op.kind = "string_construction";
      else
        op.kind = "string_growth";  // push_back, append, +=, insert, replace, resize, reserve
      break;
    case family::concatenation:
    case family::to_string: {
      op.kind = fam == family::to_string ? "to_string" : "string_concatenation";
      op.member = fam == family::to_string ? "to_string" : "operator+";
      op.container = "std::string";
      break;
    }
    case family::stringstream:
      op.kind = "stringstream";
      break;
    case family::tree:
      op.kind = "tree_node";
      break;
    case family::hash:
      op.kind =
          any_member(
              names, inner,
              {"_M_allocate_buckets", "_M_rehash", "_M_rehash_aux", "__rehash", "__do_rehash"}) &&
                  !any_member(names, inner,
                              {"_M_allocate_node", "__construct_node", "__construct_node_hash"})
              ? "hash_buckets"
              : "hash_node";
      break;
    case family::list:
      op.kind = "list_node";
      break;
    case family::forward_list:
      op.kind = "forward_list_node";
      break;
    case family::deque:
      op.kind =
          any_member(names, inner, {"_M_allocate_map", "_M_initialize_map", "_M_reallocate_map"})
              ? "deque_map"
              : "deque_chunk";
      break;
    case family::make_shared:
      op.kind = "make_shared";
      op.member = n.member;
      op.container = "std::shared_ptr<" + function_template_argument(of, n.qualified) + ">";
      break;
    case family::shared_ptr:
      // shared_ptr(new T): the object was allocated by the user; this is the control block.
      // (make_shared's frames reach std::make_shared, outside this one.)
      op.kind = any_class(names, inner, {"std::_Sp_counted_ptr_inplace"}) ||
                        any_member(names, inner, {"__allocate_guarded", "__allocation_guard"})
                    ? "make_shared"
                    : "shared_ptr_control_block";
      break;
    case family::make_unique:
      op.kind = "make_unique";
      op.container = "std::unique_ptr<" + function_template_argument(of, n.qualified) + ">";
      break;
    case family::function:
      op.kind = "function_callable";
      op.container = "std::function";
      break;
    case family::none:
      break;
  }
  return op;
}

}  // namespace detail

}  // namespace lowalloc::analyze
