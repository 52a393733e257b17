#!/usr/bin/env bash
# Builds the optimised benchmark preset and prints the a2a figures beside their floors.
# Usage: bench/a2a/run.sh [sequential calls] [calls per throughput run]
set -euo pipefail
cd "$(dirname "$0")/../.."
bash scripts/setup-debian.sh >/dev/null
cmake --preset bench >/dev/null
cmake --build --preset bench --target a2a_bench
./build/bench/bench/a2a/a2a_bench "${1:-300}" "${2:-400}"
