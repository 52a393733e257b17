#!/usr/bin/env bash
# Builds the optimised benchmark preset and prints the JetStream journal append p50 beside
# a bare nats.c js_Publish of the same bytes (goal: at most 1.3x).
# Usage: bench/journal/run-jetstream.sh [appends]
set -euo pipefail
cd "$(dirname "$0")/../.."
cmake --preset bench >/dev/null
cmake --build --preset bench --target journal_jetstream_bench
./build/bench/bench/journal/journal_jetstream_bench "${1:-2000}"
