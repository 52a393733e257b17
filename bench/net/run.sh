#!/usr/bin/env bash
# Builds the optimised benchmark preset and prints the HTTP client's per-call figures.
# Usage: bench/net/run.sh [calls per run]
set -euo pipefail
cd "$(dirname "$0")/../.."
cmake --preset bench >/dev/null
cmake --build --preset bench --target net_bench
./build/bench/bench/net/net_bench "${1:-2000}"
