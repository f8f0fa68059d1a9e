// The operation that made an allocation, from the frames between the allocation function and
// the user's code: libc++ 14 frames as a clang++ -stdlib=libc++ -O2 -g program gives them (the
// libstdc++ ones are checked end to end, in tests/trace), libstdc++'s exported symbols, and the
// container types as the user wrote them.
#include "analyze/operation.hpp"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace {

using lowalloc::analyze::frame;
using lowalloc::analyze::operation;
using lowalloc::analyze::detail::classify;
using lowalloc::analyze::detail::container_type;

struct case_t {
  std::vector<std::pair<std::string, std::string>> frames;  // function, file; innermost first
  std::string kind;
  std::string container;
  std::string member;
};

operation classify_names(const std::vector<std::pair<std::string, std::string>>& names) {
  std::vector<frame> frames;
  for (const auto& [function, file] : names) {
    frame f;
    f.function = function;
    f.file = file;
    frames.push_back(f);
  }
  std::vector<const frame*> pointers;
  for (const frame& f : frames) pointers.push_back(&f);
  return classify(pointers);
}

void expect_cases(const case_t* cases, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    const case_t& c = cases[i];
    const operation op = classify_names(c.frames);
    EXPECT_EQ(op.kind, c.kind) << "case " << i << ", " << c.frames.back().first;
    EXPECT_EQ(op.container, c.container) << "case " << i << ", " << c.frames.back().first;
    EXPECT_EQ(op.member, c.member) << "case " << i << ", " << c.frames.back().first;
  }
}

