#!/usr/bin/env bash
# Formats every C++ source of the project with clang-format (.clang-format at the top),
# or with --check, fails naming each file that is not formatted. third_party/ is left as
# its authors wrote it. CTest runs the check (test `format`).
set -euo pipefail
cd "$(dirname "$0")/.."
clang_format=${CLANG_FORMAT:-$(command -v clang-format-14 || command -v clang-format || true)}
if [[ -z $clang_format ]]; then
  echo "format: clang-format not found; install clang-format-14 (scripts/setup-debian.sh does)" >&2
  exit 1
fi
mapfile -t files < <(find libs apps tests examples bench \( -name node_modules -o -name fuzz_corpus \) -prune -o \
  \( -name '*.cpp' -o -name '*.hpp' \) -print | sort)
if [[ ${1:-} == --check ]]; then
  bad=0
  for f in "${files[@]}"; do
    if ! "$clang_format" --dry-run --Werror "$f" >/dev/null 2>&1; then
      echo "format: $f is not formatted; run scripts/format.sh" >&2
      bad=1
    fi
  done
  ((bad == 0)) && echo "format: ${#files[@]} files formatted"
  exit $bad
fi
"$clang_format" -i "${files[@]}"
