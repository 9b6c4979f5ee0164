#!/usr/bin/env bash
# Installs what gpuheat builds and tests with, only what is missing: Mesa's software drivers
# (llvmpipe for EGL/GL/GLES, lavapipe for Vulkan), the glvnd development links, Xvfb, and a
# Rust toolchain. Safe to run any number of times.
set -euo pipefail

packages=(
  libegl1 libegl-mesa0 libgles2 libgl1 libgl1-mesa-dri libglx-mesa0
  libegl-dev libgles-dev libgl-dev
  mesa-vulkan-drivers xvfb xauth mesa-utils glmark2-es2-x11 strace util-linux
  pkg-config build-essential ca-certificates curl
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if ((${#missing[@]})); then
  echo "install-deps: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if ! command -v cargo >/dev/null 2>&1; then
  if [ -x "$HOME/.cargo/bin/cargo" ]; then
    echo "install-deps: cargo is in ~/.cargo/bin; add it to PATH"
  else
    echo "install-deps: installing Rust (cargo) from Debian"
    sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get install -y -qq cargo rustc >/dev/null
  fi
fi
