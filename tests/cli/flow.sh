#!/bin/sh
# tenbin flow: Topcuoglu's known answers through the CLI, JSON and exports,
# every WfInstances workflow schedules and simulates, conversions round-trip,
# a small S2 experiment writes its CSV and charts, and bad input gets one
# clear line with exit status 2.
set -eu
cd "$TB_TEST_TMP"
fail() { echo "FAIL: $*" >&2; exit 1; }
DATA="$TB_SOURCE_DIR/tests/data"

cat > top.txt <<'EOF'
# Topcuoglu, Hariri and Wu (2002), Fig. 2: execution times on hosts 1-3
hosts 3
task n1 14 16 9
task n2 13 19 18
task n3 11 13 19
task n4 13 8 17
task n5 12 13 10
task n6 13 16 9
task n7 7 15 11
task n8 5 11 14
task n9 18 12 20
task n10 21 7 16
edge n1 n2 18
edge n1 n3 12
edge n1 n4 9
edge n1 n5 11
edge n1 n6 14
edge n2 n8 19
edge n2 n9 16
edge n3 n7 23
edge n4 n8 27
edge n4 n9 23
edge n5 n9 13
edge n6 n8 15
edge n7 n10 17
edge n8 n10 11
edge n9 n10 13
EOF

# Known answers: HEFT 80, CPOP 86 (the paper's Fig. 4).
"$TENBIN" flow schedule top.txt --json --gantt g.svg --trace t.json > heft.json
grep -qF '"makespan": 80,' heft.json || fail "HEFT makespan: $(head -1 heft.json)"
grep -qF '{"id": "n1", "host": 2, "start": 0, "finish": 9}' heft.json || fail "HEFT n1: $(cat heft.json)"
grep -qF '{"id": "n10", "host": 1, "start": 73, "finish": 80}' heft.json || fail "HEFT n10"
"$TENBIN" flow schedule top.txt --algo cpop -q | grep -qF "cpop makespan 86 " || fail "CPOP is not 86"
python3 - heft.json t.json g.svg <<'EOF'
import json, sys
import xml.dom.minidom
s = json.load(open(sys.argv[1]))
assert s["makespan"] == 80 and len(s["tasks"]) == 10, s
ev = [e for e in json.load(open(sys.argv[2]))["traceEvents"] if e.get("ph") == "X"]
assert len(ev) == 10, len(ev)
svg = xml.dom.minidom.parse(sys.argv[3])
assert len(svg.getElementsByTagName("rect")) >= 13
EOF
# The default text is a summary per host (HEFT's 80 on Topcuoglu's example:
# host 2 computes n1 0-9, ...); --tasks gives the per-task table.
"$TENBIN" flow schedule top.txt > sum.txt
[ "$(grep -c '^ *[0-2] ' sum.txt)" = 3 ] || fail "per-host summary: $(cat sum.txt)"
python3 - sum.txt <<'EOF' || fail "per-host summary sums: $(cat sum.txt)"
import sys
rows = [l.split() for l in open(sys.argv[1]) if l.split() and l.split()[0] in "012"]
assert sum(int(r[2]) for r in rows) == 10, rows
EOF
! grep -q '^n1 ' sum.txt || fail "the per-task table without --tasks"
"$TENBIN" flow schedule top.txt --tasks > tasks.txt
grep -Eq '^n1 +2 +0 +9$' tasks.txt || fail "--tasks: $(cat tasks.txt)"
for a in heft cpop peft minmin maxmin olb random; do
    "$TENBIN" flow schedule top.txt --algo $a -q > /dev/null || fail "--algo $a"
done

# Constant speeds, no reschedule: the simulated run is the plan.
"$TENBIN" flow simulate top.txt --platform hosts=3,speed=1 --trigger perf-changed --json > sim.json
grep -qF '"makespan": 80,' sim.json || fail "simulated HEFT: $(head -1 sim.json)"
grep -qF '"reschedules": 0,' sim.json || fail "reschedules without speed changes"

