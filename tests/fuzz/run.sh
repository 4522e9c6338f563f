#!/bin/sh
# Runs every fuzzer of tests/fuzz for a bounded time (CI, or by hand).
#
#   tests/fuzz/run.sh [BUILD_DIR] [SECONDS]     defaults: build/fuzz, $FUZZ_SECONDS or 60
#
# Each fuzzer starts from its committed seeds (tests/fuzz/corpus/<fuzzer>/)
# plus seeds cut from tests/data (real traces, the bad-input corpus), and
# writes what it learns to BUILD_DIR/fuzz-corpus/<fuzzer>/, emptied first:
# libFuzzer replays its whole corpus before the clock starts, so a corpus
# kept from run to run would make every run longer (long campaigns: see
# README.md). A crash, a leak, a timeout or a broken invariant leaves its
# input in BUILD_DIR/fuzz-artifacts/ and makes this script exit non-zero.
set -eu
cd "$(dirname "$0")/../.."
build="${1:-build/fuzz}"
seconds="${2:-${FUZZ_SECONDS:-60}}"
max_len="${FUZZ_MAX_LEN:-65536}"

seeds="$build/fuzz-seeds"
rm -rf "$seeds"
mkdir -p "$seeds/fuzz_framer_parser" "$seeds/fuzz_stitcher" "$build/fuzz-artifacts"

# Framer + parser: whole traces (many lines, split anywhere), each line of
# them on its own, and every bad-input case.
n=0
for trace in tests/data/traces/*.jsonl tests/data/synthetic/*.jsonl tests/data/producers/*.jsonl; do
  head -c "$max_len" "$trace" > "$seeds/fuzz_framer_parser/$(basename "$trace")"
  while IFS= read -r line; do
    n=$((n + 1))
    printf '%s\n' "$line" > "$seeds/fuzz_framer_parser/line-$n"
  done < "$trace"
done
for case in tests/data/bad/*.jsonl; do
  head -c "$max_len" "$case" > "$seeds/fuzz_framer_parser/bad-$(basename "$case")"
done
# Stitcher: its input steers a generator, so any bytes do; the traces' give
# it a varied start.
for trace in tests/data/traces/*.jsonl tests/data/producers/*.jsonl; do
  head -c 4096 "$trace" > "$seeds/fuzz_stitcher/$(basename "$trace")"
done

# The fuzzers run side by side (one core each), each logging to its own
# file, printed when both are done.
for fuzzer in fuzz_framer_parser fuzz_stitcher; do
  corpus="$build/fuzz-corpus/$fuzzer"
  rm -rf "$corpus"
  mkdir -p "$corpus"
  echo "== $fuzzer: ${seconds}s" >&2
  ( "$build/bin/$fuzzer" -max_total_time="$seconds" -max_len="$max_len" -timeout=30 \
      -rss_limit_mb=2560 -print_final_stats=1 \
      -artifact_prefix="$build/fuzz-artifacts/$fuzzer-" \
      "$corpus" "tests/fuzz/corpus/$fuzzer" "$seeds/$fuzzer" > "$build/$fuzzer.log" 2>&1
    echo $? > "$build/$fuzzer.status" ) &
done
wait

status=0
for fuzzer in fuzz_framer_parser fuzz_stitcher; do
  cat "$build/$fuzzer.log" >&2
  if [ "$(cat "$build/$fuzzer.status")" != 0 ]; then
    echo "== $fuzzer FAILED: see $build/fuzz-artifacts/" >&2
    status=1
  fi
done
exit $status
