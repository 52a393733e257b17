#!/usr/bin/env bash
# Builds the optimised benchmark preset and prints every benchmark's figures, each beside
# its floor or its peer, then the two speed targets together: MCP tools/call CPU per call
# (children included) against a bare posix_spawn + read + reap, beside the TypeScript SDK
# server; the a2a tool call p50 against bare NATS request-reply + spawn; the LLM provider
# beside the Anthropic SDK; the HTTP client; and the session journal beside its floors.
# Usage: bench/run.sh [iterations for the tool-layer rows] [seconds per MCP row]
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-debian.sh >/dev/null
cmake --preset bench >/dev/null
cmake --build --preset bench
out=$(mktemp)
trap 'rm -f "$out"' EXIT
echo "== tool layer"
./build/bench/bench/toolkit_bench "${1:-300}"
echo
echo "== MCP tools/call: fisk-ai-mcp vs the official TypeScript SDK"
bench/mcp/run.sh build/bench "${2:-5}" | tee -a "$out"
echo
echo "== a2a decode and validate: fiskai::a2a vs npm ajv"
bench/a2a-validate/run.sh build/bench 2
echo
echo "== a2a tool calls over NATS: round trip and throughput beside their floors"
./build/bench/bench/a2a/a2a_bench 300 400 | tee -a "$out"
echo
echo "== LLM provider: fisk-ai's Anthropic provider vs the official TypeScript SDK, against fiskai-fake-llm"
bench/llm/run.sh build/bench 3000
echo
echo "== HTTP client per call on loopback (libs/net)"
./build/bench/bench/net/net_bench 2000
echo
echo "== session journal: file appends beside write + fdatasync, fold of 10,000 records"
./build/bench/bench/journal/journal_bench 3000 "${TMPDIR:-/tmp}"
echo
echo "== session journal on JetStream: append p50 beside a bare nats.c js_Publish"
./build/bench/bench/journal/journal_jetstream_bench 2000
echo
echo "== fisk-ai-serve: a one-tool task end to end over a2a beside its floor, at 1 and 4 workers"
bench/serve/run.sh build/bench 300
echo
echo "== the work queue: jobs/s enqueue -> stored answer, beside the same tasks over a2a"
bench/queue/run.sh build/bench 300
echo
echo "== speed targets (1.3x of the floor)"
grep -E 'floor: bare posix_spawn \+ read \+ reap  |x the floor|target 1.3x$' "$out" | sed 's/^ */  /'
