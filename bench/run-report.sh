# Sourced by bench/run: turns the tagged benchmark output ($raw) into
# bench/RESULTS.md. Every line of $raw is "TAG run=N KIND key=value ...",
# KIND being RESULT, STORAGE, OBJECT, LATENCY, ROUND, or (growth) INGEST,
# QUERY, SIZE, FILL, RETENTION.
# shellcheck shell=bash disable=SC2154  # (variables are bench/run's)

# values TAG KIND KEY: KEY of every TAG line of that KIND, one per run.
values() {
  awk -v tag="$1" -v kind="$2" -v key="$3" '
    $1 == tag && $3 == kind {
      for (i = 4; i <= NF; i++) if (index($i, key "=") == 1) { print substr($i, length(key) + 2); break }
    }' "$raw"
}

# ratios TAG_A KEY_A TAG_B KEY_B: per run, A's RESULT KEY_A over B's RESULT
# KEY_B (both measured in the same run).
ratios() {
  awk -v ta="$1" -v ka="$2" -v tb="$3" -v kb="$4" '
    function get(key,   i) { for (i = 4; i <= NF; i++) if (index($i, key "=") == 1) return substr($i, length(key) + 2); return "" }
    $1 == ta && $3 == "RESULT" { a[$2] = get(ka) }
    $1 == tb && $3 == "RESULT" { b[$2] = get(kb) }
    END { for (r in a) if ((r in b) && a[r] != "" && b[r] + 0 != 0) print a[r] / b[r] }' "$raw"
}

# median_of: the median of the numbers on stdin ("" when none).
median_of() {
  sort -g | awk '{ a[NR] = $1 } END { if (NR) print (NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2) }'
}

# cell FORMAT: "**median** (min–max)" of the numbers on stdin. FORMAT: int
# (thousands grouped), pct (a ratio as a percentage), or a printf format.
cell() {
  sort -g | awk -v f="$1" '
    function group(x,   s, r, sign) {
      s = sprintf("%.0f", x); sign = ""
      if (substr(s, 1, 1) == "-") { sign = "-"; s = substr(s, 2) }
      r = ""
      while (length(s) > 3) { r = "," substr(s, length(s) - 2) r; s = substr(s, 1, length(s) - 3) }
      return sign s r
    }
    function fmt(x) { if (f == "int") return group(x); if (f == "pct") return sprintf("%.0f%%", x * 100); return sprintf(f, x) }
    { a[NR] = $1 }
    END {
      if (!NR) { print "n/a"; exit }
      m = NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2
      if (NR == 1) printf "**%s**\n", fmt(m)
      else printf "**%s** (%s–%s)\n", fmt(m), fmt(a[1]), fmt(a[NR])
    }'
}

# met VALUE OP LIMIT: "yes" or "**no**".
met() {
  if [ -z "$1" ]; then echo "n/a"; return; fi
  awk -v v="$1" -v op="$2" -v l="$3" 'BEGIN {
    ok = (op == ">=") ? v >= l : (op == "<=") ? v <= l : (op == "<") ? v < l : v == l
    print ok ? "yes" : "**no**" }'
}

# The runs of TAG without loss, as "N of M".
lossless_runs() {
  local total clean
  total="$(awk -v t="$1" '$1 == t && ($3 == "RESULT" || $3 == "FAILED")' "$raw" | wc -l)"
  clean="$(awk -v t="$1" '$1 == t && $3 == "RESULT" && / loss=none/' "$raw" | wc -l)"
  echo "$clean of $total"
}

sum_of() { awk '{ s += $1 } END { printf "%.0f\n", s }'; }
max_of() { sort -g | tail -1; }

# "0 s: p50/p99, 1 s: ..." of the first latency run.
latency_series() {
  awk '$1 == "latency" && $2 == "run=1" && $3 == "SECOND" {
    for (i = 4; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
    out = out (out == "" ? "" : ", ") sprintf("%s s: %.0f / %.0f", v["second"], v["p50_ms"], v["p99_ms"])
  } END { print out "." }' "$raw"
}

