#!/usr/bin/env bash
# Every read-only command of a gpuheat binary, with its main variants, on a set of sessions:
# one file per invocation (exit code, stdout, stderr; for PNGs their sha256) in OUT_DIR, to
# compare two builds before and after a refactor:
#
#   scripts/golden-outputs.sh BEFORE/gpuheat SESSIONS before/
#   scripts/golden-outputs.sh AFTER/gpuheat  SESSIONS after/
#   diff -r before/ after/
#
# The sessions are SESSIONS_DIR/*.gpuheat (scripts/golden-sessions.sh captures them) and the
# format 1-3 fixtures (v1/v2/v3-hot_spot.gpuheat, found in this checkout). Commands run in a
# fixed work directory ($GOLDEN_WORK, default /tmp/gpuheat-golden-work) that reaches the sessions
# through relative paths (s/NAME, f/NAME), so the paths the CLI prints do not depend on where
# SESSIONS_DIR or the checkout is: run both builds with the same SESSIONS_DIR.
#
# Normalized (varies between two runs of one binary on the same files): nothing. Two runs of
# main's build at e83349e on the 45 example sessions and 3 fixtures (1,374 invocations) gave
# byte-identical directories, wall and GPU times included (they are read from the sessions,
# not measured); normalize() below is where a varying field would be cut out.
#
# Environment: GOLDEN_JOBS (parallel invocations, default 2), GOLDEN_TIMEOUT (seconds per
# invocation, default 300), GOLDEN_KEEP=1 (keep the files already in OUT_DIR: run only the
# invocations that have none), GOLDEN_RULES=all (`checklist --rule` for every rule on every
# session; by default every rule only on the fixtures and checklist-clean, elsewhere the
# rules that fire there).
set -euo pipefail

