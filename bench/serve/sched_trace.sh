#!/usr/bin/env bash
# bench/serve under a scheduler trace: runs run.sh with `perf sched record -a`, then reads, for
# the two 4-task rows, where the idle core time went (sched_idle.py). Needs perf (Debian's
# linux-perf), python3, and the right to trace the scheduler (root, or
# kernel.perf_event_paranoid at -1). The trace takes about 20 MB a second of the run.
#   bench/serve/sched_trace.sh [build dir (default build/bench)] [tasks per row (default 600)]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${1:-$root/build/bench}
tasks=${2:-600}
for tool in perf python3; do
  command -v "$tool" >/dev/null || { echo "sched_trace: $tool is not installed (Debian: apt-get install ${tool/perf/linux-perf})" >&2; exit 2; }
done
work=$(mktemp -d "${TMPDIR:-/tmp}/fiskai-sched-trace-XXXXXX")
trap 'rm -rf "$work"' EXIT
perf sched record -a -o "$work/sched.data" -- "$here/run.sh" "$build" "$tasks" >"$work/bench.txt" 2>"$work/perf.err" || {
  echo "sched_trace: perf sched record failed:" >&2; cat "$work/perf.err" >&2; exit 1; }
grep -E "^  1 process|^  4 processes|scaling:|busy in" "$work/bench.txt"
echo
perf sched timehist -i "$work/sched.data" -n >"$work/timehist.txt" 2>/dev/null
python3 "$here/sched_idle.py" "$work/timehist.txt"
