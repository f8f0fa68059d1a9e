# Runs `LOWALLOC report` over every trace in TRACES with each nosym-* variant of VARIANTS_FROM
# (scripts/report-identity.sh) and compares stdout with EXPECTED/TRACE.VARIANT.out and the exit
# status and stderr with EXPECTED/TRACE.VARIANT.err, byte for byte. A differing output is written
# to ACTUAL with the same name, for diff.
#   cmake -DLOWALLOC=... -DTRACES=... -DEXPECTED=... -DACTUAL=... -DVARIANTS_FROM=... -P run.cmake
cmake_minimum_required(VERSION 3.21) # policies: IN_LIST, no implicit dereference of quoted names
foreach(var LOWALLOC TRACES EXPECTED ACTUAL VARIANTS_FROM)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "run.cmake: -D${var}=... is required")
  endif()
endforeach()
if(NOT EXISTS "${LOWALLOC}")
  message(FATAL_ERROR "${LOWALLOC} not found: build the lowalloc_cli target first")
endif()

# The script's variant table, one NAME|OPTIONS a line; only the nosym-* variants read nothing but
# the trace (no debug info of binaries that exist on the recording machine only).
file(STRINGS "${VARIANTS_FROM}" variant_lines REGEX "^nosym-[a-z0-9-]+\\|")
if(NOT variant_lines)
  message(FATAL_ERROR "no nosym-* variants in ${VARIANTS_FROM}")
endif()

# Traces as lowalloc run names them: FILE.trace, and FILE.trace.PID for a child process.
file(GLOB traces RELATIVE "${TRACES}" "${TRACES}/*.trace" "${TRACES}/*.trace.*")
list(SORT traces)
if(NOT traces)
  message(FATAL_ERROR "no traces in ${TRACES}")
endif()

file(REMOVE_RECURSE "${ACTUAL}")

# first_difference(<out-var> expected actual): "line N:\n  expected: ...\n  actual:   ..." for
# the first line where the two strings differ. A binary search for the longest common prefix, as
# CMake lists cannot hold the lines of folded output (they contain ';').
function(first_difference out expected actual)
  string(LENGTH "${expected}" len_e)
  string(LENGTH "${actual}" len_a)
  set(lo 0)
  if(len_e LESS len_a)
    set(hi ${len_e})
  else()
    set(hi ${len_a})
  endif()
  while(lo LESS hi)
    math(EXPR mid "(${lo} + ${hi} + 1) / 2")
    string(SUBSTRING "${expected}" 0 ${mid} pe)
    string(SUBSTRING "${actual}" 0 ${mid} pa)
    if(pe STREQUAL pa)
      set(lo ${mid})
    else()
      math(EXPR hi "${mid} - 1")
    endif()
  endwhile()
  string(SUBSTRING "${expected}" 0 ${lo} prefix)
  string(REGEX MATCHALL "\n" newlines "${prefix}")
  list(LENGTH newlines line)
  math(EXPR line "${line} + 1")
  string(FIND "${prefix}" "\n" last_newline REVERSE)
  math(EXPR start "${last_newline} + 1")
  foreach(which expected actual)
    string(SUBSTRING "${${which}}" ${start} -1 rest)
    string(FIND "${rest}" "\n" end)
    if(rest STREQUAL "")
      set(rest "(end of output)")
    elseif(end EQUAL -1)
      string(APPEND rest " (no newline at the end)")
    else()
      string(SUBSTRING "${rest}" 0 ${end} rest)
    endif()
    set(${which}_line "${rest}")
  endforeach()
  set(${out} "line ${line}:\n  expected: ${expected_line}\n  actual:   ${actual_line}" PARENT_SCOPE)
endfunction()

set(failures 0)
set(checked 0)
set(known_files "")
foreach(trace IN LISTS traces)
  foreach(variant_line IN LISTS variant_lines)
    string(FIND "${variant_line}" "|" bar)
    string(SUBSTRING "${variant_line}" 0 ${bar} variant)
    math(EXPR bar "${bar} + 1")
    string(SUBSTRING "${variant_line}" ${bar} -1 options_line)
    separate_arguments(options UNIX_COMMAND "${options_line}")
    set(command_line "lowalloc report ${trace} ${options_line}")

    # A relative trace name from the traces directory, as the expected text reports print it.
    execute_process(COMMAND "${LOWALLOC}" report "${trace}" ${options}
                    WORKING_DIRECTORY "${TRACES}"
                    RESULT_VARIABLE status OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr)
    set(err "status ${status}\n${stderr}")
    foreach(kind out err)
      set(name "${trace}.${variant}.${kind}")
      list(APPEND known_files "${name}")
      math(EXPR checked "${checked} + 1")
      if(kind STREQUAL "out")
        set(got "${stdout}")
      else()
        set(got "${err}")
      endif()
      if(NOT EXISTS "${EXPECTED}/${name}")
        message("MISSING ${name}: no expected file (${command_line})")
        math(EXPR failures "${failures} + 1")
        continue()
      endif()
      file(READ "${EXPECTED}/${name}" want)
      if(NOT want STREQUAL got)
        first_difference(where "${want}" "${got}")
        file(WRITE "${ACTUAL}/${name}" "${got}")
        message("DIFFERS ${name} (${command_line}), ${where}\n"
                "  diff ${EXPECTED}/${name} ${ACTUAL}/${name}")
        math(EXPR failures "${failures} + 1")
      endif()
    endforeach()
  endforeach()
endforeach()

# An expected file no run produces: a trace or a variant was removed without regenerating.
file(GLOB expected_files RELATIVE "${EXPECTED}" "${EXPECTED}/*")
foreach(name IN LISTS expected_files)
  if(NOT name IN_LIST known_files)
    message("STALE ${name}: no trace and variant produce it")
    math(EXPR failures "${failures} + 1")
  endif()
endforeach()

list(LENGTH traces trace_count)
if(failures GREATER 0)
  message(FATAL_ERROR "${failures} outputs differ, missing or stale (${checked} checked against "
                      "${EXPECTED})")
endif()
message(STATUS "${checked} outputs of ${trace_count} traces identical to ${EXPECTED}")
