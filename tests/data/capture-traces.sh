#!/bin/bash
# Captures real Trace2 EVENT traces from the installed git into
# tests/data/traces/<name>.jsonl (all processes of one command, in the order
# git created their files). Run by hand when refreshing the corpus; tests
# and benchmarks only read the files it wrote.
#
#   tests/data/capture-traces.sh [OUTPUT_DIR]
#   tests/data/capture-traces.sh --long-only [OUTPUT_DIR]
#
# --long-only captures only the long process of the benchmarks
# (bench/data/rebase_long.jsonl, see capture_long below), leaving the
# corpus that golden tests depend on untouched.
set -euo pipefail

long_only=0
if [ "${1:-}" = "--long-only" ]; then long_only=1; shift; fi
here="$(cd "$(dirname "$0")" && pwd)"
out="${1:-$here/traces}"
long_out="${1:-$(cd "$here/../.." && pwd)/bench/data}"
mkdir -p "$out"
work="$(mktemp -d /tmp/t2d-capture-XXXXXX)"
trap 'rm -rf "$work"' EXIT

export GIT_CONFIG_NOSYSTEM=1 HOME="$work/home" GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.com \
       GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@example.com GIT_TRACE2_EVENT_NESTING=2
mkdir -p "$HOME"
unset GIT_TRACE2_EVENT GIT_TRACE2_PARENT_SID GIT_TRACE2_BRIEF GIT_TRACE2_EVENT_BRIEF

# capture NAME [ENV=VALUE...] -- COMMAND...: run COMMAND with tracing into a
# fresh directory and concatenate the per-process files.
capture() {
  local name="$1"; shift
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done
  shift
  local dir="$work/trace-$name"
  rm -rf "$dir"; mkdir -p "$dir"
  env "${envs[@]}" GIT_TRACE2_EVENT="$dir" "$@" >/dev/null 2>&1 || true
  # Files sorted by SID start time (their names begin with it).
  ls -1 "$dir" | sort | while read -r f; do cat "$dir/$f"; done > "$out/$name.jsonl"
  echo "$name: $(wc -l < "$out/$name.jsonl") events, $(ls "$dir" | wc -l) processes" >&2
}

# One long git process for bench/ (ingest shape ii): a rebase replaying 80
# commits runs in a single process and, with nesting 10, emits about 4,500
# events (a region pair per step of every commit it picks). Written to
# bench/data/ (1.1 MB), not to the corpus of tests/data/traces.
capture_long() {
  local out="$long_out"
  mkdir -p "$out"
  git init -q "$work/long"
  (
    cd "$work/long"
    for d in $(seq 1 20); do
      mkdir -p "d$d"
      for f in $(seq 1 20); do echo "$f" > "d$d/f$f"; done
    done
    git add -A && git commit -qm "initial"
    for i in $(seq 1 80); do echo "c $i" >> "d$((i % 20 + 1))/f1"; git commit -qam "c $i"; done
    capture rebase_long GIT_TRACE2_EVENT_NESTING=10 -- git rebase -q --force-rebase HEAD~80
  )
}
if [ "$long_only" = 1 ]; then
  capture_long
  exit 0
fi

# A repository with a few thousand files and some history, and a clone of it.
git init -q "$work/upstream"
cd "$work/upstream"
for d in $(seq 1 40); do
  mkdir -p "dir$d"
  for f in $(seq 1 60); do echo "file $d/$f" > "dir$d/f$f.txt"; done
done
git add -A && git commit -qm "initial"
for i in $(seq 1 20); do echo "change $i" >> dir1/f1.txt; git commit -qam "change $i"; done
git clone -q "$work/upstream" "$work/repo"
cd "$work/upstream"
for i in $(seq 21 30); do echo "change $i" >> "dir2/f$i.txt"; git commit -qam "change $i"; done

cd "$work/repo"
echo "edit" >> dir3/f3.txt
echo "new" > untracked.txt
git config alias.st '!git status --short'
git config alias.co checkout
mkdir -p .git/hooks
printf '#!/bin/sh\ngit rev-parse HEAD >/dev/null\n' > .git/hooks/pre-commit
chmod +x .git/hooks/pre-commit

capture status -- git status
capture status_brief GIT_TRACE2_EVENT_BRIEF=1 -- git status
capture status_nesting5 GIT_TRACE2_EVENT_NESTING=5 -- git status
capture fetch GIT_TRACE2_EVENT_NESTING=5 -- git fetch --no-auto-gc origin
capture alias_shell -- git st
capture alias_git -- git co -q -b topic
capture hook_commit -- git commit -qam "with hook"
capture parent_sid "GIT_TRACE2_PARENT_SID=ci-job 42/step 7" -- git rev-parse HEAD
capture invalid_utf8 -- git rev-parse $'\xff' $'\xc3\x28'
capture log -- git log --oneline -n 50
capture diff -- git diff HEAD~3
capture rev_parse -- git rev-parse --show-toplevel
capture clone GIT_TRACE2_EVENT_NESTING=5 -- git clone -q --no-local "$work/upstream" "$work/clone"
capture gc GIT_TRACE2_EVENT_NESTING=10 -- git gc --quiet
capture failing_command -- git checkout no-such-branch
# exec: git-shell replaces itself with git-upload-pack (same pid; the
# exec'd git's SID is git-shell's child), which answers an empty request.
echo 0000 | capture git_shell_exec -- git-shell -c "git-upload-pack '$work/upstream'"
mkdir -p "$out/../exec" && mv "$out/git_shell_exec.jsonl" "$out/../exec/"

# Threads: git 2.39 loads index extensions on a thread (th01:unknown) when
# the index is large and has an offset table.
git init -q "$work/big"
cd "$work/big"
for d in $(seq 1 120); do
  mkdir -p "d$d"
  for f in $(seq 1 100); do echo "$f" > "d$d/$f"; done
done
git add -A && git commit -qm "many files"
git -c index.recordOffsetTable=true -c index.recordEndOfIndexEntries=true \
  update-index --index-version 4 --really-refresh
capture status_index_threads GIT_TRACE2_EVENT_NESTING=5 -- git -c index.threads=4 status

capture_long
