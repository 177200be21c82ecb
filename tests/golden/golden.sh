#!/bin/sh
# tests/golden/golden.sh - simulated results that must not change.
#
# A fixed set of simulated runs, each through the CLI with --json: every
# master-worker policy with one task per message and with the default chunk
# rule (constant and exponential task times, results at the root and folded
# on the masters), mandel --sim, branch-and-bound knapsack and TSP across
# four simulated clusters, flow simulate under every trigger, himeno --sim
# off, nopredict and on, and the emulator's patterns (simulated actors, and
# the emulator itself on a platform whose hosts compute in no time).
# The emulator's per-rank figures depend on which worker real time gave
# which task; only its prediction is compared.
#
# Every number of every result is compared with tests/golden/expected.txt
# bit for bit (as float.hex), except real-time figures (wall and CPU
# seconds) and the emulator's own runs, whose predictions include the
# program's measured compute scaled by speed 1e12 (compared within 1e-9).
# A restructuring must leave this file unchanged; a change of behaviour
# replaces it, and says why in its commit:
#
#     TB_GOLDEN_UPDATE=1 ctest -R golden    (then git diff tests/golden)
#
# Environment (set by CTest): TENBIN, MPIEXEC, EMU_PATTERNS, EMU_SIM_PATTERNS,
# TB_SOURCE_DIR, TB_TEST_TMP.
set -eu
cd "$TB_TEST_TMP"
DATA="$TB_SOURCE_DIR/tests/data"
PY=${PYTHON:-python3}
out=got.txt
: > "$out"

# case NAME [tolerance] -- COMMAND...: its JSON (stdout, or its last line),
# flattened into NAME<TAB>path<TAB>value lines.
case_() {
    name=$1 tol=exact only=
    shift
    while [ "$1" != -- ]; do
        case $1 in
        only=*) only=${1#only=} ;;
        *) tol=$1 ;;
        esac
        shift
    done
    shift
    "$@" > run.out 2> run.err || { echo "FAIL: $name: $* exited $?: $(tail -3 run.err)" >&2; exit 1; }
    "$PY" -c '
import json, sys
name, tol, only = sys.argv[1], sys.argv[2], sys.argv[3].split(",") if sys.argv[3] else None
real = {"wall_s", "sched_cpu_s", "sim_cpu_s", "decide_cpu_s", "startup_wall_s", "run_wall_s",
        "tasks_per_s", "answered_ahead", "decisions", "unchecked_decisions",
        "unchecked_rendezvous", "file", "command"}
def walk(p, v):
    if isinstance(v, dict):
        for k in sorted(v):
            if k not in real and (p or not only or k in only):
                walk(p + "." + k if p else k, v[k])
    elif isinstance(v, list):
        for i, x in enumerate(v):
            walk("%s[%d]" % (p, i), x)
    elif isinstance(v, float):
        print("%s\t%s\t%s\t%s" % (name, p, tol, v.hex()))
    else:
        print("%s\t%s\t%s\t%s" % (name, p, tol, json.dumps(v)))
text = open("run.out").read()
try:
    doc = json.loads(text)
except ValueError:
    doc = json.loads(text.strip().splitlines()[-1])
walk("", doc)
' "$name" "$tol" "$only" >> "$out"
}

# ---- S1: master-worker policies on a simulated cluster -----------------------
P1=hosts=64,speed=1-2,L=5us,o=2us,G=8ns
for pol in single multi:4 dynamic dynamic:paper dynamic:wait; do
    for chunk in 1 auto; do
        case_ "mw $pol chunk=$chunk" -- "$TENBIN" sim mw --platform $P1 --tasks 4000 --work 1e-4 \
            --policy $pol --chunk $chunk --json
    done
    case_ "mw $pol exp chunk=auto" -- "$TENBIN" sim mw --platform $P1 --tasks 4000 --work 1e-4 \
        --work-dist exp --policy $pol --json
done
case_ "mw dynamic results=masters" -- "$TENBIN" sim mw --platform $P1 --tasks 4000 --work 1e-4 \
    --results masters --json
