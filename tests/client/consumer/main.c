/* The C ABI from a C program built with pkg-config. */
#include <trace2d/client.h>

int main(int argc, char** argv) {
  trace2d_start(argc, (const char* const*)argv, NULL);
  trace2d_region_enter("consumer", "c-work", NULL);
  trace2d_region_leave("consumer", "c-work", NULL);
  return trace2d_exit(0);
}