// clang++ 14 -stdlib=libc++ -O2 -g (libc++ 14): the frames from operator new to the user's,
// without the std::allocator and __libcpp_allocate frames in between.
const case_t libcxx_cases[] = {
    {{
         {"operator new(unsigned long)", ""},
         {"std::__1::unique_ptr<std::__1::__tree_node<std::__1::__value_type<int, int>, void*>, "
          "std::__1::__tree_node_destructor<std::__1::allocator<std::__1::__tree_node<std::__1::__"
          "value_type<int, int>, void*> > > > std::__1::__tree<std::__1::__value_type<int, int>, "
          "std::__1::__map_value_compare<int, std::__1::__value_type<int, int>, "
          "std::__1::less<int>, true>, std::__1::allocator<std::__1::__value_type<int, int> > "
          ">::__construct_node<std::__1::piecewise_construct_t const&, std::__1::tuple<int "
          "const&>, std::__1::tuple<> >(std::__1::piecewise_construct_t const&, "
          "std::__1::tuple<int const&>&&, std::__1::tuple<>&&)",
          "/usr/lib/llvm-14/bin/../include/c++/v1/__tree"},
         {"std::__1::pair<std::__1::__tree_iterator<std::__1::__value_type<int, int>, "
          "std::__1::__tree_node<std::__1::__value_type<int, int>, void*>*, long>, bool> "
          "std::__1::__tree<std::__1::__value_type<int, int>, std::__1::__map_value_compare<int, "
          "std::__1::__value_type<int, int>, std::__1::less<int>, true>, "
          "std::__1::allocator<std::__1::__value_type<int, int> > "
          ">::__emplace_unique_key_args<int, std::__1::piecewise_construct_t const&, "
          "std::__1::tuple<int const&>, std::__1::tuple<> >(int const&, "
          "std::__1::piecewise_construct_t const&, std::__1::tuple<int const&>&&, "
          "std::__1::tuple<>&&)",
          "/usr/lib/llvm-14/bin/../include/c++/v1/__tree"},
         {"std::__1::map<int, int, std::__1::less<int>, std::__1::allocator<std::__1::pair<int "
          "const, int> > >::operator[](int const&)",
          "/usr/lib/llvm-14/bin/../include/c++/v1/map"},
         {"map_insert(int)", "/src/ops.cpp"},
     },
     "tree_node",
     "std::map<int, int>",
     "operator[]"},
    {{
         {"operator new(unsigned long)", ""},
         {"std::__1::basic_string<char, std::__1::char_traits<char>, std::__1::allocator<char> "
          ">::__init(char const*, unsigned long)",
          "/usr/lib/llvm-14/bin/../include/c++/v1/string"},
         {"std::__1::basic_string<char, std::__1::char_traits<char>, std::__1::allocator<char> "
          ">::basic_string<decltype(nullptr)>(char const*)",
          "/usr/lib/llvm-14/bin/../include/c++/v1/string"},
         {"str_construct(int)", "/src/ops.cpp"},
     },
     "string_construction",
     "std::string",
     "basic_string"},
    {{
         {"operator new(unsigned long)", ""},
         {"std::__1::__allocation_guard<std::__1::allocator<std::__1::__shared_ptr_emplace<long, "
          "std::__1::allocator<long> > > >::__allocation_guard<std::__1::allocator<long> "
          ">(std::__1::allocator<long>, unsigned long)",
          "/usr/lib/llvm-14/bin/../include/c++/v1/__memory/allocation_guard.h"},
         {"std::__1::shared_ptr<long> std::__1::allocate_shared<long, std::__1::allocator<long>, "
          "int&, void>(std::__1::allocator<long> const&, int&)",
          "/usr/lib/llvm-14/bin/../include/c++/v1/__memory/shared_ptr.h"},
         {"std::__1::shared_ptr<long> std::__1::make_shared<long, int&, void>(int&)",
          "/usr/lib/llvm-14/bin/../include/c++/v1/__memory/shared_ptr.h"},
         {"shared(int)", "/src/ops.cpp"},
     },
     "make_shared",
     "std::shared_ptr<long>",
     "make_shared"},
    {{
         {"operator new(unsigned long)", ""},
         {"std::__1::unique_ptr<std::__1::__hash_node<std::__1::__hash_value_type<int, int>, "
          "void*>, "
          "std::__1::__hash_node_destructor<std::__1::allocator<std::__1::__hash_node<std::__1::__"
          "hash_value_type<int, int>, void*> > > > "
          "std::__1::__hash_table<std::__1::__hash_value_type<int, int>, "
          "std::__1::__unordered_map_hasher<int, std::__1::__hash_value_type<int, int>, "
          "std::__1::hash<int>, std::__1::equal_to<int>, true>, "
          "std::__1::__unordered_map_equal<int, std::__1::__hash_value_type<int, int>, "
          "std::__1::equal_to<int>, std::__1::hash<int>, true>, "
          "std::__1::allocator<std::__1::__hash_value_type<int, int> > "
          ">::__construct_node_hash<std::__1::piecewise_construct_t const&, std::__1::tuple<int "
          "const&>, std::__1::tuple<> >(unsigned long, std::__1::piecewise_construct_t const&, "
          "std::__1::tuple<int const&>&&, std::__1::tuple<>&&)",
          "/usr/lib/llvm-14/bin/../include/c++/v1/__hash_table"},
         {"std::__1::pair<std::__1::__hash_iterator<std::__1::__hash_node<std::__1::__hash_value_"
          "type<int, int>, void*>*>, bool> std::__1::__hash_table<std::__1::__hash_value_type<int, "
          "int>, std::__1::__unordered_map_hasher<int, std::__1::__hash_value_type<int, int>, "
          "std::__1::hash<int>, std::__1::equal_to<int>, true>, "
          "std::__1::__unordered_map_equal<int, std::__1::__hash_value_type<int, int>, "
          "std::__1::equal_to<int>, std::__1::hash<int>, true>, "
          "std::__1::allocator<std::__1::__hash_value_type<int, int> > "
          ">::__emplace_unique_key_args<int, std::__1::piecewise_construct_t const&, "
          "std::__1::tuple<int const&>, std::__1::tuple<> >(int const&, "
          "std::__1::piecewise_construct_t const&, std::__1::tuple<int const&>&&, "
          "std::__1::tuple<>&&)",
          "/usr/lib/llvm-14/bin/../include/c++/v1/__hash_table"},
         {"std::__1::unordered_map<int, int, std::__1::hash<int>, std::__1::equal_to<int>, "
          "std::__1::allocator<std::__1::pair<int const, int> > >::operator[](int const&)",
          "/usr/lib/llvm-14/bin/../include/c++/v1/unordered_map"},
         {"umap_insert(int)", "/src/ops.cpp"},
     },
     "hash_node",
     "std::unordered_map<int, int>",
     "operator[]"},
    {{
         {"operator new(unsigned long)", ""},
         {"std::__1::list<int, std::__1::allocator<int> "
          ">::__allocate_node(std::__1::allocator<std::__1::__list_node<int, void*> >&)",
          "/usr/lib/llvm-14/bin/../include/c++/v1/list"},
         {"std::__1::list<int, std::__1::allocator<int> >::push_back(int const&)",
          "/usr/lib/llvm-14/bin/../include/c++/v1/list"},
         {"list_push(int)", "/src/ops.cpp"},
     },
     "list_node",
     "std::list<int>",
     "push_back"},
    {{
         {"operator new(unsigned long)", ""},
         {"std::__1::__split_buffer<std::__1::basic_string<char, std::__1::char_traits<char>, "
          "std::__1::allocator<char> >, std::__1::allocator<std::__1::basic_string<char, "
          "std::__1::char_traits<char>, std::__1::allocator<char> > >&>::__split_buffer(unsigned "
          "long, unsigned long, std::__1::allocator<std::__1::basic_string<char, "
          "std::__1::char_traits<char>, std::__1::allocator<char> > >&)",
          "/usr/lib/llvm-14/bin/../include/c++/v1/__split_buffer"},
         {"void std::__1::vector<std::__1::basic_string<char, std::__1::char_traits<char>, "
          "std::__1::allocator<char> >, std::__1::allocator<std::__1::basic_string<char, "
          "std::__1::char_traits<char>, std::__1::allocator<char> > > "
          ">::__emplace_back_slow_path<char const (&) [2]>(char const (&) [2])",
          "/usr/lib/llvm-14/bin/../include/c++/v1/vector"},
         {"void std::__1::vector<std::__1::basic_string<char, std::__1::char_traits<char>, "
          "std::__1::allocator<char> >, std::__1::allocator<std::__1::basic_string<char, "
          "std::__1::char_traits<char>, std::__1::allocator<char> > > >::emplace_back<char const "
          "(&) [2]>(char const (&) [2])",
          "/usr/lib/llvm-14/bin/../include/c++/v1/vector"},
         {"vecstr_growth(int)", "/src/ops.cpp"},
     },
     "vector_growth",
     "std::vector<std::string>",
     "emplace_back"},
    {{
         {"operator new(unsigned long)", ""},
         {"std::__1::__split_buffer<int, std::__1::allocator<int>&>::__split_buffer(unsigned long, "
          "unsigned long, std::__1::allocator<int>&)",
          "/usr/lib/llvm-14/bin/../include/c++/v1/__split_buffer"},
         {"void std::__1::vector<int, std::__1::allocator<int> >::__push_back_slow_path<int "
          "const&>(int const&)",
          "/usr/lib/llvm-14/bin/../include/c++/v1/vector"},
         {"std::__1::vector<int, std::__1::allocator<int> >::push_back(int const&)",
          "/usr/lib/llvm-14/bin/../include/c++/v1/vector"},
         {"vec_growth(int)", "/src/ops.cpp"},
     },
     "vector_growth",
     "std::vector<int>",
     "push_back"},
    {{
         {"operator new(unsigned long)", ""},
         {"std::__1::__hash_table<std::__1::__hash_value_type<int, int>, "
          "std::__1::__unordered_map_hasher<int, std::__1::__hash_value_type<int, int>, "
          "std::__1::hash<int>, std::__1::equal_to<int>, true>, "
          "std::__1::__unordered_map_equal<int, std::__1::__hash_value_type<int, int>, "
          "std::__1::equal_to<int>, std::__1::hash<int>, true>, "
          "std::__1::allocator<std::__1::__hash_value_type<int, int> > >::__rehash(unsigned long)",
          "/usr/lib/llvm-14/bin/../include/c++/v1/__hash_table"},
         {"std::__1::pair<std::__1::__hash_iterator<std::__1::__hash_node<std::__1::__hash_value_"
          "type<int, int>, void*>*>, bool> std::__1::__hash_table<std::__1::__hash_value_type<int, "
          "int>, std::__1::__unordered_map_hasher<int, std::__1::__hash_value_type<int, int>, "
          "std::__1::hash<int>, std::__1::equal_to<int>, true>, "
          "std::__1::__unordered_map_equal<int, std::__1::__hash_value_type<int, int>, "
          "std::__1::equal_to<int>, std::__1::hash<int>, true>, "
          "std::__1::allocator<std::__1::__hash_value_type<int, int> > "
          ">::__emplace_unique_key_args<int, std::__1::piecewise_construct_t const&, "
          "std::__1::tuple<int const&>, std::__1::tuple<> >(int const&, "
          "std::__1::piecewise_construct_t const&, std::__1::tuple<int const&>&&, "
          "std::__1::tuple<>&&)",
          "/usr/lib/llvm-14/bin/../include/c++/v1/__hash_table"},
         {"std::__1::unordered_map<int, int, std::__1::hash<int>, std::__1::equal_to<int>, "
          "std::__1::allocator<std::__1::pair<int const, int> > >::operator[](int const&)",
          "/usr/lib/llvm-14/bin/../include/c++/v1/unordered_map"},
         {"umap_insert(int)", "/src/ops.cpp"},
     },
     "hash_buckets",
     "std::unordered_map<int, int>",
     "operator[]"},
    {{
         {"operator new(unsigned long)", ""},
         {"std::__1::basic_string<char, std::__1::char_traits<char>, std::__1::allocator<char> "
          ">::__grow_by(unsigned long, unsigned long, unsigned long, unsigned long, unsigned long, "
          "unsigned long)",
          ""},
         {"std::__1::basic_string<char, std::__1::char_traits<char>, std::__1::allocator<char> "
          ">::push_back(char)",
          ""},
         {"std::__1::basic_string<char, std::__1::char_traits<char>, std::__1::allocator<char> "
          ">::operator+=(char)",
          "/usr/lib/llvm-14/bin/../include/c++/v1/string"},
         {"str_append(int)", "/src/ops.cpp"},
     },
     "string_growth",
     "std::string",
     "operator+="},
    {{
         {"__GI__IO_file_doallocate", "./libio/filedoalloc.c"},
         {"__GI__IO_doallocbuf", "./libio/genops.c"},
         {"__GI__IO_doallocbuf", "./libio/genops.c"},
         {"_IO_new_file_overflow", "./libio/fileops.c"},
         {"_IO_new_file_xsputn", "./libio/fileops.c"},
         {"_IO_new_file_xsputn", "./libio/fileops.c"},
         {"outstring_func", "./stdio-common/vfprintf-internal.c"},
         {"__vfprintf_internal", "./stdio-common/vfprintf-process-arg.c"},
         {"__printf", "./stdio-common/printf.c"},
         {"vec_growth(int)", "/src/ops.cpp"},
     },
     "other",
     "",
     ""},
};

