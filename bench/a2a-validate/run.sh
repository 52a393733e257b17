#!/usr/bin/env bash
# a2a decode-and-validate throughput: fiskai::a2a (valijson) beside npm ajv, same
# messages, same schemas. Prints one table.
#   bench/a2a-validate/run.sh <build dir> [seconds per row]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${1:?build dir, e.g. build/bench}
seconds=${2:-2}
npm ci --prefix "$here" --no-audit --no-fund --loglevel=error >/dev/null
{
  "$build/bench/a2a_validate_bench" "$root/tests/a2a/golden" "$seconds"
  node "$here/ajv_bench.mjs" "$root/schemas" "$root/tests/a2a/golden" "$seconds"
} | node -e '
  const rows = require("fs").readFileSync(0, "utf8").trim().split("\n").map(JSON.parse);
  console.log("implementation".padEnd(26), "message".padEnd(26), "bytes".padStart(6), "msgs/s".padStart(10), "us/msg".padStart(8));
  rows.sort((a, b) => a.message.localeCompare(b.message) || a.impl.localeCompare(b.impl));
  for (const r of rows) console.log(r.impl.padEnd(26), r.message.padEnd(26), String(r.bytes).padStart(6), String(Math.round(r.per_second)).padStart(10), r.us_per_message.toFixed(2).padStart(8));
'
