# Proves that check_layers.cmake catches what it is for: in a scratch tree
# with the real Layers table, a trace2ctl file that includes a daemon header
# and a daemon folder without a row must both be reported.
#
#   cmake -DSOURCE_DIR=<repo> -DSCRATCH=<empty dir> -P tests/layering/expect_violation.cmake
cmake_minimum_required(VERSION 3.25)

file(REMOVE_RECURSE "${SCRATCH}")
file(COPY "${SOURCE_DIR}/docs/architecture.md" DESTINATION "${SCRATCH}/docs")
file(STRINGS "${SOURCE_DIR}/docs/architecture.md" rows REGEX "^\\| `[a-z_/]+/` \\|")
foreach(row IN LISTS rows)
  string(REGEX REPLACE "^\\| `([a-z_/]+/)` \\|.*$" "\\1" folder "${row}")
  file(MAKE_DIRECTORY "${SCRATCH}/${folder}")
endforeach()
file(WRITE "${SCRATCH}/ctl/commands/bad.cpp" "#include \"daemon/app/options.hpp\"\n#include \"model/process_tree.hpp\"\n")
file(WRITE "${SCRATCH}/daemon/plugins/otlp.cpp" "#include \"proto/event.hpp\"\n")
file(WRITE "${SCRATCH}/model/fine.cpp" "#include \"db/sqlite.hpp\"\n#include <vector>\n")

execute_process(
  COMMAND "${CMAKE_COMMAND}" -DSOURCE_DIR=${SCRATCH} -P "${CMAKE_CURRENT_LIST_DIR}/check_layers.cmake"
  RESULT_VARIABLE result OUTPUT_VARIABLE out ERROR_VARIABLE err)
set(text "${out}${err}")
if(result EQUAL 0)
  message(FATAL_ERROR "check_layers passed a tree with violations:\n${text}")
endif()
foreach(expected
    "ctl/commands/bad.cpp: includes \"daemon/app/options.hpp\" of daemon/app/, which ctl/commands/ may not use"
    "daemon/plugins/otlp.cpp: its folder daemon/plugins/ has no row"
    "2 violation(s)")
  string(FIND "${text}" "${expected}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "check_layers did not report '${expected}':\n${text}")
  endif()
endforeach()
message(STATUS "check_layers reports both violations and nothing else")
