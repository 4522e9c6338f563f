/* A C program written against an earlier release's trace2d/client.h (the
 * include path picks which), built unchanged and linked with the current
 * library. It calls every function of 0.1's C ABI, with 0.1's options
 * structs, and prints "sid <SID>". */
#include <trace2d/client.h>

#include <stdio.h>

int main(int argc, char** argv) {
  trace2d_options options;
  trace2d_child_options child_options;
  const char* child_argv[] = {"true", NULL};
  const char* wrapped_argv[] = {"git", "version", NULL};
  int timer = trace2d_timer_define("old", "timer", 1);
  int counter = trace2d_counter_define("old", "counter", 0);
  pid_t pid = 0;
  int child_id;

  trace2d_options_init(&options);
  options.exe = "old-program 0.1";
  if (!trace2d_start(argc, (const char* const*)argv, &options)) {
    return 1;
  }
  printf("sid %s\n", trace2d_sid());
  printf("enabled %d\n", trace2d_enabled());
  fflush(stdout);
  trace2d_cmd_name("old-name");
  trace2d_cmd_mode("old-mode");
  trace2d_def_param("old.param", "value");
  trace2d_def_repo(1, "/tmp/old-worktree");
  trace2d_region_enter("old", "outer", "a message");
  trace2d_timer_start(timer);
  trace2d_data_string("old", "text", "value");
  trace2d_data_intmax("old", "number", (intmax_t)42);
  trace2d_data_json("old", "json", "{\"a\":[1,2]}");
  trace2d_timer_stop(timer);
  trace2d_region_leave("old", "outer", NULL);
  trace2d_thread_start("old-thread-on-main");
  trace2d_thread_exit();
  trace2d_error("failed %d times", 3);
  trace2d_printf("hello %s", "printf");
  trace2d_counter_add(counter, 2);
  trace2d_child_options_init(&child_options);
  child_options.child_class = "old-child";
  printf("child_code %d\n", trace2d_run_child(child_argv, &child_options, &pid));
  child_id = trace2d_child_start(wrapped_argv, NULL);
  trace2d_child_exit(child_id, 1234, trace2d_child_code(0));
  return trace2d_exit(4);
}
