#!/usr/bin/env bash
# Here (Debian 12, with network to Debian's archive): unpack the Debian
# packages of gpuwatch's C++ dependencies into .pydeps/root, for a machine that
# cannot download (the GPU machine). Carry .pydeps there; python_install.sh
# builds with it.
set -euo pipefail
cd "$(dirname "$0")/../.."
mkdir -p .pydeps/debs
(cd .pydeps/debs && apt-get download libfmt-dev libfmt9 libyaml-cpp-dev libyaml-cpp0.7 \
   nlohmann-json3-dev libcli11-dev libsqlite3-dev libsqlite3-0)
rm -rf .pydeps/root && mkdir -p .pydeps/root
for f in .pydeps/debs/*.deb; do dpkg -x "$f" .pydeps/root; done
du -sh .pydeps
