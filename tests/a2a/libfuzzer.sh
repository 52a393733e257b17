#!/usr/bin/env bash
# Builds the a2a decode-and-validate fuzz target with clang's libFuzzer under ASan and
# UBSan, and runs it for a bounded time over a scratch copy of the seed corpora.
#   libfuzzer.sh <clang++> <binary dir> <a2a source dir> <gocompat include dir> <seconds> <seed dir>...
set -euo pipefail
cxx=$1; bin=$2; src=$3; gocompat_include=$4; seconds=$5; shift 5
mapfile -t sources < <(tr -d ',' < "$bin/libfuzzer_sources.txt" | sed '/^$/d')
out="$bin/a2a_libfuzzer"
root="$src/../.."  # valijson is vendored under third_party, beside its RE2 engine
"$cxx" -std=c++20 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
  -DVALIJSON_USE_EXCEPTIONS=1 -DVALIJSON_USE_BOOST_REGEX=1 -I"$src/include" -I"$src/src" -I"$gocompat_include" \
  -isystem "$root/third_party/valijson/include" -isystem "$root/third_party/valijson-re2" \
  "${sources[@]}" -lboost_json -lcrypto -lre2 -o "$out"
corpus=$(mktemp -d)
trap 'rm -rf "$corpus"' EXIT
for seeds in "$@"; do cp "$seeds"/* "$corpus"/; done
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
"$out" -max_total_time="$seconds" -max_len=1048576 -print_final_stats=1 -artifact_prefix="$bin/" "$corpus"
echo "libfuzzer: ran ${seconds}s over a2a decode and validate with no crash, leak or UB report"
