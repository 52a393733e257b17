#!/usr/bin/env bash
# fisk-ai-serve end to end: a one-tool task over a2a (fake LLM answering at once) at 1 and 4
# slots and with 4 worker processes, p50/p90/tasks/s, beside the floor it is made of (two
# fake-LLM round trips, one spawn of the tool, the journal's syncs for a new session, the NATS
# round trip and the flush before the ack), each part alone and all of them as one bare task in
# a task's order (the floor the goal is read against); who uses the cores; then the workers'
# memory and the host's steal. sched_trace.sh runs this under a scheduler trace and reads where
# the 4-task rows' idle core time goes.
#   bench/serve/run.sh [build dir (default build/bench, configured if missing)] [tasks per row (default 300)]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${1:-$root/build/bench}
tasks=${2:-300}
if [[ ! -f $build/build.ninja ]]; then
  (cd "$root" && cmake --preset bench >/dev/null)
fi
cmake --build "$build" --target serve_bench fisk-ai-serve fisk-demo fiskai-fake-llm -j2 >/dev/null
"$build/bench/serve/serve_bench" "$build/apps/fisk-ai-serve/fisk-ai-serve" \
  "$(find "$build" -name fiskai-fake-llm -type f -perm -u+x | head -n1)" "$build/examples/demo/fisk-demo" "$tasks"