machine_rows() {
  local cpu cores mem kernel commit dirty
  cpu="$(grep -m1 '^model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
  cores="$(grep -c '^processor' /proc/cpuinfo)"
  mem="$(awk '/^MemTotal:/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo)"
  kernel="$(cat /proc/sys/kernel/osrelease)"
  commit="$(git rev-parse HEAD 2>/dev/null || echo 'unknown (not a git checkout)')"
  dirty=""
  # The report itself (being written) does not count.
  if [ -n "$(git status --porcelain -- . ':!bench/RESULTS.md' 2>/dev/null)" ]; then
    dirty=" (dirty: uncommitted changes were measured)"
  fi
  echo "| CPU | $cpu |"
  echo "| cores | $cores (writers, readers and trace2d share them) |"
  echo "| RAM | $mem |"
  echo "| kernel | $kernel |"
  echo "| date | $started (UTC, start of the run) |"
  echo "| commit | \`$commit\`$dirty |"
  echo "| build | \`$bin\` ($(awk -F= '/^CMAKE_BUILD_TYPE:/ { print $2 }' "$bin/../CMakeCache.txt" 2>/dev/null || echo '?')), $(c++ --version | head -1) |"
  echo "| git | $(git --version) |"
  echo "| load average | $load_before before, $load_after after, up to $load_max at the start of a benchmark (1-minute) |"
  echo "| runs | $runs$([ "$quick" = 1 ] && echo ' (--quick: small sizes)') |"
}

throughput_row() {
  local shape="$1" label="$2"
  echo "| $label | $(values "$shape-trace2d" RESULT events_per_s | cell int) |" \
       "$(values "$shape-drain" RESULT events_per_s | cell int) |" \
       "$(ratios "$shape-trace2d" events_per_s "$shape-drain" events_per_s | cell pct) |" \
       "$(values "$shape-limit" RESULT events_per_s | cell int) |" \
       "$(ratios "$shape-trace2d" events_per_s "$shape-limit" events_per_s | cell pct) |" \
       "$(values "$shape-limit" RESULT encode_events_per_s | cell int) |"
}

loss_row() {
  local shape="$1" label="$2"
  echo "| $label | $(values "$shape-trace2d" RESULT events | head -1) | $(lossless_runs "$shape-trace2d") |" \
       "$(values "$shape-trace2d" RESULT stored | sum_of) / $(values "$shape-trace2d" RESULT events | sum_of) |" \
       "$(values "$shape-trace2d" RESULT rejects | sum_of) | $(values "$shape-trace2d" RESULT dropped_lines | sum_of) |" \
       "$(values "$shape-trace2d" RESULT kernel_drops | sum_of) | $(lossless_runs "$shape-drain") |" \
       "$(values "$shape-trace2d" RESULT peak_rss_mib | cell %.1f) |"
}

storage_section() {
  local shape="$1" label="$2" last
  last="$(values "$shape-trace2d" STORAGE db_bytes | wc -l)"
  echo "#### $label"
  echo
  echo "| | median (min–max) |"
  echo "|---|---|"
  echo "| database bytes (all tables and indexes, WAL checkpointed) | $(values "$shape-trace2d" STORAGE db_bytes | cell int) |"
  echo "| raw NDJSON bytes sent | $(values "$shape-trace2d" STORAGE raw_bytes | cell int) |"
  echo "| database bytes per event | $(values "$shape-trace2d" STORAGE bytes_per_event | cell %.1f) |"
  echo "| raw bytes per event | $(values "$shape-trace2d" STORAGE raw_bytes_per_event | cell %.1f) |"
  echo "| **database / raw** (target ≤ 0.5) | $(values "$shape-trace2d" STORAGE ratio_to_raw | cell %.3f) |"
  echo "| \`events\` rows compared with the sent lines (\`coalesce(raw, json)\`), mismatches | $(values "$shape-trace2d" STORAGE json_checked | sum_of), $(values "$shape-trace2d" STORAGE json_mismatched | sum_of) |"
  echo
  echo "What each table and index costs (\`dbstat\`, last run; objects under 0.5% omitted):"
  echo
  echo "| table or index | bytes | bytes per event | share |"
  echo "|---|---|---|---|"
  awk -v t="$shape-trace2d" -v r="run=$last" '
    function get(key,   i) { for (i = 4; i <= NF; i++) if (index($i, key "=") == 1) return substr($i, length(key) + 2); return "" }
    $1 == t && $2 == r && $3 == "OBJECT" && get("share") >= 0.005 {
      printf "| `%s` | %s | %s | %.1f%% |\n", get("name"), get("bytes"), get("bytes_per_event"), get("share") * 100 }' "$raw"
  echo
}

