#!/bin/sh
# The C and C++ lines changed since the style was last set (the last commit
# of .clang-format or client/.clang-format) are formatted as it says, the
# working tree's changes included. Older lines are left as they are: the
# style came after them, and reformatting everything would bury history.
#
#   tests/format/check_format.sh SOURCE_DIR
# Exits 0 when formatted, 1 with the differences, 77 when there is nothing
# to compare (not a git checkout, or no history of the style).
set -eu
cd "$1"
format_diff=$(command -v clang-format-diff-14 || command -v clang-format-diff || true)
if [ -z "$format_diff" ]; then
  echo "clang-format-diff not found (Debian: clang-format-14, which .ci/deps installs)" >&2
  exit 1
fi
if ! git rev-parse --git-dir >/dev/null 2>&1; then
  echo "not a git checkout: no changed lines to check"
  exit 77
fi
base=$(git log -1 --format=%H -- .clang-format client/.clang-format)
if [ -z "$base" ]; then
  echo "no commit of .clang-format in this history: no changed lines to check"
  exit 77
fi
changes=$(git diff -U0 --no-color "$base" -- '*.cpp' '*.hpp' '*.c' '*.h' | "$format_diff" -p1)
if [ -n "$changes" ]; then
  printf '%s\n' "$changes"
  echo "Lines changed since $base are not formatted; to format them:" >&2
  echo "  git diff -U0 $base | $(basename "$format_diff") -p1 -i" >&2
  exit 1
fi
echo "lines changed since $base: formatted"
