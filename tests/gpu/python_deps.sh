#!/usr/bin/env bash
# Here (Debian 12, with network to Debian's archive): unpack the Debian
# packages of gpuwatch's C++ dependencies into .pydeps/root, for a machine that
# cannot download (the GPU machine). Carry .pydeps there; python_install.sh
# builds with it.
set -euo pipefail
cd "$(dirname "$0")/../.."
mkdir -p .pydeps/debs
(cd .pydeps/debs && apt-get download libfmt-dev libfmt9 libyaml-cpp-dev libyaml-cpp0.7 \
   nlohmann-json3-dev libcli11-dev libsqlite3-dev libsqlite3-0 libncurses-dev libncursesw6 libtinfo6 libncurses6)
rm -rf .pydeps/root && mkdir -p .pydeps/root
for f in .pydeps/debs/*.deb; do dpkg -x "$f" .pydeps/root; done
# Debian puts the runtime libraries in /lib (merged /usr): beside their links.
cp -a .pydeps/root/lib/x86_64-linux-gnu/. .pydeps/root/usr/lib/x86_64-linux-gnu/
for l in .pydeps/root/usr/lib/x86_64-linux-gnu/*.so; do  # absolute links made relative
  target=$(readlink "$l") && [ "${target#/}" != "$target" ] && ln -sf "$(basename "$target")" "$l"
done
du -sh .pydeps
