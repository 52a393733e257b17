#!/usr/bin/env bash
# Agent loop benchmark: 10-iteration sessions with the file journal against fiskai-fake-llm;
# prints the loop's own overhead per iteration beside the journal's fsync floor.
#   bench/agent/run.sh [build dir (default build/bench, configured if missing)] [sessions (default 50)]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${1:-$root/build/bench}
sessions=${2:-50}
if [[ ! -f $build/build.ninja ]]; then
  (cd "$root" && cmake --preset bench >/dev/null)
fi
cmake --build "$build" --target agent_bench fiskai-fake-llm -j2 >/dev/null
bench_bin=$(find "$build" -name agent_bench -type f -perm -u+x | head -n1)
fake_bin=$(find "$build" -name fiskai-fake-llm -type f -perm -u+x | head -n1)
"$bench_bin" "$fake_bin" "$sessions"
