#!/bin/sh
# clang-tidy's checks (.clang-tidy) on the product's C++ sources changed
# since they were last set (the last commit of .clang-tidy), the working
# tree's changes included: every source passed them when they were set, so
# this keeps it so at the cost of the changed files only (a few seconds
# each, with Asio's headers). Sources the build compiles in unity files
# (the test suites) are not in its compilation database and are skipped.
#
#   tests/format/check_tidy.sh SOURCE_DIR BUILD_DIR
# BUILD_DIR holds compile_commands.json. Exits 0 when clean, 1 with the
# findings, 77 when there is nothing to check (not a git checkout, no
# history of .clang-tidy, no compilation database).
set -eu
cd "$1"
build=$(cd "$2" && pwd)
tidy=$(command -v clang-tidy-14 || command -v clang-tidy || true)
if [ -z "$tidy" ]; then
  echo "clang-tidy not found (Debian: clang-tidy-14, which .ci/deps installs)" >&2
  exit 1
fi
if ! git rev-parse --git-dir >/dev/null 2>&1; then
  echo "not a git checkout: no changed sources to check"
  exit 77
fi
base=$(git log -1 --format=%H -- .clang-tidy)
if [ -z "$base" ]; then
  echo "no commit of .clang-tidy in this history: no changed sources to check"
  exit 77
fi
if [ ! -f "$build/compile_commands.json" ]; then
  echo "no $build/compile_commands.json: nothing to check against"
  exit 77
fi
files=""
for file in $( { git diff --name-only --diff-filter=AMR "$base" -- '*.cpp'; git ls-files --others --exclude-standard -- '*.cpp'; } | sort -u); do
  if [ -f "$file" ] && grep -qF "\"file\": \"$PWD/$file\"" "$build/compile_commands.json"; then
    files="$files $file"
  fi
done
if [ -z "$files" ]; then
  echo "no product source changed since $base"
  exit 0
fi
# clang with libstdc++ has C++20 coroutines, but Asio looks for them only in
# libc++'s <experimental/coroutine>: say they are there (GCC, which builds
# trace2d, needs no such help).
# shellcheck disable=SC2086
status=0
output=$("$tidy" -p "$build" --quiet --extra-arg=-DBOOST_ASIO_HAS_CO_AWAIT=1 \
  --extra-arg=-DBOOST_ASIO_HAS_STD_COROUTINE=1 $files 2>&1) || status=$?
if [ "$status" -ne 0 ]; then
  printf '%s\n' "$output" | grep -E -A3 'warning:|error:' >&2 || printf '%s\n' "$output" >&2
  echo "clang-tidy's checks fail on sources changed since $base" >&2
  exit 1
fi
echo "sources changed since $base: clang-tidy's checks pass ($(echo $files | wc -w) files)"
