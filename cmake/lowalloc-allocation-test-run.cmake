# The steps of a test made by lowalloc_add_allocation_test(): `lowalloc run` the program, then
# `lowalloc check` its trace. Included by the test's own script, which sets LOWALLOC, TRACE,
# PROGRAM, PROGRAM_ARGS and CHECK_ARGS.
file(REMOVE "${TRACE}")
execute_process(COMMAND "${LOWALLOC}" run -q -o "${TRACE}" -- "${PROGRAM}" ${PROGRAM_ARGS}
                RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "lowalloc run: ${PROGRAM} failed (${status})")
endif()
execute_process(COMMAND "${LOWALLOC}" check "${TRACE}" ${CHECK_ARGS} RESULT_VARIABLE status)
if(status EQUAL 1)
  message(FATAL_ERROR "lowalloc check: a limit is exceeded (the trace: ${TRACE})")
elseif(NOT status EQUAL 0)
  message(FATAL_ERROR "lowalloc check could not check ${TRACE} (${status})")
endif()
