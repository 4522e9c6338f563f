/* The C ABI from a C program built against the installed files only: with
 * pkg-config (shared, and --static), and with CMake in a C-only project.
 * Built with TRACE2D_WRAP_EXIT: exit(3) in finish() records its code, file
 * and line, as git's #define exit does. */
#define TRACE2D_WRAP_EXIT
#include <trace2d/client.h>

#include <stdio.h>

static void finish(int code) { exit(code); }

int main(int argc, char** argv) {
  trace2d_start(argc, (const char* const*)argv, NULL);
  if (trace2d_version() / 10000 != TRACE2D_CLIENT_VERSION_MAJOR) {
    fprintf(stderr, "library %s, header %d\n", trace2d_version_string(), TRACE2D_CLIENT_VERSION);
    return 1;
  }
  trace2d_region_enter("consumer", "c-work", NULL);
  trace2d_region_leave("consumer", "c-work", NULL);
  finish(3);
  return 0;
}
