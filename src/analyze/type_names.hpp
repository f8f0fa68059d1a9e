// lowalloc's own types in a demangled name written as the user writes them: the demangler spells
// out every template argument (`lowalloc::basic_string<char, lowalloc::small_storage<char, 32ul,
// std::allocator<char> >, std::char_traits<char> >`), the user wrote `lowalloc::small_string<32>`.
// Not part of lowalloc's API; docs/tracer.md lists the spellings.
#ifndef LOWALLOC_SRC_ANALYZE_TYPE_NAMES_HPP
#define LOWALLOC_SRC_ANALYZE_TYPE_NAMES_HPP

#include <string>
#include <string_view>
#include <vector>

namespace lowalloc::analyze {

/// `text` (a demangled function or type name, of libstdc++'s or libc++'s spelling) with each
/// lowalloc::basic_string of small_storage or fixed_storage as its alias (small_string<N>,
/// small_wstring<N>, fixed_string<N>, ...), and small_vector, small_vector_base, inplace_vector,
/// small_storage and fixed_storage without their default arguments; sizes without their suffix
/// ("32ul" as "32"). Anything else is left as it is.
std::string abbreviate_lowalloc_types(std::string_view text);

/// "a, b<c, d>, e" split at its top-level commas (not those inside <> or ()), each trimmed.
std::vector<std::string> split_template_arguments(std::string_view s);

}  // namespace lowalloc::analyze

#endif