# The growth benchmark's sizes, as measured (its SIZE lines), smallest first.
growth_sizes_measured() {
  awk '$1 == "growth" && $3 == "SIZE" { for (i = 4; i <= NF; i++) if (index($i, "size=") == 1) print substr($i, 6) }' "$raw" |
    sort -g -u
}

# growth_field SIZE KIND KEY: KEY of growth's KIND line at SIZE (one line per size).
growth_field() {
  awk -v s="size=$1" -v kind="$2" -v key="$3" '
    $1 == "growth" && $3 == kind { hit = 0; for (i = 4; i <= NF; i++) if ($i == s) hit = 1
      if (hit) for (i = 4; i <= NF; i++) if (index($i, key "=") == 1) { print substr($i, length(key) + 2); exit } }' "$raw"
}

# ratio_of_medians TAG_A TAG_B KIND KEY: median of A over median of B.
ratio_of_medians() {
  local a b
  a="$(values "$1" "$3" "$4" | median_of)"
  b="$(values "$2" "$3" "$4" | median_of)"
  awk -v a="$a" -v b="$b" 'BEGIN { if (a == "" || b == "" || b + 0 == 0) print ""; else print a / b }'
}

pct_of() { awk -v r="$1" 'BEGIN { if (r == "") print "n/a"; else printf "%.0f%%", r * 100 }'; }

growth_section() {
  local sizes largest short_ratio long_ratio tree stats compare retention ratio
  sizes="$(growth_sizes_measured)"
  if [ -z "$sizes" ]; then
    echo "Not run (\`--growth-events 0\`, or it failed: see the raw output)."
    return
  fi
  largest="$(echo "$sizes" | tail -1)"
  short_ratio="$(ratio_of_medians "growth-ingest-short-$largest" growth-ingest-short-0 INGEST events_per_s)"
  long_ratio="$(ratio_of_medians "growth-ingest-long-$largest" growth-ingest-long-0 INGEST events_per_s)"
  tree="$(values "growth-query-tree-$largest" QUERY ms | median_of)"
  stats="$(values "growth-query-stats-1d-$largest" QUERY ms | median_of)"
  compare="$(values "growth-query-compare-$largest" QUERY ms | median_of)"
  retention="$(growth_rows RETENTION peak_file_over_start final_file_over_cap |
    awk -F'|' '{ gsub(/ /, ""); print ($2 > $3 ? $2 : $3) }')"
  cat <<GROWTH
