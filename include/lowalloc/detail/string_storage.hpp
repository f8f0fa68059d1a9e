// lowalloc/detail/string_storage.hpp — kept so that code including this path keeps compiling:
// the storages and their concept are public, in <lowalloc/string_storage.hpp>.
#ifndef LOWALLOC_DETAIL_STRING_STORAGE_HPP
#define LOWALLOC_DETAIL_STRING_STORAGE_HPP

#include <lowalloc/string_storage.hpp>

#endif  // LOWALLOC_DETAIL_STRING_STORAGE_HPP
