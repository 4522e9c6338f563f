# The ABI of the built libtrace2d-client.so compared with the released
# 1.0's (tests/client/abi/1.0.dump) by abi-compliance-checker: any binary
# or source compatibility problem (a function gone, a parameter or struct
# changed) fails. Both dumps come from abi-dumper, which reads the
# library's debug information (-g: client/CMakeLists.txt gives it).
#   cmake -DLIBRARY=... -DHEADERS=... -DBASELINE=... -DWORK_DIR=... -P abi_check.cmake
# To make a new baseline at a release, run abi-dumper as below and copy
# new.dump over the baseline (see tests/client/abi/README.md).
find_program(ABI_DUMPER abi-dumper)
find_program(ABI_CHECKER abi-compliance-checker)
if(NOT ABI_DUMPER OR NOT ABI_CHECKER)
  message(STATUS "SKIPPED: abi-dumper or abi-compliance-checker missing (.ci/deps installs them)")
  return()
endif()
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})
execute_process(COMMAND ${ABI_DUMPER} ${LIBRARY} -o ${WORK_DIR}/new.dump -lver current
                        -public-headers ${HEADERS}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "abi-dumper failed (${rc}):\n${out}\n${err}")
endif()
execute_process(COMMAND ${ABI_CHECKER} -l trace2d-client -old ${BASELINE} -new ${WORK_DIR}/new.dump
                        -report-path ${WORK_DIR}/report.html
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the library is not compatible with ${BASELINE} (report: "
                      "${WORK_DIR}/report.html):\n${out}\n${err}")
endif()
message(STATUS "compatible with ${BASELINE}:\n${out}")