One database filled in steps, and measured empty and at each size: trace2d
ingesting the short and the long shape into it (events/s as above, zero
loss checked), then the real \`trace2ctl\` (wall time from spawning it to
its exit, after one warm-up). The fill is trace2d's own parser, stitcher,
encoder and row writer run in the benchmark's process on the same traces,
half the events short processes and half long ones, each process with its
own SID and times: a steady volume a day, the largest size spanning 25
days (inside the default retention of 30), the newest just before now, so
\`--since 1d\` selects the same day's worth at every size.

| target | measured (median) | met |
|---|---|---|
| short shape at $(echo "$largest" | cell int | tr -d '*') events ≥ 90% of the empty database's | $(pct_of "$short_ratio") | $(met "$short_ratio" ">=" 0.9) |
| long shape at $(echo "$largest" | cell int | tr -d '*') events ≥ 90% of the empty database's | $(pct_of "$long_ratio") | $(met "$long_ratio" ">=" 0.9) |
| \`tree\` < 100 ms at $(echo "$largest" | cell int | tr -d '*') events | ${tree:-n/a} ms | $(met "$tree" "<" 100) |
| \`stats --since 1d\` < 1 s at $(echo "$largest" | cell int | tr -d '*') events | ${stats:-n/a} ms | $(met "$stats" "<" 1000) |
| \`compare\` (the last 7 days against the 28 before: all of the history) < 2 s at $(echo "$largest" | cell int | tr -d '*') events | ${compare:-n/a} ms | $(met "$compare" "<" 2000) |
| retention by size, at full rate: the file never grows past its size at the start (1% over the bound), and ends within the bound (the larger of peak / start and end / bound) | ${retention:-n/a} | $(met "$retention" "<=" 1) |

| database | events | sessions | file, MiB | short, events/s | short / empty | long, events/s | long / empty | runs without loss |
|---|---|---|---|---|---|---|---|---|
GROWTH
  for size in $sizes; do
    echo "| $(echo "$size" | cell int | tr -d '*') | $(growth_field "$size" SIZE events | cell int | tr -d '*') |" \
         "$(growth_field "$size" SIZE sessions | cell int | tr -d '*') |" \
         "$(growth_field "$size" SIZE db_bytes | awk '{ printf "%.0f", $1 / 1048576 }') |" \
         "$(values "growth-ingest-short-$size" INGEST events_per_s | cell int) |" \
         "$(pct_of "$(ratio_of_medians "growth-ingest-short-$size" growth-ingest-short-0 INGEST events_per_s)") |" \
         "$(values "growth-ingest-long-$size" INGEST events_per_s | cell int) |" \
         "$(pct_of "$(ratio_of_medians "growth-ingest-long-$size" growth-ingest-long-0 INGEST events_per_s)") |" \
         "$(awk -v s="$size" '$1 ~ "^growth-ingest-.*-" s "$" && $3 == "INGEST"' "$raw" | grep -c ' loss=none') of" \
         "$(awk -v s="$size" '$1 ~ "^growth-ingest-.*-" s "$" && $3 == "INGEST"' "$raw" | wc -l) |"
  done
  echo
  echo "\`trace2ctl\` wall time, ms (median (min–max) of $runs runs after a warm-up):"
  echo
  printf '| query |'
  for size in $sizes; do printf ' %s events |' "$(echo "$size" | cell int | tr -d '*')"; done
  printf '\n|---|'
  for size in $sizes; do printf -- '---|'; done
  echo
  local query label
  for query in tree stats-1d top-1d top compare compare-regions-all compare-status regions-1d regions-status regions-sid; do
    case "$query" in
      tree) label="\`tree <a fetch in the middle of the history>\`" ;;
      stats-1d) label="\`stats --since 1d\`" ;;
      top-1d) label="\`top --since 1d\`" ;;
      top) label="\`top\` (all history)" ;;
      compare) label="\`compare\` (the last 7 days against the 28 before)" ;;
      compare-regions-all) label="\`compare --regions all\` (every command's regions and children)" ;;
      compare-status) label="\`compare --cmd status\` (and its regions and children)" ;;
      regions-1d) label="\`sql\`: regions of the last day by category and label (\`regions\` ⋈ \`sessions\`)" ;;
      regions-status) label="\`sql\`: schema.md's slowest regions of \`git status\` (all history)" ;;
      regions-sid) label="\`sql\`: \`SELECT * FROM regions WHERE sid = …\`" ;;
    esac
    printf '| %s |' "$label"
    for size in $sizes; do printf ' %s |' "$(values "growth-query-$query-$size" QUERY ms | cell %.1f)"; done
    echo
  done
  echo
  echo "Retention at the largest size: \`--retention-max-db-bytes\` set to 99% of the file's size"
  echo "(WAL checkpointed, so that retention starts at once), then $(awk '$1 == "growth" && $3 == "INGEST" && / phase=retention/' "$raw" |
    awk '{ for (i = 4; i <= NF; i++) if (index($i, "events=") == 1) print substr($i, 8) }' | cell int | tr -d '*') events of the short shape at full rate; the main file and"
  echo "the WAL sampled every 5 ms:"
  echo
  echo "| file at the start, bytes | bound | peak file | peak WAL | peak / start | file at the end | end / bound | sessions deleted | events/s | loss |"
  echo "|---|---|---|---|---|---|---|---|---|---|"
  growth_rows RETENTION start_file_bytes cap_bytes peak_file_bytes peak_wal_bytes peak_file_over_start \
    final_file_bytes final_file_over_cap sessions_deleted events_per_s loss
  echo
  echo "The fill itself (not a target: one thread, no sockets):"
  echo
  echo "| up to | events added | seconds | events/s |"
  echo "|---|---|---|---|"
  growth_rows FILL size added seconds events_per_s
}

# growth_rows KIND KEY...: a table row of the KEYs of each of growth's KIND lines.
growth_rows() {
  local kind="$1"
  shift
  awk -v kind="$kind" -v keys="$*" '$1 == "growth" && $3 == kind {
    for (i = 4; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
    n = split(keys, k, " "); row = "|"
    for (j = 1; j <= n; j++) row = row " " v[k[j]] " |"
    print row }' "$raw"
}

write_report() {
  local short_ratio long_rate long_ratio dgram_rate dgram_drops c_minus_b p99 rss_short rss_long idle_rss
  local storage_long storage_short all_runs clean_runs export_rate export_short export_long
  local dgram_ratio dir_ratio rss_dir
  short_ratio="$(ratios short-trace2d events_per_s short-drain events_per_s | median_of)"
  long_rate="$(values long-trace2d RESULT events_per_s | median_of)"
  long_ratio="$(ratios long-trace2d events_per_s long-limit events_per_s | median_of)"
  dgram_rate="$(values dgram-trace2d RESULT events_per_s | median_of)"
  dgram_drops="$(values dgram-trace2d RESULT kernel_drops | sum_of)"
  dgram_ratio="$(ratios dgram-trace2d events_per_s dgram-drain events_per_s | median_of)"
  dir_ratio="$(ratios dir-trace2d events_per_s dir-drain events_per_s | median_of)"
  rss_dir="$(values dir-trace2d RESULT peak_rss_mib | median_of)"
  c_minus_b="$(values git-round ROUND c_minus_b_pp | median_of)"
  p99="$(values latency LATENCY p99_ms | median_of)"
  rss_short="$(values short-trace2d RESULT peak_rss_mib | median_of)"
  rss_long="$(values long-trace2d RESULT peak_rss_mib | median_of)"
  idle_rss="$(values idle RESULT rss_mib | median_of)"
  storage_long="$(values long-trace2d STORAGE ratio_to_raw | median_of)"
  storage_short="$(values short-trace2d STORAGE ratio_to_raw | median_of)"
  export_rate="$(values export RESULT spans_per_s | median_of)"
  export_short="$(ratios short-export events_per_s short-trace2d events_per_s | median_of)"
  export_long="$(ratios long-export events_per_s long-trace2d events_per_s | median_of)"
  all_runs="$(awk '$3 == "RESULT" || $3 == "INGEST" || $3 == "FAILED"' "$raw" | wc -l)"
  clean_runs="$(awk '($3 == "RESULT" || $3 == "INGEST") && / loss=none/' "$raw" | wc -l)"

  cat <<HEAD
# trace2d benchmark results

Written by \`bench/run --runs $runs$([ "$quick" = 1 ] && echo ' --quick')\` (see [README.md](README.md)); do not
edit by hand, run it again. Every figure is the median of the runs, with
min–max in parentheses, and each ratio is taken between figures measured in
the **same run** (then its median over the runs).

## Machine

| | |
|---|---|
$(machine_rows)

## Targets of issue 6

| target | measured (median) | met |
|---|---|---|
| shape (i) ≥ 80% of the raw drain limit | $(awk -v r="$short_ratio" 'BEGIN { printf "%.0f%%", r * 100 }') | $(met "$short_ratio" ">=" 0.8) |
| shape (ii) ≥ 500,000 events/s | $(echo "${long_rate:-0}" | cell int | tr -d '*') events/s | $(met "$long_rate" ">=" 500000) |
| shape (ii) ≥ 50% of the storage limit | $(awk -v r="$long_ratio" 'BEGIN { printf "%.0f%%", r * 100 }') | $(met "$long_ratio" ">=" 0.5) |
| dgram ≥ 200,000 events/s | $(echo "${dgram_rate:-0}" | cell int | tr -d '*') events/s | $(met "$dgram_rate" ">=" 200000) |
| dgram: no kernel drops | $dgram_drops in all runs | $(met "$dgram_drops" "==" 0) |
| cost to git: trace2d ≤ directory on tmpfs + 1 point | C − B = $c_minus_b points | $(met "$c_minus_b" "<=" 1) |
| latency p99 < 250 ms at half of shape (i)'s peak | $p99 ms | $(met "$p99" "<" 250) |
| peak RSS ≤ 64 MiB at full ingest, shape (i) | $rss_short MiB | $(met "$rss_short" "<=" 64) |
| peak RSS ≤ 64 MiB at full ingest, shape (ii) | $rss_long MiB | $(met "$rss_long" "<=" 64) |
| RSS ≤ 256 MiB with $idle_connections idle connections | $idle_rss MiB | $(met "$idle_rss" "<=" 256) |
| database ≤ 0.5× raw NDJSON, shape (ii) | $storage_long× | $(met "$storage_long" "<=" 0.5) |
| database ≤ 0.5× raw NDJSON, shape (i) | $storage_short× | $(met "$storage_short" "<=" 0.5) |
| zero loss (every benchmark run) | $clean_runs of $all_runs runs | $(met "$clean_runs" "==" "$all_runs") |

## Targets of issue 12 (OTLP export)

| target | measured (median) | met |
|---|---|---|
| export ≥ 200,000 spans/s to a discarding loopback receiver | $(echo "${export_rate:-0}" | cell int | tr -d '*') spans/s | $(met "$export_rate" ">=" 200000) |
| ingest with the export on ≥ 85% of the same run's ingest without, shape (i) | $(awk -v r="$export_short" 'BEGIN { printf "%.0f%%", r * 100 }') | $(met "$export_short" ">=" 0.85) |
| the same, shape (ii) | $(awk -v r="$export_long" 'BEGIN { printf "%.0f%%", r * 100 }') | $(met "$export_long" ">=" 0.85) |

## Targets of issue 15 (performance, round 2)

| target | measured (median) | met |
|---|---|---|
| shape (i), short processes, ≥ 80% of the raw drain limit | $(pct_of "$short_ratio") | $(met "$short_ratio" ">=" 0.8) |
| shape (ii), long processes, ≥ 75% of the storage limit | $(pct_of "$long_ratio") | $(met "$long_ratio" ">=" 0.75) |
| dgram ≥ 90% of the datagram drain limit | $(pct_of "$dgram_ratio") | $(met "$dgram_ratio" ">=" 0.9) |
| directory ≥ 70% of its drain limit | $(pct_of "$dir_ratio") | $(met "$dir_ratio" ">=" 0.7) |
| cost to git: trace2d ≤ directory on tmpfs + 1 point | C − B = $c_minus_b points | $(met "$c_minus_b" "<=" 1) |
| peak RSS ≤ 64 MiB at full ingest, shape (i) / directory | $rss_short / $rss_dir MiB | $(met "$rss_short" "<=" 64) / $(met "$rss_dir" "<=" 64) |
| database ≤ 0.5× raw NDJSON, long / short | $storage_long× / $storage_short× | $(met "$storage_long" "<=" 0.5) / $(met "$storage_short" "<=" 0.5) |
| zero loss (every benchmark run) | $clean_runs of $all_runs runs | $(met "$clean_runs" "==" "$all_runs") |

The growth targets (throughput at the largest size, \`tree\`, \`stats\`,
retention by size) are in [Growth](#growth).

Where a target is missed, [docs/architecture.md](../docs/architecture.md#where-the-time-goes)
shows where the time goes, measured with per-thread CPU times, perf,
callgrind and heaptrack, and what would move each figure.

## Ingest throughput

Events per second from the first write until the last event is committed
(trace2d: visible to a reader of its database, polled every millisecond) or
read (the drain reader). The payload is real git traces: the 35 processes of
\`tests/data/traces\` (7 to 60 events, 20 on average, captured from git
2.39.5) for (i), dgram and dir, each replayed process with a fresh SID; for
(ii) the 4,553-event \`git rebase\` process of \`bench/data/rebase_long.jsonl\`.

- **raw drain limit**: the same bytes from the same writers, read into
  /dev/null by \`drain_reader\` (one thread: epoll for stream sockets,
  recvmmsg for datagrams, inotify + read + unlink for the directory);
- **storage limit**: the same payload parsed, stitched and encoded by
  trace2d's own code into WriteBatches beforehand, then only RowWriter writes
  and commits timed (50,000 rows per transaction) into a fresh database
  made by \`store::open_for_writing\`;
- **parse+stitch+encode**: the rate of that untimed preparation, one thread:
  the ceiling of trace2d's pipeline thread.

| shape | trace2d | raw drain limit | trace2d / drain | storage limit | trace2d / storage | parse+stitch+encode |
|---|---|---|---|---|---|---|
$(throughput_row short "(i) short: 64 writers, a connection per process")
$(throughput_row long "(ii) long: 16 connections, a 4,553-event process each")
$(throughput_row dgram "dgram: 20 writers, a datagram per event, blocking")
$(throughput_row dir "dir: $dir_files files renamed into a watched directory")

### Where trace2d's CPU went

CPU time (user + system) of each of trace2d's threads during the ingest
runs above (\`/proc/<pid>/task/*/stat\`, read before trace2d stops), in µs
per event. The main thread runs the datagram receiver and the directory
watcher, start-up and signals; the stream thread accepts and reads every
stream connection.

| shape | stream thread | parse thread | store thread | main thread | all |
|---|---|---|---|---|---|
$(for shape in short long dgram dir; do
    echo "| $shape | $(values "$shape-trace2d" THREADS stream_us_per_event | cell %.2f) |" \
         "$(values "$shape-trace2d" THREADS parse_us_per_event | cell %.2f) |" \
         "$(values "$shape-trace2d" THREADS store_us_per_event | cell %.2f) |" \
         "$(values "$shape-trace2d" THREADS main_us_per_event | cell %.2f) |" \
         "$(awk -v tag="$shape-trace2d" '$1 == tag && $3 == "THREADS" { t = 0
             for (i = 4; i <= NF; i++) { split($i, kv, "="); t += kv[2] } print t }' "$raw" | cell %.2f) |"
  done)

### Loss

Stored must equal sent, with no rejects, no lines dropped at the memory
bound, no kernel drops, and trace2d exiting 0 (dir: the directory emptied).

| shape | events per run | runs without loss | stored / sent (all runs) | rejects | dropped lines | kernel drops | drain runs without loss | trace2d peak RSS, MiB |
|---|---|---|---|---|---|---|---|---|
$(loss_row short "(i) short")
$(loss_row long "(ii) long")
$(loss_row dgram "dgram")
$(loss_row dir "dir")

## Latency

Shape (i) with the writers paced to half of its median peak
($(echo "${peak:-0}" | cell int | tr -d '*') events/s), so $(echo "$half" | cell int | tr -d '*') events/s. Each event's \`time\` is set to the wall
clock just before its \`write()\` (git's own meaning of \`time\`); a reader
polls \`sessions.event_count\` every millisecond and notes when each event
first becomes visible. Latency = first visible − \`time\` stored with it.

| | median (min–max) |
|---|---|
| events/s achieved by the writers | $(values latency LATENCY achieved_events_per_s | cell int) |
| events measured (those with a \`time\`) | $(values latency LATENCY measured | cell int) |
| p50, ms | $(values latency LATENCY p50_ms | cell %.1f) |
| **p99, ms** (target < 250) | $(values latency LATENCY p99_ms | cell %.1f) |
| max, ms | $(values latency LATENCY max_ms | cell %.1f) |
| trace2d's queue peak (read, not yet committed; bound 16 MiB by default), MiB | $(values latency RESULT queue_peak_mib | cell %.1f) |
| runs without loss | $(lossless_runs latency) |

How it evolves through the run (run 1; by second of sending, p50 / p99 ms):
$(latency_series)

## Memory

| | median (min–max) |
|---|---|
| peak RSS (VmHWM) at full ingest, shape (i), MiB (target ≤ 64) | $(values short-trace2d RESULT peak_rss_mib | cell %.1f) |
| peak RSS (VmHWM) at full ingest, shape (ii), MiB (target ≤ 64) | $(values long-trace2d RESULT peak_rss_mib | cell %.1f) |
| peak RSS, dgram, MiB | $(values dgram-trace2d RESULT peak_rss_mib | cell %.1f) |
| peak RSS, dir, MiB | $(values dir-trace2d RESULT peak_rss_mib | cell %.1f) |
| trace2d's queue peak (read, not yet committed; bound 16 MiB by default), shape (i), MiB | $(values short-trace2d RESULT queue_peak_mib | cell %.1f) |
| trace2d's queue peak, shape (ii), MiB | $(values long-trace2d RESULT queue_peak_mib | cell %.1f) |
| RSS after start-up, MiB | $(values idle RESULT baseline_rss_mib | cell %.1f) |
| **RSS with $idle_connections idle connections**, MiB (target ≤ 256) | $(values idle RESULT rss_mib | cell %.1f) |
| per idle connection, KiB | $(values idle RESULT per_connection_kib | cell %.2f) |

Each idle connection sent its \`version\` event (committed before the
reading) and stays open.

## Storage

Database size after the run, trace2d stopped and the WAL checkpointed
(\`PRAGMA wal_checkpoint(TRUNCATE)\` from a new connection):
\`page_count × page_size\`, all tables and indexes. Every stored event's
\`coalesce(raw, json)\` from the \`events\` view is compared with the line
sent.

$(storage_section long "Shape (ii), long processes")

$(storage_section short "Shape (i), short processes")

## Cost to git

$git_commands real git commands per variant and round (\`status\`, \`log -n 20\`,
\`diff HEAD~1\`, \`rev-parse HEAD\` in turn) in a repository of 3,000 files
with 26 commits, run one after the other: (A) tracing off, (B)
\`GIT_TRACE2_EVENT\` = a directory on /dev/shm (emptied between rounds),
and \`GIT_TRACE2_EVENT=af_unix:stream:\` a running trace2d: (C) as it
starts by default, its parse, store and export threads under SCHED_BATCH
and its socket readers not (\`limits.batch_scheduling\`); (D) a second one
started under \`chrt --batch 0\`, every thread under SCHED_BATCH, as the
systemd unit's \`CPUSchedulingPolicy=batch\` runs it; (E) a third with
\`--no-batch-scheduling\`, every thread under the normal policy. The
variants take turns in blocks of $git_block commands, their order
rotating, so that drift falls on all five. Added wall time as a
percentage of A's; each round is a run. The same from the median command
of each kind (the sum of the four medians) is shown too: a single command
delayed by other load on the machine moves the totals, not the medians.

| | median (min–max) |
|---|---|
| A: ms per command, tracing off | $(values git-round ROUND a_ms_per_command | cell %.2f) |
| B: added wall time, directory on tmpfs, % of A | $(values git-round ROUND b_pct | cell %.2f) |
| C: added wall time, trace2d (default), % of A | $(values git-round ROUND c_pct | cell %.2f) |
| **C − B, percentage points** (target ≤ 1) | $(values git-round ROUND c_minus_b_pp | cell %.2f) |
| B, from the median command of each kind, % of A's | $(values git-round ROUND b_median_pct | cell %.2f) |
| C, from the median command of each kind, % of A's | $(values git-round ROUND c_median_pct | cell %.2f) |
| C − B from the medians, percentage points | $(values git-round ROUND c_minus_b_median_pp | cell %.2f) |
| **D − B** (the unit's way: the whole process under SCHED_BATCH), points | $(values git-round ROUND d_minus_b_pp | cell %.2f) |
| D − B from the medians, points | $(values git-round ROUND d_minus_b_median_pp | cell %.2f) |
| **E − B** (no SCHED_BATCH at all), points | $(values git-round ROUND e_minus_b_pp | cell %.2f) |
| E − B from the medians, points | $(values git-round ROUND e_minus_b_median_pp | cell %.2f) |
| runs without loss (every process in trace2d, every trace file written) | $(lossless_runs git) |

## OTLP export

The exporter emptying a backlog (\`export_bench\`: copies of the real git
traces imported, every session queued, trace2d started with
\`--otlp-endpoint\` on \`otlp_sink\`, a loopback receiver that reads each
request and answers 200; timed from trace2d's start until the queue is
empty; a backlog of $export_events events, so that trace2d's start-up, about
45 ms, is not a tenth of the time), and the ingest benchmark with the export
on (into the same kind of receiver) against the same run's ingest without it.

| | median (min–max) |
|---|---|
| spans/s | $(values export RESULT spans_per_s | cell int) |
| spans per CPU-second of the exporter's two threads (\`trace2d-otlp\` delivering, \`t2d-otlp-load\` loading) | $(values export RESULT spans_per_cpu_s | cell int) |
| spans per CPU-second of the busier of the two (the rate two free cores allow) | $(values export RESULT spans_per_busier_thread_cpu_s | cell int) |
| spans exported | $(values export RESULT spans | cell int) |
| sessions exported | $(values export RESULT exported_sessions | cell int) |
| spans per request | $(ratios export spans export requests | cell %.0f) |
| spans/s over OTLP/gRPC (\`--protocol grpc\`, into \`otlp_grpc_sink\`) | $(values export-grpc RESULT spans_per_s | cell int) |
| spans per CPU-second of the exporter's two threads, over OTLP/gRPC | $(values export-grpc RESULT spans_per_cpu_s | cell int) |
| shape (i): events/s with the export on | $(values short-export RESULT events_per_s | cell int) |
| shape (i): with / without the export, same run | $(ratios short-export events_per_s short-trace2d events_per_s | cell pct) |
| shape (ii): events/s with the export on | $(values long-export RESULT events_per_s | cell int) |
| shape (ii): with / without the export, same run | $(ratios long-export events_per_s long-trace2d events_per_s | cell pct) |

## Growth

$(growth_section)

$client_section

## Commands

Run from the repository's root; \`bench/run\` ran each of these $runs times
(the cost to git once, with \`--rounds\`).

\`\`\`sh
$(cut -d' ' -f2- "$commands")
\`\`\`

<details><summary>Raw output of every run</summary>

\`\`\`
$(grep -v -e " OBJECT " -e " SECOND " "$raw")
\`\`\`

</details>
HEAD
}
