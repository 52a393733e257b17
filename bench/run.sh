#!/usr/bin/env bash
# Builds the optimised benchmark preset and prints every benchmark's figures.
# Usage: bench/run.sh [iterations]
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-debian.sh >/dev/null
cmake --preset bench >/dev/null
cmake --build --preset bench
./build/bench/bench/toolkit_bench "${1:-300}"
