# Installs lowalloc from BUILD_DIR into a scratch prefix and builds the consumer project in
# SOURCE_DIR against it with find_package(lowalloc), then runs it; with LOWALLOC_EXECUTABLE, also
# the consumer's allocation tests (lowalloc_add_allocation_test), one of which must fail.
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
    "-DLOWALLOC_EXECUTABLE=${LOWALLOC_EXECUTABLE}")
run(${CMAKE_COMMAND} --build "${WORK_DIR}/build")
run("${WORK_DIR}/build/consumer")
message(STATUS "consumer built and ran against ${prefix}")
if(LOWALLOC_EXECUTABLE)
  run(${CMAKE_CTEST_COMMAND} --test-dir "${WORK_DIR}/build" --output-on-failure)
  file(READ "${WORK_DIR}/build/over_limit.xml" junit)
  if(NOT junit MATCHES "failures=\"1\"" OR NOT junit MATCHES "<failure message=\"allocations ")
    message(FATAL_ERROR "consumer_over_limit's JUnit report has no failure:\n${junit}")
  endif()
  message(STATUS "the consumer's allocation tests passed, and the one over its limit failed")
endif()