# Every WfInstances workflow schedules and simulates on S2's platform, with load.
for f in "$DATA"/wfinstances/*-*.json; do
    case $f in *schema*) continue ;; esac
    "$TENBIN" flow schedule "$f" --platform hosts=8,speed=1-5,G=1e-8 -q > /dev/null || fail "schedule $f"
    "$TENBIN" flow simulate "$f" --platform hosts=8,speed=1-5,G=1e-8,load=50 --trigger its-finished -q \
        > /dev/null || fail "simulate $f"
done

# The same seed reproduces a run bit for bit; triggers order their counts.
"$TENBIN" flow generate --tasks 300 --its-size 30 --seed 5 net.json
"$TENBIN" flow info net.json | grep -q "independent task sets" || fail "flow info"
P=hosts=16,speed=1-5,L=0,G=0.01,load=50
for t in perf-changed task-finished its-finished; do
    "$TENBIN" flow simulate net.json --platform $P --trigger $t --json > $t.json
    "$TENBIN" flow simulate net.json --platform $P --trigger $t --json > $t.2.json
    python3 -c 'import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:])
for d in (a, b):
    del d["sched_cpu_s"], d["sim_cpu_s"]  # CPU times, not results
sys.exit(a != b)' $t.json $t.2.json || fail "$t: same seed, different runs"
done
python3 - <<'EOF'
import json
n = {t: json.load(open(t + ".json"))["reschedules"] for t in ("perf-changed", "task-finished", "its-finished")}
assert n["its-finished"] <= n["task-finished"] <= n["perf-changed"], n
assert n["its-finished"] > 0, n
EOF

# Conversions: DAX -> WfFormat -> text needs costs; text -> JSON -> text keeps it.
"$TENBIN" flow convert "$DATA/dax/diamond.dax" d.json
"$TENBIN" flow info d.json | grep -q "^d.json: 4 tasks, 4 edges" || fail "DAX -> JSON: $("$TENBIN" flow info d.json)"
"$TENBIN" flow convert top.txt top.json
"$TENBIN" flow convert top.json top2.txt 2> err.txt && fail "JSON (work only) -> text should fail"
"$TENBIN" flow convert top.txt top3.txt
"$TENBIN" flow schedule top3.txt -q | grep -qF "heft makespan 80 " || fail "text round trip"

# A small S2 experiment: CSV and charts.
"$TENBIN" flow experiment --instances 2 --tasks 200 --its-size 20 --out exp > exp.txt
for f in results.csv table3-makespan.svg table3-reschedules.svg table4-makespan.svg \
         table5-makespan.svg table5-reschedules.svg; do
    [ -s exp/$f ] || fail "experiment did not write $f"
done
[ "$(wc -l < exp/results.csv)" = 38 ] || fail "results.csv has $(wc -l < exp/results.csv) lines"
grep -q "^Table 3" exp.txt && grep -q "^Table 5" exp.txt || fail "experiment tables: $(cat exp.txt)"

# expect STATUS PATTERN ARGS...: one line on stderr, the status, no output file.
expect() {
    status=$1 pattern=$2
    shift 2
    set +e
    "$TENBIN" "$@" > out.txt 2> err.txt
    got=$?
    set -e
    [ "$got" = "$status" ] || fail "tenbin $*: exit $got, want $status: $(cat err.txt)"
    [ "$(wc -l < err.txt)" = 1 ] || fail "tenbin $*: not one line: $(cat err.txt)"
    grep -q -- "$pattern" err.txt || fail "tenbin $*: no '$pattern': $(cat err.txt)"
}
printf 'hosts 2\ntask a 1 2\ntask b 1 2\nedge a b 1\nedge b a 1\n' > cycle.txt
printf 'hosts 2\ntask a 1 2\nedge a zz 1\n' > unknown.txt
printf 'hosts 2\ntask a 1 x2\n' > number.txt
printf '{"name": "x", "workflow": {"specification": {"tasks": [' > trunc.json
expect 2 "^tenbin flow schedule: cycle.txt: cycle: a -> b -> a$" flow schedule cycle.txt
expect 2 "^tenbin flow schedule: unknown.txt:3: edge: unknown task 'zz'" flow schedule unknown.txt
expect 2 "^tenbin flow schedule: number.txt:2: task: malformed number 'x2'" flow schedule number.txt
expect 2 "^tenbin flow schedule: trunc.json" flow schedule trunc.json
expect 2 "^tenbin flow schedule: missing.txt: cannot read" flow schedule missing.txt
expect 2 "^tenbin flow schedule: --algo: expected heft" flow schedule top.txt --algo best
expect 2 "^tenbin flow schedule: top.txt has times for 3 hosts but the platform has 4" \
    flow schedule top.txt --platform hosts=4
expect 2 "^tenbin flow schedule: .*--platform is required" flow schedule net.json
expect 2 "^tenbin flow simulate: --trigger: unknown trigger 'often'" \
    flow simulate top.txt --platform hosts=3 --trigger often
expect 2 "^tenbin flow simulate: --trigger: trigger 'perf-changed-every:0'" \
    flow simulate top.txt --platform hosts=3 --trigger perf-changed-every:0
expect 2 "^tenbin flow simulate: --platform is required" flow simulate top.txt
expect 2 "^tenbin flow schedule: unrecognized option '--bogus'\|^tenbin flow schedule: unknown option" \
    flow schedule top.txt --bogus
expect 2 "^tenbin flow experiment: --table: expected 3, 4, 5 or all" flow experiment --table 6
expect 2 "^tenbin flow: unknown command 'frobnicate'" flow frobnicate
expect 2 "^tenbin flow convert: .*malformed.dax:" flow convert "$DATA/dax/malformed.dax" m.json
[ ! -e m.json ] || fail "a failed convert left m.json"
echo "flow.sh: all checks passed"
