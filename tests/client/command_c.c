/* client-command-c: git's start/finish split through the C ABI, from a C99
 * program (-Wall -Wextra -Wpedantic -Werror): `git hash-object --stdin`
 * started with a pipe to its stdin and one from its stdout, a region sent
 * while it runs, its input written and its output read, then finished
 * twice (the second call must not wait or report again). Prints "sid",
 * "start", "pid", "hash", "code", "again"; with the argument "missing", a
 * program that does not exist: "start", "pid", "code". */
#define _POSIX_C_SOURCE 200809L
#include <trace2d/client.h>

#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int missing(void) {
  const char* argv[] = {"/nonexistent/git", NULL};
  trace2d_child_process child;
  trace2d_child_process_init(&child);
  child.pipe_stdout = 1;
  printf("start %d\n", trace2d_start_command(argv, NULL, &child));
  printf("pid %d\nstdout_fd %d\n", (int)child.pid, child.stdout_fd);
  printf("code %d\n", trace2d_finish_command(&child, 0));
  return trace2d_exit(0);
}

int main(int argc, char** argv) {
  const char* git_argv[] = {"git", "hash-object", "--stdin", NULL};
  trace2d_child_process child;
  char hash[128];
  size_t got = 0;
  ssize_t n = 0;

  trace2d_start(argc, (const char* const*)argv, NULL);
  printf("sid %s\n", trace2d_sid());
  fflush(stdout);
  if (argc > 1 && strcmp(argv[1], "missing") == 0) {
    return missing();
  }
  trace2d_child_process_init(&child);
  child.pipe_stdin = 1;
  child.pipe_stdout = 1;
  printf("start %d\n", trace2d_start_command(git_argv, NULL, &child));
  printf("pid %d\n", (int)child.pid);
  trace2d_region_enter("command", "meanwhile", NULL);
  if (write(child.stdin_fd, "hello\n", 6) != 6) {
    return 1;
  }
  close(child.stdin_fd);
  trace2d_region_leave("command", "meanwhile", NULL);
  while ((n = read(child.stdout_fd, hash + got, sizeof hash - 1 - got)) > 0) {
    got += (size_t)n;
  }
  close(child.stdout_fd);
  hash[got] = '\0';
  hash[strcspn(hash, "\n")] = '\0';
  printf("hash %s\n", hash);
  printf("code %d\n", trace2d_finish_command(&child, 0));
  printf("again %d\n", trace2d_finish_command(&child, 0));
  return trace2d_exit(0);
}
