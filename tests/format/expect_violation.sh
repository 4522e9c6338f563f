#!/bin/sh
# Proves check_format.sh catches a badly formatted change, passes a formatted
# one, and leaves lines older than the style alone: in a scratch repository
# with this project's .clang-format.
#   tests/format/expect_violation.sh SOURCE_DIR SCRATCH_DIR
set -eu
source_dir=$(cd "$1" && pwd)
scratch=$2
rm -rf "$scratch"
mkdir -p "$scratch"
cd "$scratch"
git init -q .
git config user.email test@example.invalid
git config user.name test
printf 'int   old ( ) { return 1; }\n' > old.cpp  # before the style: left alone
git add old.cpp && git commit -qm old
cp "$source_dir/.clang-format" .
git add .clang-format && git commit -qm style
printf 'int formatted() {\n  return 2;\n}\n' > new.cpp
git add new.cpp && git commit -qm formatted
if ! "$source_dir/tests/format/check_format.sh" . > out.txt 2>&1; then
  cat out.txt
  echo "FAIL: a formatted change (and an old unformatted file) was refused"
  exit 1
fi
printf 'int   unformatted ( ) { return 3; }\n' >> new.cpp
if "$source_dir/tests/format/check_format.sh" . > out.txt 2>&1; then
  cat out.txt
  echo "FAIL: an unformatted change passed"
  exit 1
fi
grep -q "unformatted" out.txt || { cat out.txt; echo "FAIL: the difference is not shown"; exit 1; }
echo "the check refuses an unformatted change and passes the rest"
