/* client-typed-data-c11: the C11 trace2d_data(category, key, value), which
 * picks the typed call by _Generic, with each type it takes (test_v1_1.cpp
 * reads what it sent). */
#include <trace2d/client.h>

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

int main(int argc, char** argv) {
  (void)argc;
  if (!trace2d_start(argc, (const char* const*)argv, NULL)) {
    printf("off_reason %s\n", trace2d_off_reason());
  }
  printf("sid %s\n", trace2d_sid());
  const char* text = "text";
  trace2d_data("c11", "double", 0.25);
  trace2d_data("c11", "float", 1.5f);
  trace2d_data("c11", "bool", (bool)true);
  trace2d_data("c11", "int", -42);
  trace2d_data("c11", "long", 1234567890123L);
  trace2d_data("c11", "unsigned", 7u);
  trace2d_data("c11", "u64max", (unsigned long long)UINT64_MAX);
  trace2d_data("c11", "string", text);
  trace2d_data("c11", "literal", "literal");
  return trace2d_exit(0);
}
