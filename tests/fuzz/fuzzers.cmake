# libFuzzer targets, built only in the fuzz configuration (TRACE2D_FUZZ=ON,
# clang: `cmake --preset fuzz`). Included by cmake/ProjectOptions.cmake at the
# end of the top-level CMakeLists.txt. See README.md for running them.
foreach(fuzzer fuzz_framer_parser fuzz_stitcher)
  add_executable(${fuzzer} ${PROJECT_SOURCE_DIR}/tests/fuzz/${fuzzer}.cpp)
  # trace2d_core carries trace2d_options: our warnings, and with TRACE2D_FUZZ
  # the coverage instrumentation and ASan/UBSan. -fsanitize=fuzzer adds
  # libFuzzer's main() at link time.
  target_link_libraries(${fuzzer} PRIVATE trace2d_core)
  target_link_options(${fuzzer} PRIVATE -fsanitize=fuzzer)
endforeach()
# fuzz_stitcher also loads what it stored into trace2ctl's process-tree
# model and renders it (tree_check.cpp).
target_sources(fuzz_stitcher PRIVATE ${PROJECT_SOURCE_DIR}/tests/fuzz/tree_check.cpp)
target_link_libraries(fuzz_stitcher PRIVATE trace2ctl_commands)
