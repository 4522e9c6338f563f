/* trace2d_options_init() from a C program built against the 1.0 header
 * (client-options-init-1.0) and against this tree's (client-options-init):
 * the library must set up no more of the struct than the program has
 * (1.1's trace2d_options is 8 bytes longer than 1.0's), and a 1.1
 * program's own fields must be set up and read. Bytes right after the
 * struct are watched. Prints "struct_size", "canary_ok", then "sid". */
#include <trace2d/client.h>

#include <stdio.h>
#include <string.h>

struct watched {
  trace2d_options options;
  unsigned char canary[32];
};

int main(int argc, char** argv) {
  struct watched w;
  size_t i;
  int intact = 1;
  memset(&w, 0xab, sizeof w);
  trace2d_options_init(&w.options);
  for (i = 0; i < sizeof w.canary; ++i) {
    intact = intact && w.canary[i] == 0xab;
  }
  printf("struct_size %u\ncanary_ok %d\n", (unsigned)w.options.struct_size, intact);
  w.options.exe = "options-init exe";
#if TRACE2D_CLIENT_VERSION_MINOR >= 1
  w.options.version = "1.1.7";
#endif
  trace2d_start(argc, (const char* const*)argv, &w.options);
  printf("sid %s\n", trace2d_sid());
  return trace2d_exit(0);
}
