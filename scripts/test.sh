#!/usr/bin/env bash
# Builds and runs the whole test suite. With no arguments: the developer preset
# (warnings as errors). Name presets to run others, e.g. `scripts/test.sh dev asan`.
# Installs the Debian packages and npm test peers it needs first (idempotent).
set -euo pipefail
cd "$(dirname "$0")/.."

presets=("$@")
((${#presets[@]})) || presets=(dev)

bash scripts/setup-debian.sh

for preset in "${presets[@]}"; do
  echo "== preset ${preset}: configure and build"
  cmake --preset "${preset}" >/dev/null
  cmake --build --preset "${preset}" -j "$(nproc)"
  echo "== preset ${preset}: test"
  ctest --preset "${preset}"
done
