// wordfreq.hpp — the types of examples/wordfreq.cpp, one alias per role.
//
// The program names each container it uses here, once, so that a change `lowalloc advise`
// suggests is a change of one line. By default the roles are standard types; built with
// -DWORDFREQ_FIXED they are the types and sizes `lowalloc advise` chose on the standard build's
// trace. `make demo` (scripts/demo.sh) shows the loop; the test wordfreq_advice
// (examples/wordfreq_advice.cmake) traces the standard build and fails if the advice and the
// fixed lines below no longer agree.
#ifndef LOWALLOC_EXAMPLES_WORDFREQ_HPP
#define LOWALLOC_EXAMPLES_WORDFREQ_HPP

#include <string>
#include <unordered_map>
#include <vector>

#ifdef WORDFREQ_FIXED
#include <lowalloc/small_vector.hpp>
#include <lowalloc/string.hpp>
#endif

namespace wordfreq {

#ifndef WORDFREQ_FIXED
using token = std::string;              // one word, lower-cased
using token_list = std::vector<token>;  // the words of one line
#else
using token = lowalloc::small_string<32>;
using token_list = lowalloc::small_vector<token, 16>;
#endif
using counts = std::unordered_map<token, long>;  // each distinct word and how often it occurs

}  // namespace wordfreq

#endif  // LOWALLOC_EXAMPLES_WORDFREQ_HPP
