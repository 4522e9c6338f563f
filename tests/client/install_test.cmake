# Installs the client component into a fresh prefix, then builds programs
# against it the ways users do, and runs them with a trace file:
#   find_package(trace2d COMPONENTS client), C++ shared and static;
#   a C-only CMake project with trace2d::client_static;
#   pkg-config from C99, shared, and --static from a prefix holding only
#   the archive;
#   client.hpp by g++ as C++17 and by clang++ (14 on Debian 12) as C++20,
#   each also with -fno-exceptions;
#   pkg-config trace2d-client-static with the .so beside the archive (ldd:
#   no libtrace2d-client.so needed);
#   the README and the example installed, the example built as C++17.
# Also checks that the installed headers include nothing of trace2d's own
# tree and that the shared library exports the versioned C ABI only.
#   cmake -DBUILD_DIR=... -DSOURCE_DIR=... -DWORK_DIR=... -P install_test.cmake
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  set(run_output "${out}" PARENT_SCOPE)
endfunction()

# Runs `program`, which must exit with `code` and have written a region
# and an atexit with that code; for the C consumer also the exit event of
# its wrapped exit(), with the caller's file.
function(expect_traced program trace code)
  file(REMOVE ${trace})
  execute_process(COMMAND ${CMAKE_COMMAND} -E env GIT_TRACE2_EVENT=${trace} LD_LIBRARY_PATH=${LIBDIR}
                          ${program}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL code)
    message(FATAL_ERROR "${program} exited ${rc}, not ${code}:\n${out}\n${err}")
  endif()
  file(READ ${trace} lines)
  if(NOT lines MATCHES "\"event\":\"region_enter\"" OR
     NOT lines MATCHES "\"event\":\"atexit\"[^\n]*\"code\":${code}}")
    message(FATAL_ERROR "${program} did not write its events to ${trace}:\n${lines}")
  endif()
  if(code EQUAL 3 AND NOT lines MATCHES "\"event\":\"exit\"[^\n]*\"file\":\"[^\"]*main.c\"")
    message(FATAL_ERROR "${program}: the wrapped exit() did not record its file:\n${lines}")
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
file(GLOB_RECURSE archive ${prefix}/*/libtrace2d-client.a)
if(NOT pc OR NOT config OR NOT shared OR NOT archive)
  message(FATAL_ERROR "missing pkg-config file, CMake package or library under ${prefix}")
endif()
get_filename_component(LIBDIR ${shared} DIRECTORY)

# The shared library exports trace2d_* functions only, each with the
# version node of the map (no C++ symbol, no weak template instance).
run(nm -D --defined-only --with-symbol-versions ${shared})
string(REPLACE "\n" ";" symbols "${run_output}")
set(exported 0)
foreach(symbol ${symbols})
  if(symbol MATCHES " A TRACE2D_CLIENT_1\\.[01]$")
    continue()
  endif()
  if(NOT symbol MATCHES " T trace2d_[a-z0-9_]+@@TRACE2D_CLIENT_1\\.[01]$")
    message(FATAL_ERROR "exported beyond the versioned C ABI: ${symbol}")
  endif()
  math(EXPR exported "${exported} + 1")
endforeach()
if(exported LESS 40)
  message(FATAL_ERROR "only ${exported} symbols exported:\n${run_output}")
endif()

# find_package(trace2d COMPONENTS client): shared and static, C++20.
run(${CMAKE_COMMAND} -S ${SOURCE_DIR}/tests/client/consumer -B ${WORK_DIR}/consumer
    -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_BUILD_TYPE=Release)
run(${CMAKE_COMMAND} --build ${WORK_DIR}/consumer)
expect_traced(${WORK_DIR}/consumer/consumer ${WORK_DIR}/shared.jsonl 0)
expect_traced(${WORK_DIR}/consumer/consumer_static ${WORK_DIR}/static.jsonl 0)

# A C-only project with the static target.
run(${CMAKE_COMMAND} -S ${SOURCE_DIR}/tests/client/consumer_c -B ${WORK_DIR}/consumer_c
    -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_BUILD_TYPE=Release)
run(${CMAKE_COMMAND} --build ${WORK_DIR}/consumer_c)
expect_traced(${WORK_DIR}/consumer_c/consumer_c_static ${WORK_DIR}/cmake_c_static.jsonl 3)

# pkg-config, from a C program built as C99.
get_filename_component(pcdir ${pc} DIRECTORY)
run(${CMAKE_COMMAND} -E env PKG_CONFIG_PATH=${pcdir} pkg-config --cflags --libs trace2d-client)
string(STRIP "${run_output}" flags)
separate_arguments(flags UNIX_COMMAND "${flags}")
set(c_flags -std=c99 -Wall -Wextra -Wpedantic -Werror)
run(cc ${c_flags} ${SOURCE_DIR}/tests/client/consumer/main.c ${flags} -o ${WORK_DIR}/consumer_c99)
expect_traced(${WORK_DIR}/consumer_c99 ${WORK_DIR}/c.jsonl 3)

# pkg-config --static, from a prefix without the shared library: the
# archive is all the linker finds, and the .pc must name the C++ runtime.
set(static_prefix ${WORK_DIR}/prefix-static)
file(COPY ${prefix}/ DESTINATION ${static_prefix})
file(GLOB_RECURSE static_shared ${static_prefix}/*/libtrace2d-client.so*)
file(REMOVE ${static_shared})
file(GLOB_RECURSE static_pc ${static_prefix}/*/trace2d-client.pc)
get_filename_component(static_pcdir ${static_pc} DIRECTORY)
run(${CMAKE_COMMAND} -E env PKG_CONFIG_PATH=${static_pcdir}
    pkg-config --static --cflags --libs trace2d-client)
string(STRIP "${run_output}" flags)
separate_arguments(flags UNIX_COMMAND "${flags}")
run(cc ${c_flags} ${SOURCE_DIR}/tests/client/consumer/main.c ${flags} -o ${WORK_DIR}/consumer_c_static)
run(readelf -d ${WORK_DIR}/consumer_c_static)
if(run_output MATCHES "libtrace2d-client")
  message(FATAL_ERROR "pkg-config --static linked the shared library:\n${run_output}")
endif()
expect_traced(${WORK_DIR}/consumer_c_static ${WORK_DIR}/c_static.jsonl 3)

# pkg-config trace2d-client-static with the shared library beside the
# archive, as installed: the binary must not need the .so (1.0's documented
# `pkg-config --static trace2d-client` line linked the .so).
run(${CMAKE_COMMAND} -E env PKG_CONFIG_PATH=${pcdir}
    pkg-config --static --cflags --libs trace2d-client-static)
string(STRIP "${run_output}" flags)
separate_arguments(flags UNIX_COMMAND "${flags}")
run(cc ${c_flags} ${SOURCE_DIR}/tests/client/consumer/main.c ${flags} -o ${WORK_DIR}/consumer_c_static_pc)
run(ldd ${WORK_DIR}/consumer_c_static_pc)
if(run_output MATCHES "libtrace2d-client")
  message(FATAL_ERROR "pkg-config trace2d-client-static linked the shared library:\n${run_output}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -E env GIT_TRACE2_EVENT=${WORK_DIR}/c_static_pc.jsonl
                        ${WORK_DIR}/consumer_c_static_pc RESULT_VARIABLE rc)
if(NOT rc EQUAL 3)
  message(FATAL_ERROR "the statically linked consumer exited ${rc} without LD_LIBRARY_PATH")
endif()

# find_package's version rule: any 1.y for a 1.x request with x <= y, no 2.0.
file(GLOB_RECURSE config_version ${prefix}/*/trace2dConfigVersion.cmake)
foreach(request 1.0 1.1 2.0)
  set(PACKAGE_FIND_VERSION ${request})
  string(REPLACE "." ";" parts ${request})
  list(GET parts 0 PACKAGE_FIND_VERSION_MAJOR)
  list(GET parts 1 PACKAGE_FIND_VERSION_MINOR)
  set(PACKAGE_FIND_VERSION_PATCH 0)
  set(PACKAGE_FIND_VERSION_COUNT 2)
  unset(PACKAGE_VERSION_COMPATIBLE)
  include(${config_version})
  if(request STREQUAL "2.0" AND PACKAGE_VERSION_COMPATIBLE)
    message(FATAL_ERROR "the package ${PACKAGE_VERSION} claims to satisfy ${request}")
  elseif(NOT request STREQUAL "2.0" AND NOT PACKAGE_VERSION_COMPATIBLE)
    message(FATAL_ERROR "the package ${PACKAGE_VERSION} does not satisfy ${request}")
  endif()
