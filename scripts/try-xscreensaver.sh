#!/usr/bin/env bash
# Attach to every OpenGL hack of xscreensaver-gl (about 80 programs nobody here wrote:
# GL 1.x immediate mode, display lists that move the matrices, glBitmap text, vertex
# arrays, shaders, FBOs) as a user would: each is started in a window under a private Xvfb,
# attached to while it runs, captured, reported, and checked to be alive and still
# animating afterwards. Run from the project root after `cargo build --release --workspace`.
#   scripts/try-xscreensaver.sh [--heat] [--timing auto|isolated|deferred] [--frames N] [HACK...]
# Columns: attach exit code, alive/frozen/dead after the detach, the first captured frame
# (calls/draws/work, serialized GPU ms), draws without geometry in the session (with their
# first reason), and with --heat the report's remainders line. Installs xscreensaver-gl
# and x11-apps when missing.
set -u
G=${GPUHEAT:-target/release/gpuheat}
[ -x "$G" ] || { echo "no $G: run cargo build --release --workspace first"; exit 2; }
extra=(); frames=2; names=()
while [ $# -gt 0 ]; do
  case $1 in
    --heat) extra+=(--heat); shift ;;
    --timing) extra+=(--timing "$2"); shift 2 ;;
    --frames) frames=$2; shift 2 ;;
    *) names+=("$1"); shift ;;
  esac
done
dir=/usr/libexec/xscreensaver
need=()
[ -x "$dir/gears" ] || need+=(xscreensaver-gl)
command -v xwd >/dev/null || need+=(x11-apps)
command -v Xvfb >/dev/null || need+=(xvfb)
if [ ${#need[@]} -gt 0 ]; then
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}") \
    >/dev/null 2>&1 || { echo "could not install: ${need[*]}"; exit 2; }
fi
if [ ${#names[@]} -eq 0 ]; then
  for p in "$dir"/*; do
    # The GL hacks link libGL; the rest of the directory is helpers and scripts.
    [ -x "$p" ] && ldd "$p" 2>/dev/null | grep -q 'libGL\.so' && names+=("$(basename "$p")")
  done
fi
out=$(mktemp -d /tmp/try-xscreensaver.XXXXXX)
n=$((90 + RANDOM % 9)); Xvfb ":$n" -screen 0 1280x800x24 >/dev/null 2>&1 & xv=$!
export DISPLAY=":$n"; sleep 2
printf '%-16s %-6s %-8s %-24s %s\n' hack attach after "first frame" "without geometry; remainders"
for h in "${names[@]}"; do
  "$dir/$h" -window >"$out/$h.app.log" 2>&1 & pid=$!
  sleep 3
  if ! kill -0 $pid 2>/dev/null; then echo "$h: did not stay up (see $out/$h.app.log)"; continue; fi
  timeout 90 "$G" attach $pid --frames "$frames" --timeout 20 "${extra[@]}" -o "$out/$h.gpuheat" \
    >"$out/$h.attach.log" 2>&1
  rc=$?; sleep 1
  after=dead; kill -0 $pid 2>/dev/null && after=alive
  if [ $after = alive ]; then
    a=$(xwd -root -silent | md5sum); sleep 1; b=$(xwd -root -silent | md5sum)
    [ "$a" != "$b" ] || after=frozen
  fi
  report=$(timeout 60 "$G" report "$out/$h.gpuheat" 2>/dev/null)
  first=$(echo "$report" | awk '/frame +calls/{if ((getline) > 0 && $1 ~ /^[0-9]+$/) print $2"/"$3"/"$4", "$7" ms"; exit}')
  missing=$(echo "$report" | grep -m1 -E 'draws? without geometry' | sed 's/^ *//' | cut -c1-70)
  rest=$(echo "$report" | grep -m1 '^remainders' | cut -c1-60)
  printf '%-16s %-6s %-8s %-24s %s\n' "$h" "rc=$rc" "$after" "${first:-no frames}" "${missing:-0 without}${rest:+; $rest}"
  [ $rc -ne 0 ] && sed 's/^/          /' "$out/$h.attach.log" | tail -2
  kill $pid 2>/dev/null; wait $pid 2>/dev/null
done
kill $xv 2>/dev/null
echo "sessions and logs: $out"
