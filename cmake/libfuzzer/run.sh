#!/usr/bin/env bash
# Runs one libFuzzer binary for a bounded time over a scratch copy of its seed corpora.
#   run.sh <binary> <seconds> <dictionary or ""> <seed file or directory>...
# Fails on any crash, leak, UB report, timeout or out-of-memory; the input that caused it
# is kept beside the binary (<binary>-crash-..., -timeout-..., -oom-...).
set -euo pipefail
binary=$1; seconds=$2; dict=$3; shift 3
corpus=$(mktemp -d)
trap 'rm -rf "$corpus"' EXIT
n=0
for seed in "$@"; do
  n=$((n + 1))
  if [[ -d $seed ]]; then cp -r "$seed" "$corpus/seeds$n"; else cp "$seed" "$corpus/"; fi
done
args=(-max_total_time="$seconds" -max_len=65536 -timeout=30 -rss_limit_mb=4096 -print_final_stats=1
      -artifact_prefix="$binary-")
[[ -n $dict ]] && args+=(-dict="$dict")
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
"$binary" "${args[@]}" "$corpus"
echo "libfuzzer: ran $(basename "$binary") for ${seconds}s with no crash, leak, UB report or timeout"
