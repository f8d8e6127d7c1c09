#!/usr/bin/env bash
# Installs every build and test dependency of rulestream from Debian 12 packages.
# Nothing else is downloaded: the build itself never reaches the network.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git clang-format
  clang libclang-rt-14-dev llvm
  libtbb-dev
  libcurl4-openssl-dev libpugixml-dev libpcre2-dev
  libprotobuf-dev protobuf-compiler
  zlib1g-dev
  libboost1.81-dev libboost-program-options1.81-dev libboost-json1.81-dev libboost-url1.81-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  python3
  # The Python module (python/): pybind11, numpy and pytest for Debian's python3.
  python3-dev python3-pybind11 pybind11-dev python3-numpy python3-pytest
  # `rulestream report` inlines Chart.js 3 from its installed file; its tests parse the page
  # with libxml2, render it in headless Chromium and decode the screenshot with libpng.
  libjs-chart.js
  libxml2-dev libpng-dev chromium
  # `serve --coordinator redis://...` talks to Redis with hiredis; the coordinator's tests start
  # a redis-server of their own on 127.0.0.1.
  libhiredis-dev redis-server
)

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ "${#missing[@]}" -gt 0 ]; then
  echo "rulestream: installing ${missing[*]}"
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
else
  echo "rulestream: all build dependencies are installed"
fi