// libstdc++ 12: members exported by libstdc++.so (no file) and free functions of the headers.
const case_t libstdcxx_cases[] = {
    {{{"operator new(unsigned long)", ""},
      {"std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >::_M_mutate("
       "unsigned long, unsigned long, char const*, unsigned long)",
       ""},
      {"std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >::_M_append("
       "char const*, unsigned long)",
       ""},
      {"std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >::append("
       "char const*)",
       "/usr/include/c++/12/bits/basic_string.h"},
      {"build_name(int)", "/src/names.cpp"}},
     "string_growth",
     "std::string",
     "append"},
    {{{"operator new(unsigned long)", ""},
      {"void std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> "
       ">::_M_construct<char*>(char*, char*, std::forward_iterator_tag)",
       ""},
      {"std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> "
       ">::basic_string(std::__cxx11::basic_string<char, std::char_traits<char>, "
       "std::allocator<char> > const&)",
       ""},
      {"copy_names(std::vector<std::string> const&)", "/src/names.cpp"}},
     "string_copy",
     "std::string",
     "basic_string"},
    {{{"operator new(unsigned long)", ""},
      {"void std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> "
       ">::_M_construct<char*>(char*, char*, std::forward_iterator_tag)",
       ""},
      {"std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> "
       ">::basic_string(std::__cxx11::basic_string<char, std::char_traits<char>, "
       "std::allocator<char> > const&)",
       "/usr/include/c++/12/bits/basic_string.h"},
      {"std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > "
       "std::operator+<char, std::char_traits<char>, std::allocator<char> "
       ">(std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > const&, "
       "char const*)",
       "/usr/include/c++/12/bits/basic_string.h"},
      {"label(std::string const&)", "/src/names.cpp"}},
     "string_concatenation",
     "std::string",
     "operator+"},
    {{{"operator new(unsigned long)", ""},
      {"std::__shared_count<(__gnu_cxx::_Lock_policy)2>::__shared_count<Widget*>(Widget*)",
       "/usr/include/c++/12/bits/shared_ptr_base.h"},
      {"std::__shared_ptr<Widget, (__gnu_cxx::_Lock_policy)2>::__shared_ptr<Widget, "
       "void>(Widget*)",
       "/usr/include/c++/12/bits/shared_ptr_base.h"},
      {"std::shared_ptr<Widget>::shared_ptr<Widget, void>(Widget*)",
       "/usr/include/c++/12/bits/shared_ptr.h"},
      {"make_widget()", "/src/widget.cpp"}},
     "shared_ptr_control_block",
     "std::shared_ptr<Widget>",
     "shared_ptr"},
    {{{"operator new(unsigned long)", ""},
      {"std::__detail::_Hashtable_alloc<std::allocator<std::__detail::_Hash_node<std::pair<long "
       "const, int>, false> > >::_M_allocate_buckets(unsigned long)",
       "/usr/include/c++/12/bits/hashtable_policy.h"},
      {"std::_Hashtable<long, std::pair<long const, int>, std::allocator<std::pair<long const, "
       "int> >, std::__detail::_Select1st, std::equal_to<long>, std::hash<long>, "
       "std::__detail::_Mod_range_hashing, std::__detail::_Default_ranged_hash, "
       "std::__detail::_Prime_rehash_policy, std::__detail::_Hashtable_traits<false, false, true> "
       ">::_M_rehash(unsigned long, unsigned long const&)",
       "/usr/include/c++/12/bits/hashtable.h"},
      {"std::unordered_map<long, int, std::hash<long>, std::equal_to<long>, "
       "std::allocator<std::pair<long const, int> > >::reserve(unsigned long)",
       "/usr/include/c++/12/bits/unordered_map.h"},
      {"index(long)", "/src/index.cpp"}},
     "hash_buckets",
     "std::unordered_map<long, int>",
     "reserve"},
    {{{"operator new(unsigned long)", ""},
      {"std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> "
       ">::reserve(unsigned long)",
       ""},
      {"std::__cxx11::basic_stringbuf<char, std::char_traits<char>, std::allocator<char> "
       ">::overflow(int)",
       ""},
      {"std::basic_streambuf<char, std::char_traits<char> >::xsputn(char const*, long)", ""},
      {"std::basic_ostream<char, std::char_traits<char> >& std::__ostream_insert<char, "
       "std::char_traits<char> >(std::basic_ostream<char, std::char_traits<char> >&, char const*, "
       "long)",
       ""},
      {"format_row(Row const&)", "/src/rows.cpp"}},
     "stringstream",
     "std::stringbuf",
     "overflow"},
    {{{"operator new(unsigned long)", ""},
      {"std::__cxx11::to_string(unsigned long)", "/usr/include/c++/12/bits/basic_string.h"},
      {"key_of(unsigned long)", "/src/keys.cpp"}},
     "to_string",
     "std::string",
     "to_string"},
    {{{"malloc", ""}, {"parse(char const*)", "/src/parse.cpp"}}, "other", "", ""},
    {{{"operator new(unsigned long)", ""}, {"Node::clone() const", "/src/node.cpp"}},
     "new",
     "",
     "operator new"},
    {{{"operator new[](unsigned long)", ""}, {"make_buffer(unsigned long)", "/src/buf.cpp"}},
     "new",
     "",
     "operator new[]"},
    {{{"operator new(unsigned long)", ""},
      {"std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> "
       ">::_M_assign(std::__cxx11::basic_string<char, std::char_traits<char>, "
       "std::allocator<char> > const&)",
       ""},
      {"cmMakefile::AddDefinition()", ""}},
     "string_copy",
     "std::string",
     "_M_assign"},
    // A container that copies its argument: the copy allocates, the container does not.
    {{{"operator new(unsigned long)", ""},
      {"std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> "
       ">::_M_create(unsigned long&, unsigned long)",
       "/usr/include/c++/12/bits/basic_string.tcc"},
      {"void std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> "
       ">::_M_construct<char*>(char*, char*, std::forward_iterator_tag)",
       "/usr/include/c++/12/bits/basic_string.tcc"},
      {"std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> "
       ">::basic_string(std::__cxx11::basic_string<char, std::char_traits<char>, "
       "std::allocator<char> > const&)",
       "/usr/include/c++/12/bits/basic_string.h"},
      {"void std::__new_allocator<std::__cxx11::basic_string<char, std::char_traits<char>, "
       "std::allocator<char> > >::construct<std::__cxx11::basic_string<char, "
       "std::char_traits<char>, std::allocator<char> >, std::__cxx11::basic_string<char, "
       "std::char_traits<char>, std::allocator<char> > const&>(std::__cxx11::basic_string<char, "
       "std::char_traits<char>, std::allocator<char> >*, std::__cxx11::basic_string<char, "
       "std::char_traits<char>, std::allocator<char> > const&)",
       "/usr/include/c++/12/bits/new_allocator.h"},
      {"std::vector<std::__cxx11::basic_string<char, std::char_traits<char>, "
       "std::allocator<char> >, std::allocator<std::__cxx11::basic_string<char, "
       "std::char_traits<char>, std::allocator<char> > > >::push_back("
       "std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > const&)",
       "/usr/include/c++/12/bits/stl_vector.h"},
      {"split_words(std::string const&)", "/src/words.cpp"}},
     "string_copy",
     "std::string",
     "basic_string"},
    {{{"operator new(unsigned long)", ""},
      {"std::_Vector_base<int, std::allocator<int> >::_M_allocate(unsigned long)",
       "/usr/include/c++/12/bits/stl_vector.h"},
      {"std::vector<int, std::allocator<int> >::vector(std::vector<int, std::allocator<int> > "
       "const&)",
       "/usr/include/c++/12/bits/stl_vector.h"},
      {"void std::vector<std::vector<int, std::allocator<int> >, "
       "std::allocator<std::vector<int, std::allocator<int> > > >::_M_realloc_insert<"
       "std::vector<int, std::allocator<int> > const&>(__gnu_cxx::__normal_iterator<"
       "std::vector<int, std::allocator<int> >*, std::vector<std::vector<int, "
       "std::allocator<int> >, std::allocator<std::vector<int, std::allocator<int> > > > >, "
       "std::vector<int, std::allocator<int> > const&)",
       "/usr/include/c++/12/bits/vector.tcc"},
      {"std::vector<std::vector<int, std::allocator<int> >, std::allocator<std::vector<int, "
       "std::allocator<int> > > >::push_back(std::vector<int, std::allocator<int> > const&)",
       "/usr/include/c++/12/bits/stl_vector.h"},
      {"keep(std::vector<int> const&)", "/src/keep.cpp"}},
     "vector_copy",
     "std::vector<int>",
     "vector"},
    // Without debug information, inlined members of the standard library would not show: operator
    // new under a function says nothing of what called it.
    {{{"operator new(unsigned long)", ""}, {"cmState::AddCacheEntry()", ""}}, "other", "", ""},
};