if [ $# -ne 3 ]; then
    echo "usage: $0 GPUHEAT_BINARY SESSIONS_DIR OUT_DIR" >&2
    exit 2
fi
gpuheat=$(realpath "$1")
sessions_dir=$(realpath "$2")
out=$(mkdir -p "$3" && realpath "$3")
repo=$(cd "$(dirname "$0")/.." && pwd)
work=${GOLDEN_WORK:-/tmp/gpuheat-golden-work}
jobs=${GOLDEN_JOBS:-2}
GOLDEN_KEEP=${GOLDEN_KEEP:-}
limit=${GOLDEN_TIMEOUT:-300}

[ -x "$gpuheat" ] || { echo "$0: $gpuheat is not an executable" >&2; exit 2; }

# The work directory: s -> the sessions, f/ the fixtures (copied: they may move in the tree).
rm -rf "$work"
mkdir -p "$work/f" "$work/png"
ln -s "$sessions_dir" "$work/s"
for v in 1 2 3; do
    name="v$v-hot_spot.gpuheat"
    found=$(find "$repo" -path "$repo/target" -prune -o -name "$name" -type f -print | sort | head -n1)
    if [ -z "$found" ]; then
        echo "$0: fixture $name not found under $repo" >&2
        exit 2
    fi
    cp "$found" "$work/f/$name"
done

cd "$work"
sessions=(f/v1-hot_spot.gpuheat f/v2-hot_spot.gpuheat f/v3-hot_spot.gpuheat)
while IFS= read -r s; do
    sessions+=("s/$s")
done < <(cd s && ls -1 -- *.gpuheat 2>/dev/null | sort)

# Rule ids the checklist can emit but that `checklist --json` of the unchanged build does not
# list (issue 23: `--rule` refuses them): asked for anyway, so both builds run the same
# invocations.
extra_rules=(no-multisampling depth-not-cleared client-arrays mipmaps-unused texture-modified
    colormask-heavy discard-heavy blend-opaque)

# What varies between two runs of the same binary on the same files (none found so far).
normalize() {
    cat
}

# The invocation list: one line per invocation, arguments separated by tabs; `@png` stands
# for the PNG output path, replaced by a file of the work directory.
list=$work/invocations
: >"$list"
add() {
    local IFS=$'\t'
    echo "$*" >>"$list"
}

for s in "${sessions[@]}"; do
    add report "$s"
    add report --json "$s"
    add report --per-frame "$s"
    add report --top 3 "$s"
    add checklist "$s"
    add checklist --json "$s"
    # --rule: every listed rule on the fixtures and the clean checklist session; elsewhere
    # the rules with findings in the session (GOLDEN_RULES=all: every rule everywhere). Plus
    # extra_rules everywhere.
    everything=no
    case "$s" in f/* | */checklist-clean.gpuheat) everything=yes ;; esac
    [ "${GOLDEN_RULES:-fired}" = all ] && everything=yes
    rules=$("$gpuheat" checklist --json "$s" 2>/dev/null \
        | EVERYTHING=$everything python3 -c 'import json,os,sys
try:
    c = json.load(sys.stdin)
except ValueError:
    sys.exit(0)
if os.environ["EVERYTHING"] == "yes":
    print("\n".join(c.get("rules", [])))
else:
    print("\n".join(sorted({f.get("rule", "") for f in c.get("findings", [])})))') || true
    for r in $( (echo "$rules"; printf '%s\n' "${extra_rules[@]}") | sort -u); do
        [ -n "$r" ] && add checklist --rule "$r" "$s"
    done
    add heatmap "$s" -o @png
    add heatmap "$s" --overdraw -o @png
    # A few pixels: a corner, the middle and a point a quarter in of the first captured
    # state's surface (or viewport), else fixed ones; and each offscreen render target of
    # the report (`T LABEL X,Y`, its middle pixel).
    picks=$("$gpuheat" report --json "$s" 2>/dev/null | python3 -c 'import json,sys
try:
    r = json.load(sys.stdin)
except ValueError:
    r = {}
st = (r.get("states") or [{}])[0]
w, h = st.get("surface") or (st.get("viewport") or [0, 0, 64, 64])[2:]
for x, y in [(0, 0), (w // 2, h // 2), (w // 4, 3 * h // 4)]:
    print(f"P {x},{y}")
for t in (r.get("render_targets") or {}).get("targets", []):
    role = t.get("role") or {}
    if not role.get("screen") and t.get("label"):
        w, h = role.get("width", 2), role.get("height", 2)
        print("T", t["label"], f"{w // 2},{h // 2}")') \
        || picks=$'P 0,0\nP 32,32\nP 16,48'
    while read -r kind a b; do
        if [ "$kind" = P ]; then
            add view "$s" --pick "$a" --json
            add view "$s" --pick "$a"
        elif [ "$kind" = T ]; then
            add heatmap "$s" --target "$a" -o @png
            add view "$s" --pick "$b" --target "$a" --json
        fi
    done <<<"$picks"
done

# diff: each session against the next one (and the last against the first), and one against
# itself.
n=${#sessions[@]}
for ((i = 0; i < n; i++)); do
    a=${sessions[$i]}
    b=${sessions[$(((i + 1) % n))]}
    add diff "$a" "$b"
    add diff --json "$a" "$b"
done
add diff "${sessions[0]}" "${sessions[0]}"
add diff --json "${sessions[0]}" "${sessions[0]}"

# One invocation: writes OUT_DIR/<command and arguments>.txt.
run_one() {
    local line=$1
    local IFS=$'\t'
    # shellcheck disable=SC2206
    local args=($line)
    local name
    name=$(printf '%s_' "${args[@]}" | sed 's/_$//; s#[^A-Za-z0-9.,=+-]#_#g')
    local png="" i
    for i in "${!args[@]}"; do
        if [ "${args[$i]}" = "@png" ]; then
            png="png/$name.png"
            args[$i]=$png
        fi
    done
    local f="$out/$name.txt"
    if [ -n "${GOLDEN_KEEP:-}" ] && [ -f "$f" ]; then
        return
    fi
    local code=0
    timeout -k 5 "$limit" "$gpuheat" "${args[@]}" >"$work/png/$name.stdout" 2>"$work/png/$name.stderr" || code=$?
    {
        echo "\$ gpuheat $(IFS=' '; echo "${args[*]}")"
        echo "exit: $code"
        if [ -n "$png" ]; then
            if [ -f "$png" ]; then
                echo "png sha256: $(sha256sum "$png" | cut -d' ' -f1)"
                rm -f "$png"
            else
                echo "png: none written"
            fi
        fi
        echo "--- stdout"
        normalize <"$work/png/$name.stdout"
        echo "--- stderr"
        normalize <"$work/png/$name.stderr"
    } >"$f"
    rm -f "$work/png/$name.stdout" "$work/png/$name.stderr"
}
export -f run_one normalize
export gpuheat out work limit GOLDEN_KEEP

count=$(wc -l <"$list")
echo "golden-outputs: $count invocations of $gpuheat on ${#sessions[@]} sessions -> $out" >&2
tr '\n' '\0' <"$list" | xargs -0 -P "$jobs" -I{} bash -c 'run_one "$1"' _ {}
written=$(find "$out" -name '*.txt' | wc -l)
echo "golden-outputs: $written files in $out" >&2
