# Installs lowalloc from BUILD_DIR into a scratch prefix and builds the consumer project in
# SOURCE_DIR against it with find_package(lowalloc), then runs it; with TRACE, also the
# consumer's allocation tests (lowalloc_add_allocation_test), one of which must fail, run by the
# installed PREFIX/bin/lowalloc that the package finds (not the build tree's).
file(REMOVE_RECURSE "${WORK_DIR}")
set(prefix "${WORK_DIR}/prefix")
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "command failed (${rc}): ${ARGN}\n${out}")
  endif()
endfunction()
run(${CMAKE_COMMAND} --install "${BUILD_DIR}" --prefix "${prefix}")
run(${CMAKE_COMMAND} -S "${SOURCE_DIR}" -B "${WORK_DIR}/build" -G "${GENERATOR}"
    -DCMAKE_CXX_COMPILER=${CXX_COMPILER} -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_BUILD_TYPE=Release
    "-DCMAKE_CXX_FLAGS=${CXX_FLAGS}" "-DCMAKE_EXE_LINKER_FLAGS=${CXX_FLAGS}"
    "-DLOWALLOC_CONSUMER_TRACE=${TRACE}")
run(${CMAKE_COMMAND} --build "${WORK_DIR}/build")
run("${WORK_DIR}/build/consumer")
message(STATUS "consumer built and ran against ${prefix}")
if(TRACE)
  # The package's lowalloc command is the installed one.
  file(STRINGS "${WORK_DIR}/build/CMakeCache.txt" found REGEX "^LOWALLOC_EXECUTABLE:")
  string(REGEX REPLACE "^[^=]*=" "" found "${found}")
  if(NOT found STREQUAL "${prefix}/bin/lowalloc")
    message(FATAL_ERROR "the consumer's LOWALLOC_EXECUTABLE is '${found}', not ${prefix}/bin/lowalloc")
  endif()
  run(${CMAKE_CTEST_COMMAND} --test-dir "${WORK_DIR}/build" --output-on-failure)
  file(READ "${WORK_DIR}/build/over_limit.xml" junit)
  if(NOT junit MATCHES "failures=\"1\"" OR NOT junit MATCHES "<failure message=\"allocations ")
    message(FATAL_ERROR "consumer_over_limit's JUnit report has no failure:\n${junit}")
  endif()
  message(STATUS "the consumer's allocation tests passed, and the one over its limit failed")
endif()
