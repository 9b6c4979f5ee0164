#!/usr/bin/env bash
# The demo: start a bundled example on its own, as any program would be started — three
# cheap full-screen layers and one small square with an expensive shader — then get into it
# with `gpuheat attach`, capture three frames with every call, per-draw counters and the
# per-pixel heat map and the draws' geometry, leave it running, write the session, a heat-map
# PNG, a report and a screenshot of the viewer, and open the viewer when there is a display.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=target/release
mkdir -p out
session=out/demo.gpuheat
echo "demo: starting examples/hot_spot on its own (desktop GL 4.5 on llvmpipe, 512x512)"
# --keep-shaders: its shaders stay attached after linking, as in many programs, so the
# attached agent can read their sources and record the draws' geometry for the 3D view.
"$bin/hot_spot" --api gl --size 512x512 --spot 48 --keep-shaders >/dev/null &
pid=$!
trap 'kill $pid 2>/dev/null || true' EXIT
# Attach once it has loaded GL (a program just started may not have yet; at most 10 s).
# Its loader maps libc after libEGL; gpuheat's pre-flight waits for that itself.
for _ in $(seq 100); do
    grep -q 'libEGL\|libGL' "/proc/$pid/maps" 2>/dev/null && break
    sleep 0.1
done
echo "demo: gpuheat attach $pid --heat"
"$bin/gpuheat" attach "$pid" --heat --frames 3 --output "$session"
kill -0 "$pid" && echo "demo: hot_spot (pid $pid) is still running after the detach"
"$bin/gpuheat" heatmap "$session" --output out/heat.png
"$bin/gpuheat" heatmap "$session" --overdraw --palette android --output out/overdraw.png
"$bin/gpuheat" report "$session" | tee out/demo-report.txt
"$bin/gpuheat" report --json "$session" >out/demo-report.json
# The viewer opens on the draw the checklist blames for expensive fragments: the hot square.
hot=$(sed -n 's/.*expensive-fragments: frame [0-9]* call \([0-9]*\).*/\1/p' out/demo-report.txt | head -1)
"$bin/gpuheat" view "$session" --tab 3d ${hot:+--select "draw=$hot"} --screenshot out/view.png
echo
echo "demo: session $session, heat map out/heat.png (overdraw: out/overdraw.png),"
echo "      report out/demo-report.txt (JSON: out/demo-report.json), viewer out/view.png"
if [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]; then
    echo "demo: opening the viewer (close its window to end the demo)"
    "$bin/gpuheat" view "$session" ${hot:+--select "draw=$hot"}
fi
