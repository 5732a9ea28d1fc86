#!/usr/bin/env bash
# Installs what gpuwatch needs to build and test on Debian 12 (run as root).
# Skips apt entirely when everything is already there.
set -euo pipefail
PACKAGES=(
  build-essential cmake ninja-build pkg-config clang clang-format lld python3
  libcli11-dev libfmt-dev nlohmann-json3-dev libyaml-cpp-dev
  libgtest-dev libgmock-dev libbenchmark-dev libsqlite3-dev libncurses-dev libssl-dev zlib1g-dev
  libcpp-httplib-dev sqlite3 chromium prometheus curl python3-yaml python3-kubernetes
  python3-dev python3-venv python3-pybind11 pybind11-dev python3-pytest python3-torch
  zsh fish groff-base man-db
)
missing=()
# Node and npm build the web report (esbuild) and drive the browser tests
# (playwright-core); any node >= 18 does, Debian's included.
command -v node >/dev/null && command -v npm >/dev/null || PACKAGES+=(nodejs npm)
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "gpuwatch: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# The web bundle's packages (pinned in web/package-lock.json), from npm.
cd "$(dirname "$0")/.."
if [ ! -f web/node_modules/.package-lock.json ] ||
   [ web/package-lock.json -nt web/node_modules/.package-lock.json ]; then
  echo "gpuwatch: npm ci in web/"
  npm ci --prefix web --no-audit --no-fund --loglevel=error >/dev/null
fi
