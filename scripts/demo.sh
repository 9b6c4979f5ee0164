#!/usr/bin/env bash
# The demo: start a bundled example that overdraws on purpose, as any program would be
# started, then get into it with `gpuheat attach`, capture three frames with every call and
# per-draw counters, leave it running, and report where the GPU time went.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=target/release
mkdir -p out
session=out/demo.gpuheat
echo "demo: starting examples/overdraw on its own (desktop GL 4.5 on llvmpipe, 512x512, 8 layers)"
"$bin/overdraw" --api gl --size 512x512 >/dev/null &
pid=$!
trap 'kill $pid 2>/dev/null || true' EXIT
echo "demo: gpuheat attach $pid"
"$bin/gpuheat" attach "$pid" --frames 3 --output "$session"
kill -0 "$pid" && echo "demo: overdraw (pid $pid) is still running after the detach"
"$bin/gpuheat" report "$session" | tee out/demo-report.txt
"$bin/gpuheat" report --json "$session" >out/demo-report.json
echo
echo "demo: session $session, report out/demo-report.txt (JSON: out/demo-report.json)"
