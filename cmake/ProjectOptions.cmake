# INTERFACE targets that carry our warning and sanitizer flags. Only our own
# targets link them, so third-party headers and users' builds are unaffected.
add_library(trace2d_warnings INTERFACE)
target_compile_options(trace2d_warnings INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wold-style-cast
  -Wcast-align -Woverloaded-virtual -Wimplicit-fallthrough
  $<$<BOOL:${TRACE2D_WERROR}>:-Werror>)
# In a unity build every source is #included into a generated file, and GCC
# then takes a class that uses a type of an anonymous namespace (a .cpp's
# private helper) for one defined in a header: -Wsubobject-linkage, about
# the build's form, not the code.
if(CMAKE_UNITY_BUILD AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  target_compile_options(trace2d_warnings INTERFACE $<$<COMPILE_LANGUAGE:CXX>:-Wno-subobject-linkage>)
endif()

add_library(trace2d_sanitizers INTERFACE)
if(TRACE2D_SANITIZE)
  target_compile_options(trace2d_sanitizers INTERFACE
    -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  target_link_options(trace2d_sanitizers INTERFACE -fsanitize=address,undefined)
endif()

add_library(trace2d_options INTERFACE)
target_link_libraries(trace2d_options INTERFACE trace2d_warnings trace2d_sanitizers)
# Includes are rooted at the project: #include "proto/event.hpp".
target_include_directories(trace2d_options INTERFACE
  ${PROJECT_SOURCE_DIR} ${PROJECT_BINARY_DIR}/generated)

# Fuzzing (tests/fuzz/, the `fuzz` preset): clang's libFuzzer. Our targets
# get coverage instrumentation and ASan/UBSan; the fuzzers link libFuzzer.
option(TRACE2D_FUZZ "Build the libFuzzer targets in tests/fuzz (clang only)" OFF)
if(TRACE2D_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "TRACE2D_FUZZ needs clang (libFuzzer): configure with the `fuzz` preset")
  endif()
  # -fno-sanitize=function: clang 14 cannot emit UBSan's function-type
  # check for the daemon's coroutines ("Cannot represent a difference across
  # sections"); every other UBSan check stays on.
  target_compile_options(trace2d_sanitizers INTERFACE
    -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize=function -fno-omit-frame-pointer
    -fno-sanitize-recover=undefined)
  target_link_options(trace2d_sanitizers INTERFACE -fsanitize=address,undefined)
  # Boost 1.74's Asio detects C++20 coroutines on GCC only (on clang it looks
  # for the Coroutines TS); clang 14 with libstdc++'s <coroutine> has them.
  target_compile_definitions(trace2d_options INTERFACE BOOST_ASIO_HAS_CO_AWAIT=1)
  # The fuzz preset builds no test suites (TRACE2D_BUILD_TESTS=OFF skips
  # tests/), so the fuzzers are defined from here, once every library they
  # link exists: at the end of the top-level CMakeLists.txt.
  cmake_language(DEFER DIRECTORY ${PROJECT_SOURCE_DIR}
                 CALL include ${PROJECT_SOURCE_DIR}/tests/fuzz/fuzzers.cmake)
endif()
