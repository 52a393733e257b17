#!/usr/bin/env bash
# The work queue: jobs/s from enqueue to the stored answer at 1 and 4 slots and with 4 worker
# processes, beside the same one-tool tasks sent over the a2a channel to the same workers.
#   bench/queue/run.sh [build dir (default build/bench, configured if missing)] [tasks per row (default 300)]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${1:-$root/build/bench}
tasks=${2:-300}
if [[ ! -f $build/build.ninja ]]; then
  (cd "$root" && cmake --preset bench >/dev/null)
fi
cmake --build "$build" --target queue_bench fisk-ai-serve fisk-demo fiskai-fake-llm -j2 >/dev/null
"$build/bench/queue/queue_bench" "$build/apps/fisk-ai-serve/fisk-ai-serve" \
  "$(find "$build" -name fiskai-fake-llm -type f -perm -u+x | head -n1)" "$build/examples/demo/fisk-demo" "$tasks"
