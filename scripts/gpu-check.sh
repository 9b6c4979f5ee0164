#!/usr/bin/env bash
# The capture checks on a machine with a real GPU (NVIDIA through glvnd's EGL), run from a
# copy of the repository whose `.devbin/` holds release builds made elsewhere: gpuheat, the
# agent, the examples and test executables. Prints what the driver is and what each check
# gave; the tests' own expectations decide pass/fail.
#
# Here: `cargo build --release --workspace`, the test executables with
# `cargo test --release -p gpuheat --test thermal --test offscreen --test geometry --test diff
# --test waits --no-run`, then `scripts/gpu-check.sh --pack target/release/deps/<each test>`
# (writes `.devbin/` and `.devpack/devbin.tgz`: `.devbin` is about 60 MB, near a device
# call's 64 MiB, and travels gzipped), and the GL loaders into `.gl/` (the device README).
# There, with `carry` [".gl", ".devpack"]:
#   set -o pipefail; tar xzf .devpack/devbin.tgz && bash scripts/gpu-check.sh 2>&1 | tee $OUT/gpu-check.log
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
if [ "${1:-}" = --pack ]; then
    # Test executables look for gpuheat at the absolute path they were built with.
    rm -rf "$root/.devbin" && mkdir -p "$root/.devbin/tests"
    rel="$root/target/release"
    cp "$rel/gpuheat" "$rel/gpuheat-bench" "$rel/libgpuheat_agent.so" "$root/.devbin/"
    for f in "$root"/examples/src/bin/*.rs; do
        n=$(basename "$f" .rs); [ -x "$rel/$n" ] && cp "$rel/$n" "$root/.devbin/"
    done
    # The OpenVG fixture: its library beside gpuheat, its examples under examples/.
    [ -f "$rel/libOpenVG.so" ] && cp "$rel/libOpenVG.so" "$root/.devbin/"
    mkdir -p "$root/.devbin/examples"
    for f in "$rel"/examples/vg_*; do
        case "$f" in *-*|*.d) ;; *) cp "$f" "$root/.devbin/examples/" ;; esac
    done
    shift
    for t in "$@"; do cp "$t" "$root/.devbin/tests/"; done
    # The example programs keep their line tables (compressed): a test names a draw by its
    # source line, which a stripped program cannot give.
    for f in "$root/.devbin"/*; do
        case "$(basename "$f")" in
            gpuheat | gpuheat-bench | lib*.so) strip "$f" ;;
            *) [ -f "$f" ] && objcopy --compress-debug-sections=zlib "$f" 2>/dev/null ;;
        esac
    done
    strip "$root/.devbin"/tests/* "$root/.devbin"/examples/* 2>/dev/null
    echo "$rel" > "$root/.devbin/built-at"
    du -sh "$root/.devbin"
    mkdir -p "$root/.devpack" && tar -C "$root" -czf "$root/.devpack/devbin.tgz" .devbin
    du -sh "$root/.devpack/devbin.tgz"
    exit 0
fi
# $OUT brings back at most 8 files: the log is the caller's (tee), sessions go to $work and
# the ones worth reading later are packed into $OUT/sessions.tar.
out=${OUT:-/tmp/gpu-check}
work=/tmp/gpu-check-work
mkdir -p "$out" "$work"
rm -f "$out/sessions.tar"
# GPU_CHECK names the sections to run (default: all); they run in the file's order. Issue 25's come
# first, so a lease cut short still measures them.
sections=${GPU_CHECK:-waits hotspot heat pairs passes watch hitch tests vulkan bench}
want() { case " $sections " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }
# Seconds since the script began, so the log says where the lease went.
t0=$(date +%s)
section() { echo; echo "######## $1 (+$(($(date +%s) - t0)) s)"; }
keep() { tar -C "$work" -rf "$out/sessions.tar" "$@" 2>/dev/null; }
for f in "$root"/.gl/*.deb; do dpkg -x "$f" /; done
ldconfig
nv=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
[ -f "$nv" ] && export __EGL_VENDOR_LIBRARY_FILENAMES=$nv
nvidia-smi -L 2>&1 | head -2
echo "clocksource: $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource); $(grep -o -w "constant_tsc\|nonstop_tsc\|tsc_reliable" /proc/cpuinfo | sort -u | tr "\n" " ")"
built=$(cat "$root/.devbin/built-at")
# The executables name the repository's path where they were built (test sources, gpuheat).
src=$(dirname "$(dirname "$built")")
if [ ! -e "$src" ]; then mkdir -p "$(dirname "$src")" && ln -s "$root" "$src"; fi
if [ -e "$built" ] && [ ! -L "$built" ]; then echo "refusing: $built is a real build folder"; exit 1; fi
mkdir -p "$(dirname "$built")" && rm -f "$built" && ln -s "$root/.devbin" "$built"
cd "$root"
# The VG fixture's examples ask for the library by its soname.
[ -f .devbin/libOpenVG.so ] && ln -sf libOpenVG.so .devbin/libOpenVG.so.1

if want waits; then
    section "waits: issue 25's table (many_draws --api gl, heat on gles too, every mode at 10, 100, 1000 draws)"
    timeout 200 "$built/gpuheat-bench" --quick --attaches 0 --heat-layers 0 --offscreen-frames 0 \
        --geometry 0 --waits 10,100,1000 --watch 0 --vulkan 0 --calls 1000 2>&1 |
        sed -n '/^renderer/p;/^agent waits per frame (/,/^$/p'
fi
if want hotspot; then
    # Issue 25's hot_spot target (full + heat <= 2x the program's frame) and its diff target
    # (+10% on the hot square's shader named slower, nothing else), auto timing (deferred on
    # an immediate-mode GPU) and isolated as the before.
    hs() { "$built/hot_spot" --api gl --size ${HS_SIZE:-1920x1080} --layers 20 --timing "$@"; }
    section "hotspot: hot_spot --api gl --size ${HS_SIZE:-1920x1080} --layers 20"
    base=$(hs --frames 40 | sed -n 's/^frame_ms=//p')
    echo "uncaptured: frame_ms=$base (the program's median)"
    # A capture's frames 2.. (the first is the warm-up), and their median against the
    # program's own frame.
    wall() { timeout 60 "$built/gpuheat" report "$1" 2>/dev/null |
        awk '$1 ~ /^[0-9]+$/ && $1 > 1 && NF >= 6 && $5 ~ /\./ {print $5}' | sort -n |
        awk -v base="${base:-0}" '{v[NR]=$1} END {if (NR) {m=v[int((NR+1)/2)];
            printf "median %.2f ms [%.2f..%.2f] over %d frames", m, v[1], v[NR], NR;
            if (base > 0) printf ", %.2fx the uncaptured frame", m / base}}'; }
    for timing in auto isolated; do
        for heat in "" "--heat"; do
            f="hs-$timing${heat:+-heat}.gpuheat"
            timeout 90 "$built/gpuheat" run --mode full $heat --timing $timing --frames 8 -o "$work/$f" \
                -- "$built/hot_spot" --api gl --size ${HS_SIZE:-1920x1080} --layers 20 --timing --frames 12 >/dev/null 2>&1
            echo "full ${heat:++ heat }--timing $timing: wall $(wall "$work/$f")"
            timeout 60 "$built/gpuheat" report "$work/$f" 2>&1 | grep -E "^capture|^agent|own work|heat passes|deferred|isolated" | head -6
        done
    done
    keep hs-auto-heat.gpuheat hs-isolated-heat.gpuheat
    timeout 60 "$built/gpuheat" heatmap "$work/hs-auto-heat.gpuheat" --draw 67 -o "$out/hot-square-auto.png" 2>&1 | tail -1
    for timing in auto isolated; do
        for loop in 300 330; do
            timeout 90 "$built/gpuheat" run --timing $timing --frames 10 -o "$work/loop-$timing-$loop.gpuheat" \
                -- "$built/hot_spot" --api gl --size ${HS_SIZE:-1920x1080} --layers 20 --loop $loop --timing --frames 14 >/dev/null 2>&1
        done
        echo "-- diff --loop 300 -> 330, --timing $timing"
        timeout 60 "$built/gpuheat" diff "$work/loop-$timing-300.gpuheat" "$work/loop-$timing-330.gpuheat" 2>&1 | head -22
        keep "loop-$timing-300.gpuheat" "loop-$timing-330.gpuheat"
    done
fi
if want heat; then
    section "heat: overdraw (GLES) at 10, 100, 1000 draws, geometry 1000x1000"
    timeout 200 "$built/gpuheat-bench" --quick --attaches 0 --heat-layers 10,100,1000 --offscreen-frames 0 \
        --geometry 1000x1000 --geometry-frames 6 --geometry-runs 2 --waits 0 --watch 0 --vulkan 0 --calls 1000 2>&1 |
        sed -n '/^heat cost/,/^vertex budget/p;/^heat-captured/p;/^geometry capture/p'
fi
if want pairs; then
    # Issue 24 on a real driver: pairs of captures of one running program, the first after
    # the injection included, should show no significant change at draw or frame level.
    section "pairs: hot_spot 1920x1080, 20 layers, attached 6 times, 10 frames each"
    "$built/hot_spot" --api gl --size ${HS_SIZE:-1920x1080} --layers 20 >/dev/null 2>&1 &
    pp=$!
    sleep 2
    for i in 0 1 2 3 4 5; do
        timeout 60 "$built/gpuheat" attach $pp --frames 10 --timeout 20 -o "$work/pair-$i.gpuheat" 2>&1 |
            grep -o "held [0-9.]* ms, first frame [0-9]* ms" | head -1
    done
    kill $pp 2>/dev/null
    for i in 1 2 3 4 5; do
        echo "-- pair $((i - 1)) -> $i"
        timeout 60 "$built/gpuheat" diff "$work/pair-$((i - 1)).gpuheat" "$work/pair-$i.gpuheat" 2>&1 |
            grep -E "^  (GPU|CPU|wall)|^drift|on the CPU|^draws|^  (slower|faster) " | head -14
    done
    keep pair-0.gpuheat pair-1.gpuheat
fi
if want passes; then
    section "passes: issue 24's compute, time-query, blit and copy passes, fixed-function geometry"
    timeout 60 "$built/gpuheat" run --mode full --heat --skip 1 --frames 2 -o "$work/overdraw.gpuheat" \
        -- "$built/overdraw" --api gles --layers 4 --timing --frames 4 2>&1 | tail -3
    timeout 60 "$built/gpuheat" report "$work/overdraw.gpuheat" 2>&1 | head -40
    # Issue 24 on a real driver: a compute dispatch's heat (its image, then the window), draws
    # inside the program's own GL_TIME_ELAPSED query, blits and copies carrying a pass (from a
    # texture, from a renderbuffer, glCopyTexSubImage2D, glCopyImageSubData), fixed-function
    # geometry. Each prints its report's frame, target and finding lines.
    for spec in "compute_pass --api gles" "compute_pass --api gl" \
        "hot_spot --api gl --time-query 1" "offscreen_pass --api gles --blit 1 --format 1" \
        "offscreen_pass --api gles --blit 2" "offscreen_pass --api gl --copy 1" \
        "offscreen_pass --api gles --copy 2"; do
        name=${spec%% *}; args=${spec#* }
        echo "== $spec (--heat)"
        # shellcheck disable=SC2086
        timeout 60 "$built/gpuheat" run --heat --frames 3 -o "$work/$name.gpuheat" \
            -- "$built/$name" $args --timing 2>&1 | tail -1
        timeout 60 "$built/gpuheat" report "$work/$name.gpuheat" 2>&1 |
            grep -E "^ +[0-9]+ +[0-9]+ |^screen|^[0-9]+ +[0-9]+x|not placed|^  gl|remainders|warning|error" | head -24
    done
    if [ -x "$built/fixed_function" ]; then
        echo "== fixed_function (full mode: geometry)"
        timeout 60 "$built/gpuheat" run --mode full --frames 2 -o "$work/fixed.gpuheat" \
            -- "$built/fixed_function" --timing 2>&1 | tail -1
        timeout 60 "$built/gpuheat" report "$work/fixed.gpuheat" 2>&1 | grep -E "^geometry|without" | head -5
    fi
fi
if want watch; then
    section "watch cost"
    # Issue 26 on a real driver: what watching costs the program (target: at most 5% of its
    # frame), and a hitch caught by its GPU time: hitch's burst of heavy 1080p quads every 30th
    # frame, its upload too.
    timeout 200 "$built/gpuheat-bench" --quick --attaches 0 --heat-layers 0 --offscreen-frames 0 \
        --geometry 0 --waits 0 --watch 100,1000 --vulkan 0 2>&1 | sed -n '/^watch cost/,/^the ring/p'
fi
if want hitch; then
    section "hitch, gpu-ms>3"
    "$built/hitch" --api gl --size 1920x1080 --loop 300 --fps 60 >/dev/null 2>&1 &
    hp=$!
    sleep 2
    timeout 60 "$built/gpuheat" attach $hp --trigger 'gpu-ms>3' --trigger 'frame-ms>50' --max-triggers 3 \
        --timeout 20 -o "$work/hitch.gpuheat" 2>&1 | tail -5
    kill $hp 2>/dev/null
    timeout 60 "$built/gpuheat" report "$work/hitch.gpuheat" 2>&1 | grep -E "^watch|^trigger|^ +wall" | head -10
    keep hitch.gpuheat
fi
if want tests; then
    section "tests: the packed test executables on this driver"
    for t in "$root"/.devbin/tests/*; do
        name=$(basename "$t")
        echo "== $name"
        timeout "${TEST_TIMEOUT:-60}" "$t" --test-threads=1 2>&1 | tee "$work/$name.log" | grep -E "^test |test result" | head -60
        # A failure's message follows its "panicked at" line; the whole log comes back too.
        grep -A6 "panicked at" "$work/$name.log" | head -40
        keep "$name.log"
    done
fi
if want vulkan; then
    section "vulkan layer cost"
    # The Vulkan layer's cost (vk_quads at 10, 100, 1000 draws: plain, layer dormant, captured in
    # timeline and full mode). vk_quads presents to an X window: the bench starts its own Xvfb,
    # so the rows need Xvfb and a Vulkan loader here (and the device that presents to it is
    # whichever the loader offers first: vulkaninfo's list says which there are).
    if ! ldconfig -p 2>/dev/null | grep -q 'libvulkan\.so\.1 '; then
        echo "skipped: no Vulkan loader (libvulkan.so.1) on this machine"
    elif ! command -v Xvfb >/dev/null 2>&1; then
        echo "skipped: no Xvfb on this machine (vk_quads needs an X display; the bench starts its own Xvfb)"
    elif [ ! -x "$built/vk_quads" ]; then
        echo "skipped: vk_quads was not packed (scripts/gpu-check.sh --pack)"
    elif command -v vulkaninfo >/dev/null 2>&1 && ! timeout 30 vulkaninfo --summary >"$work/vulkaninfo.txt" 2>&1; then
        echo "skipped: vulkaninfo --summary failed (no Vulkan device?): $(tail -2 "$work/vulkaninfo.txt" | tr '\n' ' ')"
    else
        [ -s "$work/vulkaninfo.txt" ] && grep -E "^GPU[0-9]|deviceName|driverName|driverInfo" "$work/vulkaninfo.txt" | head -12
        timeout 300 "$built/gpuheat-bench" --vulkan-only --vulkan 10,100,1000 --quick 2>&1 |
            tee "$work/vulkan-bench.log" | tail -24
    fi
fi
if want bench; then
    section "bench"
    # BENCH_ARGS replaces the bench's arguments (e.g. one row's options for an A/B run).
    # shellcheck disable=SC2086
    timeout 200 "$built/gpuheat-bench" ${BENCH_ARGS:---quick --attaches 3 --offscreen-frames 0 --vulkan 0} 2>&1 |
        tee "$work/bench.log" | tail -40
fi
section "done"
