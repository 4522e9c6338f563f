/* client-exit-wrapped CODE: git's idiom from C. With TRACE2D_WRAP_EXIT,
 * the exit(CODE) in leave() records its code, file and line through the
 * library before the process exits. Prints "sid <SID>" and "exit_line N". */
#define TRACE2D_WRAP_EXIT
#include <trace2d/client.h>

#include <stdio.h>
#include <stdlib.h>

static void leave(int code) {
  printf("exit_line %d\n", __LINE__ + 2);
  fflush(stdout);
  exit(code);
}

int main(int argc, char** argv) {
  trace2d_start(argc, (const char* const*)argv, NULL);
  printf("sid %s\n", trace2d_sid());
  trace2d_region_enter("wrapped", "work", NULL);
  trace2d_region_leave("wrapped", "work", NULL);
  leave(argc > 1 ? atoi(argv[1]) : 0);
  return 0;
}