endforeach()

# The documentation the headers point to, and its example as C++17.
file(GLOB_RECURSE readme ${prefix}/*/README.md)
file(GLOB_RECURSE example ${prefix}/*/parallel_fetch.cpp)
if(NOT readme OR NOT example)
  message(FATAL_ERROR "client/README.md or the example not installed under ${prefix}")
endif()

# client.hpp by other compilers and standards than the package build's.
run(${CMAKE_COMMAND} -E env PKG_CONFIG_PATH=${pcdir} pkg-config --cflags --libs trace2d-client)
string(STRIP "${run_output}" flags)
separate_arguments(flags UNIX_COMMAND "${flags}")
set(cxx_flags -Wall -Wextra -Wpedantic -Werror)
run(c++ -std=c++17 ${cxx_flags} ${SOURCE_DIR}/tests/client/consumer/main.cpp ${flags}
    -o ${WORK_DIR}/consumer_gxx17)
expect_traced(${WORK_DIR}/consumer_gxx17 ${WORK_DIR}/gxx17.jsonl 0)
run(c++ -std=c++17 -fno-exceptions ${cxx_flags} ${SOURCE_DIR}/tests/client/consumer/main.cpp
    ${flags} -o ${WORK_DIR}/consumer_gxx17_noexcept)
expect_traced(${WORK_DIR}/consumer_gxx17_noexcept ${WORK_DIR}/gxx17_noexcept.jsonl 0)
run(c++ -std=c++17 ${cxx_flags} ${example} ${flags} -o ${WORK_DIR}/example_gxx17)
find_program(CLANGXX NAMES clang++-14 clang++)
if(CLANGXX)
  foreach(std 17 20)
    run(${CLANGXX} -std=c++${std} ${cxx_flags} ${SOURCE_DIR}/tests/client/consumer/main.cpp
        ${flags} -o ${WORK_DIR}/consumer_clang${std})
    expect_traced(${WORK_DIR}/consumer_clang${std} ${WORK_DIR}/clang${std}.jsonl 0)
    run(${CLANGXX} -std=c++${std} -fno-exceptions ${cxx_flags}
        ${SOURCE_DIR}/tests/client/consumer/main.cpp ${flags}
        -o ${WORK_DIR}/consumer_clang${std}_noexcept)
    expect_traced(${WORK_DIR}/consumer_clang${std}_noexcept ${WORK_DIR}/clang${std}_noexcept.jsonl 0)
  endforeach()
  message(STATUS "client.hpp built with ${CLANGXX}")
else()
  message(FATAL_ERROR "no clang++ to build client.hpp with: .ci/deps installs it")
endif()
message(STATUS "installed client: find_package, C-only CMake, pkg-config (shared and static), "
               "g++/clang++ consumers work; only the versioned C ABI is exported")