case_ "mandel --sim multi:4" -- "$TENBIN" mandel --sim hosts=16,speed=1-3,L=50us,o=12us,G=8ns \
    --width 256 --height 256 --policy multi:4 --checksum --json -q

# ---- S5: branch-and-bound across simulated clusters --------------------------
P5=hosts=64,clusters=4,speed=1-2,L=5us,o=2us,G=8ns,wan-L=10ms,wan-G=80ns
case_ "bnb knapsack 4 clusters" -- "$TENBIN" bnb knapsack "$DATA/knapsack/knapPI_3_200_1000_2.txt" \
    --sim $P5 --node-cost 1e-5 --json -q
case_ "bnb tsp 4 clusters" -- "$TENBIN" bnb tsp "$DATA/tsplib/gr48.tsp" \
    --sim $P5 --node-cost 1e-5 --json -q

# ---- S2: a workflow under every trigger ------------------------------------
WF="$DATA/wfinstances/montage-chameleon-2mass-005d-001.json"
for trig in static perf-changed perf-changed-every:3 task-finished its-finished; do
    case_ "flow $trig" -- "$TENBIN" flow simulate "$WF" --platform hosts=16,speed=1-5,L=1ms,G=1e-8,load=20 \
        --trigger $trig --json
done

# ---- S4: himeno on a simulated cluster, one rank 3x slower ------------------
for bal in off nopredict on; do
    case_ "himeno --sim $bal" -- "$TENBIN" himeno --sim hosts=8,speed=1-2,L=5us,o=2us,G=8ns \
        --ranks 8 --size S --iters 200 --balance $bal --slowdown 3:3 --json
done

# ---- S3: the emulator's patterns -------------------------------------------
PE=hosts=16,speed=1e12,L=50us,o=12.1us,ob=0.182us,O=0.07ns,G=20ns
"$EMU_SIM_PATTERNS" $PE 8 master 2000 16 64 > sp.out
printf '{"simulated_makespan_s": %s}\n' "$(tail -n 1 sp.out | awk '{print $NF}')" > sp.json
case_ "sim patterns master P=8" -- cat sp.json
case_ "emu master P=8" 1e-9 only=predicted_makespan_s -- "$TENBIN" emu --platform $PE -n 8 --json --timeout 120 -- \
    "$EMU_PATTERNS" master 2000 16 64

want="$TB_SOURCE_DIR/tests/golden/expected.txt"
if [ "${TB_GOLDEN_UPDATE:-0}" = 1 ]; then
    cp "$out" "$want"
    echo "golden: wrote $(wc -l < "$out") values to tests/golden/expected.txt"
    exit 0
fi
"$PY" - "$want" "$out" <<'PYEOF'
import sys
def load(p):
    d = {}
    for line in open(p):
        name, path, tol, val = line.rstrip("\n").split("\t")
        d[(name, path)] = (tol, val)
    return d
want, got = load(sys.argv[1]), load(sys.argv[2])
bad = []
for k in sorted(set(want) | set(got)):
    if k not in got:
        bad.append("%s: %s: missing (was %s)" % (k[0], k[1], want[k][1])); continue
    if k not in want:
        bad.append("%s: %s: new (%s)" % (k[0], k[1], got[k][1])); continue
    tol, w = want[k]
    g = got[k][1]
    if w == g:
        continue
    if tol != "exact" and w.startswith(("0x", "-0x")) and g.startswith(("0x", "-0x")):
        a, b = float.fromhex(w), float.fromhex(g)
        if abs(a - b) <= float(tol) * max(abs(a), abs(b)):
            continue
    show = lambda v: repr(float.fromhex(v)) if v.startswith(("0x", "-0x")) else v
    bad.append("%s: %s: %s, was %s" % (k[0], k[1], show(g), show(w)))
if bad:
    print("golden: %d of %d values changed:" % (len(bad), len(want)))
    for b in bad[:40]:
        print("  " + b)
    sys.exit(1)
print("golden: %d values identical" % len(want))
PYEOF
