#!/usr/bin/env bash
# Builds the optimised benchmark preset and prints the session journal figures: file
# appends per second beside the write + fdatasync floor on the same disk, and fold / load
# of a 10,000-record journal.
# Usage: bench/journal/run.sh [appends] [directory on the disk to measure]
set -euo pipefail
cd "$(dirname "$0")/../.."
cmake --preset bench >/dev/null
cmake --build --preset bench --target journal_bench
./build/bench/bench/journal/journal_bench "${1:-3000}" "${2:-${TMPDIR:-/tmp}}"
