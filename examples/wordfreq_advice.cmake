# The test wordfreq_advice: `lowalloc advise` on a trace of wordfreq (the standard types) must
# suggest exactly the types and sizes of the fixed lines of wordfreq.hpp, the ones
# wordfreq_fixed is built with, so that `make demo` applies the advice it shows. It runs what
# scripts/demo.sh runs, on the same text (wordfreq_text's defaults), with the assumed costs
# (--no-measure) so that the choice does not depend on the machine: every `small_string` item
# must suggest the `token` line, every `small_vector` item of a std::vector<std::string> the
# `token_list` line (with std::string for token). When the advice changes, change those lines.
#   cmake -DLOWALLOC=... -DTEXT=... -DWORDFREQ=... -DHEADER=... -DWORK_DIR=... -P wordfreq_advice.cmake
cmake_minimum_required(VERSION 3.21) # string(JSON)
foreach(var LOWALLOC TEXT WORDFREQ HEADER WORK_DIR)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "wordfreq_advice.cmake: -D${var}=... is required")
  endif()
endforeach()

# The fixed lines: `using token = lowalloc::...;` and `using token_list = lowalloc::...;`.
file(STRINGS "${HEADER}" fixed REGEX "^using token(_list)? = lowalloc::")
set(token "")
set(token_list "")
foreach(line IN LISTS fixed)
  if(line MATCHES "^using (token|token_list) = ([^;]+);")
    set(${CMAKE_MATCH_1} "${CMAKE_MATCH_2}")
  endif()
endforeach()
if(token STREQUAL "" OR token_list STREQUAL "")
  message(FATAL_ERROR "no fixed `using token` and `using token_list` lines in ${HEADER}")
endif()
# In the standard build the element of token_list is std::string.
string(REGEX REPLACE "<token," "<std::string," token_list_expected "${token_list}")

file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    string(REPLACE ";" " " command "${ARGN}")
    message(FATAL_ERROR "${command}: exit status ${rc}\n${out}\n${err}")
  endif()
  set(out "${out}" PARENT_SCOPE)
endfunction()
run("${TEXT}" "${WORK_DIR}/text.txt")
run("${LOWALLOC}" run -o "${WORK_DIR}/wordfreq.trace" -- "${WORDFREQ}" "${WORK_DIR}/text.txt")
run("${LOWALLOC}" advise --format json --no-measure --top 3 "${WORK_DIR}/wordfreq.trace")
file(WRITE "${WORK_DIR}/advice.json" "${out}")

string(JSON n LENGTH "${out}" advice)
set(checked_token 0)
set(checked_token_list 0)
set(errors "")
math(EXPR last "${n} - 1")
foreach(i RANGE ${last})
  string(JSON kind GET "${out}" advice ${i} kind)
  string(JSON container GET "${out}" advice ${i} container)
  string(JSON suggestion GET "${out}" advice ${i} suggestion)
  string(JSON function GET "${out}" advice ${i} site function)
  string(JSON line GET "${out}" advice ${i} site line)
  math(EXPR rank "${i} + 1") # as the text output numbers them
  set(where "advice #${rank}, ${kind} at ${function} line ${line}")
  if(kind STREQUAL "small_string")
    math(EXPR checked_token "${checked_token} + 1")
    if(NOT suggestion STREQUAL token)
      string(APPEND errors "${where}: ${suggestion}, but wordfreq.hpp has token = ${token}\n")
    endif()
  elseif(kind STREQUAL "small_vector" AND container STREQUAL "std::vector<std::string>")
    math(EXPR checked_token_list "${checked_token_list} + 1")
    if(NOT suggestion STREQUAL token_list_expected)
      string(APPEND errors "${where}: ${suggestion}, but wordfreq.hpp has token_list = "
                           "${token_list} (${token_list_expected})\n")
    endif()
  endif()
endforeach()
if(checked_token EQUAL 0)
  string(APPEND errors "no small_string advice (wordfreq.hpp has token = ${token})\n")
endif()
if(checked_token_list EQUAL 0)
  string(APPEND errors "no small_vector advice (wordfreq.hpp has token_list = ${token_list})\n")
endif()
if(errors)
  message(FATAL_ERROR "the advice and wordfreq.hpp's fixed lines disagree "
                      "(the advice is in ${WORK_DIR}/advice.json):\n${errors}")
endif()
message(STATUS "${checked_token} small_string items suggest ${token}, ${checked_token_list} "
               "small_vector items ${token_list_expected}")
