#!/bin/sh
# Proves check_tidy.sh refuses a changed source that fails a check (a use
# after move), passes a clean one, and leaves sources older than
# .clang-tidy alone: in a scratch repository with this project's
# .clang-tidy and a compilation database of its own.
#   tests/format/expect_tidy_violation.sh SOURCE_DIR SCRATCH_DIR
set -eu
source_dir=$(cd "$1" && pwd)
scratch=$2
rm -rf "$scratch"
mkdir -p "$scratch"
cd "$scratch"
scratch=$(pwd)
git init -q .
git config user.email test@example.invalid
git config user.name test
cat > old.cpp <<'CPP'
#include <string>
#include <utility>
std::string old_moved(std::string s) { std::string t = std::move(s); return s + t; }
CPP
git add old.cpp && git commit -qm old
cp "$source_dir/.clang-tidy" .
git add .clang-tidy && git commit -qm checks
cat > new.cpp <<'CPP'
#include <string>
std::string clean(const std::string& s) { return s + "!"; }
CPP
git add new.cpp && git commit -qm clean
mkdir build
cat > build/compile_commands.json <<JSON
[
  {"directory": "$scratch", "command": "c++ -std=c++20 -c old.cpp", "file": "$scratch/old.cpp"},
  {"directory": "$scratch", "command": "c++ -std=c++20 -c new.cpp", "file": "$scratch/new.cpp"}
]
JSON
if ! "$source_dir/tests/format/check_tidy.sh" . build > out.txt 2>&1; then
  cat out.txt
  echo "FAIL: a clean change (and an old file that fails a check) was refused"
  exit 1
fi
cat >> new.cpp <<'CPP'
#include <utility>
std::string moved(std::string s) { std::string t = std::move(s); return s + t; }
CPP
if "$source_dir/tests/format/check_tidy.sh" . build > out.txt 2>&1; then
  cat out.txt
  echo "FAIL: a use after move passed"
  exit 1
fi
grep -q "bugprone-use-after-move" out.txt || { cat out.txt; echo "FAIL: the finding is not shown"; exit 1; }
echo "the check refuses a change that fails a check and passes the rest"