TEST(Operation, LibcxxFramesOfEachOperation) {
  expect_cases(libcxx_cases, std::size(libcxx_cases));
}

TEST(Operation, LibstdcxxExportedMembersAndFreeFunctions) {
  expect_cases(libstdcxx_cases, std::size(libstdcxx_cases));
}

TEST(Operation, ContainerTypesAsTheUserWroteThem) {
  EXPECT_EQ(container_type("std::vector<int, std::allocator<int> >::push_back(int const&)"),
            "std::vector<int>");
  EXPECT_EQ(container_type("std::__1::vector<std::__1::basic_string<char, "
                           "std::__1::char_traits<char>, std::__1::allocator<char> >, "
                           "std::__1::allocator<std::__1::basic_string<char, "
                           "std::__1::char_traits<char>, std::__1::allocator<char> > > "
                           ">::push_back(std::__1::basic_string<char, "
                           "std::__1::char_traits<char>, std::__1::allocator<char> >&&)"),
            "std::vector<std::string>");
  EXPECT_EQ(container_type("std::map<std::__cxx11::basic_string<char, std::char_traits<char>, "
                           "std::allocator<char> >, int, std::less<std::__cxx11::basic_string<"
                           "char, std::char_traits<char>, std::allocator<char> > >, "
                           "std::allocator<std::pair<std::__cxx11::basic_string<char, "
                           "std::char_traits<char>, std::allocator<char> > const, int> > "
                           ">::operator[](std::__cxx11::basic_string<char, "
                           "std::char_traits<char>, std::allocator<char> > const&)"),
            "std::map<std::string, int>");
  // A comparator or hash of the user's own stays: it is not the default.
  EXPECT_EQ(container_type("std::set<int, by_size, std::allocator<int> >::insert(int const&)"),
            "std::set<int, by_size>");
  EXPECT_EQ(container_type("std::unordered_map<long, int, my_hash, std::equal_to<long>, "
                           "std::allocator<std::pair<long const, int> > >::operator[](long "
                           "const&)"),
            "std::unordered_map<long, int, my_hash>");
  // A return type before the name, template arguments of the member, a free function.
  EXPECT_EQ(container_type("void std::vector<double, std::allocator<double> "
                           ">::_M_realloc_insert<double const&>(__gnu_cxx::__normal_iterator<"
                           "double*, std::vector<double, std::allocator<double> > >, double "
                           "const&)"),
            "std::vector<double>");
  EXPECT_EQ(container_type("parse(char const*)"), "");
  // lowalloc's types by their aliases (libstdc++'s spelling, then libc++'s).
  EXPECT_EQ(
      container_type("std::vector<lowalloc::basic_string<char, lowalloc::small_storage<char, "
                     "32ul, std::allocator<char> >, std::char_traits<char> >, "
                     "std::allocator<lowalloc::basic_string<char, lowalloc::small_storage<"
                     "char, 32ul, std::allocator<char> >, std::char_traits<char> > > "
                     ">::push_back(lowalloc::basic_string<char, lowalloc::small_storage<char, "
                     "32ul, std::allocator<char> >, std::char_traits<char> >&&)"),
      "std::vector<lowalloc::small_string<32>>");
  EXPECT_EQ(container_type("std::__1::unordered_map<lowalloc::basic_string<char, "
                           "lowalloc::fixed_storage<char, 16ul>, std::__1::char_traits<char> >, "
                           "long, std::__1::hash<lowalloc::basic_string<char, "
                           "lowalloc::fixed_storage<char, 16ul>, std::__1::char_traits<char> > >, "
                           "std::__1::equal_to<lowalloc::basic_string<char, "
                           "lowalloc::fixed_storage<char, 16ul>, std::__1::char_traits<char> > >, "
                           "std::__1::allocator<std::__1::pair<lowalloc::basic_string<char, "
                           "lowalloc::fixed_storage<char, 16ul>, std::__1::char_traits<char> > "
                           "const, long> > >::operator[](lowalloc::basic_string<char, "
                           "lowalloc::fixed_storage<char, 16ul>, std::__1::char_traits<char> > "
                           "const&)"),
            "std::unordered_map<lowalloc::fixed_string<16>, long>");
}

TEST(Operation, TextNamesTheCallTheUserWrote) {
  using lowalloc::analyze::operation_text;
  EXPECT_EQ(operation_text(operation{"vector_growth", "std::vector<int>", "push_back"}),
            "std::vector<int>::push_back (growth)");
  EXPECT_EQ(operation_text(operation{"vector_copy", "std::vector<long>", "vector"}),
            "std::vector<long> constructor (copy)");
  EXPECT_EQ(operation_text(operation{"string_construction", "std::string", "basic_string"}),
            "std::string constructor");
  EXPECT_EQ(operation_text(operation{"make_shared", "std::shared_ptr<long>", "make_shared"}),
            "std::make_shared<long> (object and control block)");
  EXPECT_EQ(operation_text(operation{"vector_reserve", "std::vector<double>", "reserve"}),
            "std::vector<double>::reserve");
  EXPECT_EQ(operation_text(operation{"new", "", "operator new[]"}),
            "operator new[] (a new-expression)");
  EXPECT_EQ(operation_text(operation{}), "");
  // Every kind has a description.
  for (const auto& k : lowalloc::analyze::operation_kinds())
    EXPECT_TRUE(k.kind == "other" || !k.description.empty()) << k.kind;
}

}  // namespace
