#!/usr/bin/env bash
# Installs what gpuheat builds and tests with, only what is missing: Mesa's software drivers
# (llvmpipe for EGL/GL/GLES, lavapipe for Vulkan), the glvnd development links, Xvfb, and a
# Rust toolchain new enough for the workspace. Safe to run any number of times.
#
# `install-deps.sh --print-cargo` prints the cargo to build with (the Makefile's CARGO).
# `install-deps.sh --bench` also installs what `make bench` compares with: apitrace (the
# baseline tracer) and perf (to profile what the capture costs).
set -euo pipefail

# The oldest Rust the workspace builds with: wgpu 30 and naga 30 declare rust-version 1.87.
# Debian 12's own `cargo`/`rustc` are 1.63; its `cargo-web`/`rustc-web` (bookworm-security,
# 1.96 today) are new enough and install as /usr/bin/cargo and /usr/bin/rustc.
min_rust=1.87

# The version of the cargo at $1 as MAJOR.MINOR; nothing when it does not run.
cargo_version() {
  "$1" --version 2>/dev/null | sed -n 's/^cargo \([0-9]*\)\.\([0-9]*\).*/\1.\2/p'
}

# Whether version $1 (MAJOR.MINOR) is at least $min_rust.
new_enough() {
  [ -n "$1" ] && [ "$(printf '%s\n%s\n' "$min_rust" "$1" | sort -V | head -1)" = "$min_rust" ]
}

# The first cargo that is new enough: on PATH, rustup's in ~/.cargo/bin, or Debian's.
find_cargo() {
  local c
  for c in "$(command -v cargo 2>/dev/null || true)" "$HOME/.cargo/bin/cargo" /usr/bin/cargo; do
    if [ -n "$c" ] && [ -x "$c" ] && new_enough "$(cargo_version "$c")"; then
      echo "$c"
      return 0
    fi
  done
  return 1
}

if [ "${1:-}" = "--print-cargo" ]; then
  find_cargo || echo cargo
  exit 0
fi

sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive

packages=(
  libegl1 libegl-mesa0 libgles2 libgl1 libgl1-mesa-dri libglx-mesa0
  libegl-dev libgles-dev libgl-dev
  # The fixed_function example's GL 1.x entry points (glvnd's libOpenGL).
  libopengl-dev
  # Vulkan: lavapipe, vk.xml (the layer's wrappers are generated from it), the loader's
  # development link, vkcube, and gfxreconstruct (a trace to compare calls per frame with).
  mesa-vulkan-drivers libvulkan-dev vulkan-tools gfxreconstruct
  xvfb xauth mesa-utils glmark2-es2-x11 strace util-linux
  pkg-config build-essential ca-certificates curl make
  # The viewer's window (winit) loads these X11 client libraries at run time.
  libx11-6 libx11-xcb1 libxcursor1 libxrandr2 libxi6 libxinerama1 libxkbcommon0 libxkbcommon-x11-0
  # Programs nobody here wrote that the tests attach to (GLX, desktop GL, GTK 4, Qt Quick),
  # and xwd to see that they keep rendering; a test whose program is missing is skipped.
  glmark2-x11 gtk-4-examples qmlscene qml-module-qtquick2 x11-apps
  # ShivaVG-es (../shared/real-programs), a VG library the tests build with its build.sh:
  # gcc (build-essential), the X11, EGL and GLES 3 headers.
  libx11-dev
  # A fixed-function GL game (issue 24: its draws' geometry).
  neverball
)
if [ "${1:-}" = "--bench" ]; then
  packages+=(apitrace linux-perf)
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

updated=""
if ((${#missing[@]})); then
  echo "install-deps: installing ${missing[*]}"
  $sudo apt-get update -qq
  updated=1
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if cargo=$(find_cargo); then
  # A new-enough cargo that is not on PATH (rustup's, not yet in PATH) still builds: the
  # Makefile finds it with --print-cargo.
  command -v cargo >/dev/null 2>&1 && [ "$(command -v cargo)" = "$cargo" ] ||
    echo "install-deps: building with $cargo"
  exit 0
fi

old=$(command -v cargo 2>/dev/null || true)
if [ -n "$old" ] && [ "$old" != /usr/bin/cargo ]; then
  # Not Debian's: replacing it behind its owner's back would surprise them.
  echo "install-deps: $old is Rust $(cargo_version "$old"), older than $min_rust; update it (\`rustup update stable\`)" >&2
  exit 1
fi

[ -n "$updated" ] || $sudo apt-get update -qq
candidate() {
  apt-cache policy "$1" 2>/dev/null | sed -n 's/^ *Candidate: \([0-9]*\.[0-9]*\).*/\1/p'
}
# Debian versions the cargo package apart from Rust (cargo 0.66 is Rust 1.65): ask rustc.
if new_enough "$(candidate rustc)"; then
  echo "install-deps: installing Rust $(candidate rustc) (cargo, rustc) from Debian"
  $sudo apt-get install -y -qq cargo rustc >/dev/null
elif new_enough "$(candidate rustc-web)"; then
  # cargo-web and rustc-web conflict with (and so replace) Debian's older cargo and rustc.
  echo "install-deps: Debian's Rust is $(candidate rustc), older than $min_rust: installing cargo-web/rustc-web $(candidate rustc-web)"
  $sudo apt-get install -y -qq cargo-web rustc-web >/dev/null
else
  echo "install-deps: no Rust $min_rust or newer here or in apt (on Debian 12, enable bookworm-security for cargo-web; or install rustup from https://rustup.rs)" >&2
  exit 1
fi
find_cargo >/dev/null || {
  echo "install-deps: installed Rust, but no cargo $min_rust or newer runs" >&2
  exit 1
}
