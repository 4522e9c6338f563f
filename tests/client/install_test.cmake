# Installs the client component into a fresh prefix, then builds programs
# against it the two ways users do: find_package(trace2d) and pkg-config,
# and runs them with a trace file. Also checks that the installed headers
# include nothing of trace2d's own tree.
#   cmake -DBUILD_DIR=... -DSOURCE_DIR=... -DWORK_DIR=... -P install_test.cmake
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  set(run_output "${out}" PARENT_SCOPE)
endfunction()

function(expect_traced program trace)
  file(REMOVE ${trace})
  run(${CMAKE_COMMAND} -E env GIT_TRACE2_EVENT=${trace} LD_LIBRARY_PATH=${LIBDIR} ${program})
  file(READ ${trace} lines)
  if(NOT lines MATCHES "\"event\":\"region_enter\"" OR NOT lines MATCHES "\"event\":\"atexit\"")
    message(FATAL_ERROR "${program} wrote no events to ${trace}:\n${lines}")
  endif()
endfunction()

set(prefix ${WORK_DIR}/prefix)
file(REMOVE_RECURSE ${WORK_DIR})
run(${CMAKE_COMMAND} --install ${BUILD_DIR} --component client --prefix ${prefix})

file(GLOB headers ${prefix}/include/trace2d/*)
list(LENGTH headers count)
if(NOT count EQUAL 2)
  message(FATAL_ERROR "expected client.h and client.hpp, found: ${headers}")
endif()
foreach(header ${headers})
  file(STRINGS ${header} quoted REGEX "#include \"")
  if(quoted)
    message(FATAL_ERROR "${header} includes project headers: ${quoted}")
  endif()
endforeach()
file(GLOB_RECURSE pc ${prefix}/*/trace2d-client.pc)
file(GLOB_RECURSE config ${prefix}/*/trace2dConfig.cmake)
file(GLOB_RECURSE shared ${prefix}/*/libtrace2d-client.so)
if(NOT pc OR NOT config OR NOT shared)
  message(FATAL_ERROR "missing pkg-config file, CMake package or library under ${prefix}")
endif()
get_filename_component(LIBDIR ${shared} DIRECTORY)

# find_package(trace2d): shared and static.
run(${CMAKE_COMMAND} -S ${SOURCE_DIR}/tests/client/consumer -B ${WORK_DIR}/consumer
    -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_BUILD_TYPE=Release)
run(${CMAKE_COMMAND} --build ${WORK_DIR}/consumer)
expect_traced(${WORK_DIR}/consumer/consumer ${WORK_DIR}/shared.jsonl)
expect_traced(${WORK_DIR}/consumer/consumer_static ${WORK_DIR}/static.jsonl)

# pkg-config, from a C program built as C99.
get_filename_component(pcdir ${pc} DIRECTORY)
run(${CMAKE_COMMAND} -E env PKG_CONFIG_PATH=${pcdir} pkg-config --cflags --libs trace2d-client)
string(STRIP "${run_output}" flags)
separate_arguments(flags UNIX_COMMAND "${flags}")
run(cc -std=c99 -Wall -Wextra -Wpedantic -Werror ${SOURCE_DIR}/tests/client/consumer/main.c ${flags}
    -o ${WORK_DIR}/consumer_c)
expect_traced(${WORK_DIR}/consumer_c ${WORK_DIR}/c.jsonl)
message(STATUS "installed client: find_package and pkg-config consumers work")
