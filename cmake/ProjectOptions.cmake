# INTERFACE targets that carry our warning and sanitizer flags. Only our own
# targets link them, so third-party headers and users' builds are unaffected.
add_library(trace2d_warnings INTERFACE)
target_compile_options(trace2d_warnings INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wold-style-cast
  -Wcast-align -Woverloaded-virtual -Wimplicit-fallthrough
  $<$<BOOL:${TRACE2D_WERROR}>:-Werror>)

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
