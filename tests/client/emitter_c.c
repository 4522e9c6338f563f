/* client-emitter-c: the C ABI from a C99 program (compiled as C, with
 * -Wall -Wextra -Wpedantic -Werror). Prints "sid <SID>". */
#include <trace2d/client.h>

#include <pthread.h>
#include <stdio.h>
#include <string.h>

static void* worker(void* arg) {
  int timer = trace2d_timer_define("c", "worker", 1);
  (void)arg;
  trace2d_thread_start("c-worker");
  trace2d_timer_start(timer);
  trace2d_region_enter("c", "in-thread", NULL);
  trace2d_region_leave("c", "in-thread", NULL);
  trace2d_timer_stop(timer);
  trace2d_thread_exit();
  return NULL;
}

int main(int argc, char** argv) {
  trace2d_options options;
  trace2d_child_options child_options;
  const char* child_argv[] = {"true", NULL};
  const char* wrapped_argv[] = {"git", "version", NULL};
  pthread_t thread;
  pid_t pid = 0;
  int child_id;
  int counter = trace2d_counter_define("c", "items", 0);

  if (argc > 1 && strcmp(argv[1], "uninit") == 0) {
    /* Options without trace2d_options_init(): tracing stays off, and says why. */
    memset(&options, 0, sizeof options);
    options.exe = "never sent";
    printf("started %d\n", trace2d_start(argc, (const char* const*)argv, &options));
    printf("off_reason %s\n", trace2d_off_reason());
    return 0;
  }
  trace2d_options_init(&options);
  options.exe = "client-emitter-c 1.0";
  trace2d_start(argc, (const char* const*)argv, &options);
  printf("sid %s\n", trace2d_sid());
  printf("enabled %d\n", trace2d_enabled());
  fflush(stdout);

  trace2d_cmd_mode("c-mode");
  trace2d_def_param("c.param", "value");
  trace2d_def_repo(1, "/tmp/c-worktree");
  trace2d_region_enter("c", "outer", "a message");
  trace2d_data_string("c", "text", "value");
  trace2d_data_intmax("c", "number", (intmax_t)42);
  trace2d_data_json("c", "json", "{\"a\":[1,2]}");
  trace2d_region_leave("c", "outer", NULL);
  trace2d_error("failed %d times", 3);
  trace2d_printf("hello %s", "printf");
  trace2d_counter_add(counter, 2);

  if (pthread_create(&thread, NULL, worker, NULL) == 0) {
    pthread_join(thread, NULL);
  }

  trace2d_child_options_init(&child_options);
  child_options.child_class = "c-child";
  printf("child_code %d\n", trace2d_run_child(child_argv, &child_options, &pid));
  child_id = trace2d_child_start(wrapped_argv, NULL);
  trace2d_child_exit(child_id, 1234, trace2d_child_code(0));
  return trace2d_exit(0);
}
