#!/usr/bin/env bash
# Builds the optimised benchmark preset and prints the knowledge index's figures.
# Usage: bench/knowledge/run.sh [documents] [queries]
set -euo pipefail
cd "$(dirname "$0")/../.."
cmake --preset bench >/dev/null
cmake --build --preset bench --target knowledge_bench
./build/bench/bench/knowledge/knowledge_bench "${1:-10000}" "${2:-1000}"
