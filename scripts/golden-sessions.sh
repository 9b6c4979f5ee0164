#!/usr/bin/env bash
# Captures, once, the example sessions scripts/golden-outputs.sh runs both builds on: the
# examples in the modes the CLI's tests use (inspector/cli/tests/*.rs), a few frames each.
#
#   scripts/golden-sessions.sh DIR [BIN_DIR]
#
# BIN_DIR holds a build's `gpuheat`, `libgpuheat_agent.so` and example binaries as cargo lays
# them out in target/debug (default: /work/before, else this checkout's target/debug); the
# OpenVG examples (`cargo build -p gpuheat-openvg --examples`) are taken from $GOLDEN_VG_BIN
# (default BIN_DIR/examples) with libOpenVG.so.1 from BIN_DIR, and skipped when missing.
# A session already in DIR is kept, not captured again: the set is made once. Capture with the BEFORE build: the outputs are compared
# on these files, so which build wrote them does not matter, only that both read the same.
#
# Environment: as the tests run them. The GL examples open Mesa's EGL surfaceless platform
# themselves (examples/src/gfx.rs), so no display is needed, and nothing is set beyond what
# the tests set (LD_LIBRARY_PATH for the OpenVG library). The agent is found next to `gpuheat`
# (or through $GPUHEAT_AGENT). A capture that fails is reported and skipped; the script exits 1 if any did.
set -uo pipefail

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
    echo "usage: $0 DIR [BIN_DIR]" >&2
    exit 2
fi
dir=$(mkdir -p "$1" && realpath "$1")
repo=$(cd "$(dirname "$0")/.." && pwd)
if [ $# -eq 2 ]; then
    bin=$(realpath "$2")
elif [ -x /work/before/gpuheat ]; then
    bin=/work/before
else
    bin=$repo/target/debug
fi
gpuheat=$bin/gpuheat
[ -x "$gpuheat" ] || { echo "$0: no gpuheat in $bin" >&2; exit 2; }
[ -f "$bin/libgpuheat_agent.so" ] || [ -n "${GPUHEAT_AGENT:-}" ] \
    || { echo "$0: no libgpuheat_agent.so in $bin (or set GPUHEAT_AGENT)" >&2; exit 2; }
failed=0
made=0

# capture NAME EXAMPLE "GPUHEAT RUN FLAGS" [EXAMPLE ARGS...]
capture() {
    local name=$1 example=$2 flags=$3
    shift 3
    local exe=$bin/$example
    if [ -e "$dir/$name.gpuheat" ]; then
        made=$((made + 1))
        return
    fi
    if [ ! -x "$exe" ]; then
        echo "golden-sessions: $name: $exe missing, skipped" >&2
        failed=1
        return
    fi
    # shellcheck disable=SC2086
    if timeout -k 5 240 "$gpuheat" run -o "$dir/$name.gpuheat" $flags -- "$exe" "$@" \
        >"$dir/$name.log" 2>&1; then
        made=$((made + 1))
        rm -f "$dir/$name.log"
    else
        echo "golden-sessions: $name failed (log in $dir/$name.log)" >&2
        rm -f "$dir/$name.gpuheat"
        failed=1
    fi
}

# The programs of the findings, heatmap, view and diff tests.
capture hot_spot hot_spot "--heat --frames 1"
capture hot_spot-3frames hot_spot "--frames 3"
capture hot_spot-timeline hot_spot "--mode timeline --frames 2"
capture hot_spot-cheap hot_spot "--heat --frames 4" --loop 75 --spot 48
capture hot_spot-base hot_spot "--heat --frames 4" --loop 300 --spot 48
capture overdraw-1 overdraw "--heat --frames 1" --layers 1 --size 96x64
capture overdraw-6 overdraw "--heat --frames 1" --layers 6 --size 96x64
capture overdraw-timing overdraw "--frames 1" --layers 2 --size 64x64 --timing
capture offscreen_pass-gl offscreen_pass "--heat --frames 2" --api gl
capture offscreen_pass-gles offscreen_pass "--heat --frames 2" --api gles
capture state_churn state_churn "--frames 3" --draws 50
capture tiny_batches tiny_batches "--frames 1" --draws 2000
capture many_draws many_draws "--heat --mode full --frames 3"
# The checklist example: clean, and every --bad rule it documents (checklist_help.txt), as
# checklist_rules.rs captures it (full mode, heat, from the first frame, 8 of 10 frames).
capture checklist-clean checklist "--mode full --heat --skip 0 --frames 8" --frames 10
rules=$(sed -n 's/^\([a-z][a-z-]*\)\( (.*)\)\{0,1\}:.*/\1/p' \
    "$repo/examples/src/bin/checklist_help.txt" | sort -u)
for r in $rules; do
    api=()
    [ "$r" = client-arrays ] && api=(--api gles)
    capture "checklist-$r" checklist "--mode full --heat --skip 0 --frames 8" \
        --frames 10 --bad "$r" "${api[@]}"
done

# OpenVG examples (openvg.rs): launch mode, heat, frames 2-4 of 6, the VG library from BIN_DIR.
vgbin=${GOLDEN_VG_BIN:-$bin/examples}
for ex in vg_rect vg_clean vg_churn vg_redundant vg_reupload vg_sync vg_tiny_paths vg_all_caps; do
    exe=$vgbin/$ex
    [ -x "$exe" ] || exe=$bin/$ex
    if [ -e "$dir/$ex.gpuheat" ]; then
        made=$((made + 1))
        continue
    fi
    if [ ! -x "$exe" ] || [ ! -e "$bin/libOpenVG.so.1" ]; then
        echo "golden-sessions: $ex (or libOpenVG.so.1) missing in $bin, skipped" >&2
        continue
    fi
    if LD_LIBRARY_PATH=$bin timeout -k 5 240 "$gpuheat" run --keep-running --heat \
        --frames 3 --skip 1 -o "$dir/$ex.gpuheat" -- "$exe" --frames 6 >"$dir/$ex.log" 2>&1; then
        made=$((made + 1))
        rm -f "$dir/$ex.log"
    else
        echo "golden-sessions: $ex failed (log in $dir/$ex.log)" >&2
        rm -f "$dir/$ex.gpuheat"
        failed=1
    fi
done

echo "golden-sessions: $made sessions in $dir (captured with $gpuheat)" >&2
exit $failed
