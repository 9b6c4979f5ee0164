#!/usr/bin/env bash
# The demo: start a bundled example that overdraws on purpose, capture three frames of it with
# every call and per-draw counters, and report where the GPU time went.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=target/release
mkdir -p out
session=out/demo.gpuheat
echo "demo: capturing 3 frames of examples/overdraw (desktop GL 4.5 on llvmpipe)"
"$bin/gpuheat" run --frames 3 --output "$session" -- "$bin/overdraw" --api gl --size 512x512
"$bin/gpuheat" report "$session" | tee out/demo-report.txt
"$bin/gpuheat" report --json "$session" > out/demo-report.json
echo
echo "demo: session $session, report out/demo-report.txt (JSON: out/demo-report.json)"
