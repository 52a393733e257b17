#!/usr/bin/env bash
# Builds and runs the whole test suite, by default once: under the sanitizer preset
# (AddressSanitizer + UndefinedBehaviorSanitizer, warnings as errors), which runs every
# test, the install consumer and the libFuzzer runs included. Name presets to run those
# instead, e.g. `scripts/test.sh dev` for the faster unsanitised debug build.
# Installs the Debian packages and npm test peers it needs first (idempotent).
set -euo pipefail
cd "$(dirname "$0")/.."

presets=("$@")
((${#presets[@]})) || presets=(asan)

bash scripts/setup-debian.sh
# Paths relative to this checkout in ccache's keys, so any clone reuses what another built.
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$PWD}" CCACHE_NOHASHDIR=1
# The interop peers (the official MCP TypeScript SDK), pinned by the lockfile.
npm ci --prefix tests/interop --no-audit --no-fund --loglevel=error
# The official MCP conformance suite and the Node 22 binary it needs.
npm ci --prefix tests/conformance --no-audit --no-fund --loglevel=error

for preset in "${presets[@]}"; do
  echo "== preset ${preset}: configure and build"
  cmake --preset "${preset}" >/dev/null
  cmake --build --preset "${preset}" -j "$(nproc)"
  echo "== preset ${preset}: test"
  ctest --preset "${preset}"
done
