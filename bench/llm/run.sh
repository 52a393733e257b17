#!/usr/bin/env bash
# LLM provider benchmark: fisk-ai's Anthropic provider (bench/llm/llm_bench.cpp) beside the
# official Anthropic TypeScript SDK (@anthropic-ai/sdk, pinned in package-lock.json), both
# calling the same fiskai-fake-llm from one process, at 1 and 8 calls in flight. Prints
# calls/s, p50 and the client's peak RSS side by side, and the ratios against the goal
# (3x the SDK's calls/s, under 1/5 of its memory).
#   bench/llm/run.sh [build dir (default build/bench, configured and built if missing)] [calls per row]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${1:-$root/build/bench}
calls=${2:-5000}
if [[ ! -f $build/build.ninja ]]; then
  (cd "$root" && cmake --preset bench >/dev/null)
fi
cmake --build "$build" --target llm_bench fiskai-fake-llm -j2 >/dev/null
bench_bin=$(find "$build" -name llm_bench -type f -perm -u+x | head -n1)
fake_bin=$(find "$build" -name fiskai-fake-llm -type f -perm -u+x | head -n1)
npm ci --prefix "$here" --no-audit --no-fund --loglevel=error >/dev/null
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT

"$fake_bin" --script "$here/script.json" --port 0 > "$work/fake.out" &
for _ in $(seq 1 200); do
  grep -q 'listening' "$work/fake.out" 2>/dev/null && break
  sleep 0.05
done
port=$(sed -n 's/^fake-llm listening on 127.0.0.1:\([0-9]*\)$/\1/p' "$work/fake.out")
[[ -n $port ]] || { echo "fiskai-fake-llm did not start" >&2; exit 1; }
url="http://127.0.0.1:$port"

field() { node -e 'console.log(JSON.parse(process.argv[1])[process.argv[2]])' "$1" "$2"; }
printf '%-10s %9s %10s %9s %8s %8s\n' client in_flight calls/s p50_ms rss_mb errors
summary=()
for inflight in 1 8; do
  ours=$("$bench_bin" "$url" "$calls" "$inflight")
  sdk=$(node "$here/sdk_bench.mjs" "$url" "$calls" "$inflight")
  for row in "$ours" "$sdk"; do
    printf '%-10s %9s %10.0f %9.3f %8.1f %8s\n' "$(field "$row" client)" "$inflight" "$(field "$row" calls_per_s)" \
      "$(field "$row" p50_ms)" "$(field "$row" rss_mb)" "$(field "$row" errors)"
  done
  summary+=("$(node -e '
    const [a, b] = [JSON.parse(process.argv[1]), JSON.parse(process.argv[2])];
    const speed = a.calls_per_s / b.calls_per_s, memory = a.rss_mb / b.rss_mb;
    console.log(`in flight ${a.inflight}: ${speed.toFixed(2)}x the SDK calls/s (goal 3x: ${speed >= 3 ? "met" : "MISSED"}), ` +
      `${memory.toFixed(3)} of its RSS (goal < 0.2: ${memory < 0.2 ? "met" : "MISSED"})`);' "$ours" "$sdk")")
done
echo
printf '%s\n' "${summary[@]}"
