# lowalloc_add_allocation_test(): a CTest test that runs a program under `lowalloc run` and
# checks its trace with `lowalloc check` (docs/tracer.md#a-gate-for-ci-lowalloc-check).
#
#   lowalloc_add_allocation_test(NAME parser_allocations
#     COMMAND parser_demo --input ${CMAKE_CURRENT_SOURCE_DIR}/sample.txt
#     MAX_ALLOCATIONS 20000 MAX_LEAKED_BYTES 0
#     BASELINE ${CMAKE_CURRENT_SOURCE_DIR}/parser.trace MAX_INCREASE 5%
#     CHECK_ARGS --site parse_header --max-allocations 100)
#
# COMMAND is the program and its arguments; a target name as the program runs that target's file.
# MAX_ALLOCATIONS, MAX_BYTES, MAX_TEMPORARY, MAX_LEAKED_BYTES and MAX_PEAK_BYTES are the limits
# of `lowalloc check` on the totals; BASELINE (a trace) with MAX_INCREASE compares with an earlier
# run; CHECK_ARGS passes anything else to `lowalloc check` (--site limits, --include-runtime).
# JUNIT writes a JUnit XML report; WORKING_DIRECTORY is where the program runs (default: the
# current binary directory). The trace is kept as NAME.trace in the current binary directory,
# for `lowalloc report` when the test fails. The test fails when the program fails, when a limit
# is exceeded, and when the trace cannot be read.
#
# The lowalloc command is LOWALLOC_EXECUTABLE (set by the package, or by hand).

set(_LOWALLOC_ALLOCATION_TEST_RUNNER "${CMAKE_CURRENT_LIST_DIR}/lowalloc-allocation-test-run.cmake")

function(lowalloc_add_allocation_test)
  cmake_parse_arguments(PARSE_ARGV 0 arg ""
    "NAME;MAX_ALLOCATIONS;MAX_BYTES;MAX_TEMPORARY;MAX_LEAKED_BYTES;MAX_PEAK_BYTES;BASELINE;MAX_INCREASE;JUNIT;WORKING_DIRECTORY"
    "COMMAND;CHECK_ARGS")
  if(NOT arg_NAME OR NOT arg_COMMAND)
    message(FATAL_ERROR "lowalloc_add_allocation_test: NAME and COMMAND are required")
  endif()
  if(arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "lowalloc_add_allocation_test(${arg_NAME}): unknown arguments: ${arg_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT LOWALLOC_EXECUTABLE)
    message(FATAL_ERROR "lowalloc_add_allocation_test(${arg_NAME}): the lowalloc command was not "
                        "found; set LOWALLOC_EXECUTABLE to its path")
  endif()
  if(arg_BASELINE AND NOT arg_MAX_INCREASE OR arg_MAX_INCREASE AND NOT arg_BASELINE)
    message(FATAL_ERROR "lowalloc_add_allocation_test(${arg_NAME}): BASELINE and MAX_INCREASE go together")
  endif()

  set(check "")
  foreach(limit MAX_ALLOCATIONS MAX_BYTES MAX_TEMPORARY MAX_LEAKED_BYTES MAX_PEAK_BYTES)
    if(DEFINED arg_${limit})
      string(TOLOWER "--${limit}" option)
      string(REPLACE "_" "-" option "${option}")
      list(APPEND check ${option} ${arg_${limit}})
    endif()
  endforeach()
  if(arg_BASELINE)
    list(APPEND check --baseline ${arg_BASELINE} --max-increase ${arg_MAX_INCREASE})
  endif()
  if(arg_JUNIT)
    list(APPEND check --junit ${arg_JUNIT})
  endif()
  list(APPEND check ${arg_CHECK_ARGS})
  if(NOT check)
    message(FATAL_ERROR "lowalloc_add_allocation_test(${arg_NAME}): no limit given")
  endif()

  list(GET arg_COMMAND 0 program)
  list(SUBLIST arg_COMMAND 1 -1 program_args)
  if(TARGET ${program})
    set(program "$<TARGET_FILE:${program}>")
  endif()
  set(directory "${CMAKE_CURRENT_BINARY_DIR}")
  if(arg_WORKING_DIRECTORY)
    set(directory "${arg_WORKING_DIRECTORY}")
  endif()
  # The test's settings in a script of their own, each argument in brackets: any character
  # (a semicolon, a quote) reaches the program as written.
  set(program_list "")
  foreach(a IN LISTS program_args)
    string(APPEND program_list " [==[${a}]==]")
  endforeach()
  set(check_list "")
  foreach(a IN LISTS check)
    string(APPEND check_list " [==[${a}]==]")
  endforeach()
  set(script "${CMAKE_CURRENT_BINARY_DIR}/${arg_NAME}-$<CONFIG>.lowalloc-test.cmake")
  file(GENERATE OUTPUT "${script}" CONTENT
"set(LOWALLOC [==[${LOWALLOC_EXECUTABLE}]==])
set(TRACE [==[${CMAKE_CURRENT_BINARY_DIR}/${arg_NAME}.trace]==])
set(PROGRAM [==[${program}]==])
set(PROGRAM_ARGS${program_list})
set(CHECK_ARGS${check_list})
include([==[${_LOWALLOC_ALLOCATION_TEST_RUNNER}]==])
")
  add_test(NAME ${arg_NAME} COMMAND ${CMAKE_COMMAND} -P "${script}"
           WORKING_DIRECTORY "${directory}")
endfunction()
