#!/usr/bin/env bash
# Installs every Debian 12 package that the build, the tests and the demo need.
# Idempotent: packages already present are left alone, and apt is not touched at all
# when nothing is missing. Run as root (or with sudo available).
set -euo pipefail

packages=(
  build-essential cmake ninja-build ccache pkg-config git
  # Debian's default Boost is 1.74, which has no Boost.JSON: take the 1.81 packages by name.
  libboost1.81-dev libboost-json1.81-dev libboost-url1.81-dev
  libboost-filesystem1.81-dev libboost-system1.81-dev
  libnats-dev nats-server
  # the knowledge base's index (SQLite with FTS5)
  libsqlite3-dev
  # clang and its runtime: the a2a decoder is fuzzed with libFuzzer
  clang libclang-rt-14-dev
  # the source format is checked in CI (scripts/format.sh --check)
  clang-format-14
  libyaml-cpp-dev libre2-dev libcli11-dev libfmt-dev libssl-dev
  # the TLS tests make their CA and certificates with the openssl CLI
  openssl ca-certificates
  catch2
  nodejs npm curl procps
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done
# Node and npm may come from outside Debian (a preinstalled toolchain); accept those.
if command -v node >/dev/null && command -v npm >/dev/null; then
  filtered=()
  for p in "${missing[@]}"; do [[ $p == nodejs || $p == npm ]] || filtered+=("$p"); done
  missing=("${filtered[@]}")
fi

if ((${#missing[@]} == 0)); then
  echo "setup: all packages present"
  exit 0
fi

SUDO=""
if [[ $(id -u) != 0 ]]; then SUDO=sudo; fi
echo "setup: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
