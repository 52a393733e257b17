#!/usr/bin/env bash
# Builds the MCP request-path fuzz target with clang's libFuzzer under ASan and UBSan (the
# library's sources instrumented; the toolkit linked as built), and runs it for a bounded
# time over a scratch copy of the seed corpus.
#   libfuzzer.sh <clang++> <binary dir> <mcpserver source dir> <toolkit include dir> <toolkit library> <seconds> <seed dir>
#                <gocompat include dir> <gocompat library>
# -fno-sanitize=function: clang 14 cannot emit that check for Asio's coroutines
# ("Cannot represent a difference across sections").
set -euo pipefail
cxx=$1; bin=$2; src=$3; toolkit_include=$4; toolkit_lib=$5; seconds=$6; seeds=$7; gocompat_include=$8; gocompat_lib=$9
out="$bin/mcp_libfuzzer"
"$cxx" -std=c++20 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize=function -fno-sanitize-recover=undefined \
  -DVALIJSON_USE_EXCEPTIONS=1 -I"$src/include" -I"$src/src" -I"$toolkit_include" -I"$gocompat_include" \
  "$(dirname "$0")/fuzz_http.cpp" "$src"/src/*.cpp "$toolkit_lib" "$gocompat_lib" \
  -lboost_json -lboost_filesystem -lre2 -lfmt -lcrypto -lpthread -o "$out"
corpus=$(mktemp -d)
trap 'rm -rf "$corpus"' EXIT
cp "$seeds"/* "$corpus"/
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
"$out" -max_total_time="$seconds" -max_len=65536 -timeout=10 -print_final_stats=1 -artifact_prefix="$bin/" "$corpus"
echo "libfuzzer: ran ${seconds}s over the MCP request path with no crash, leak or UB report"
