#!/bin/sh
# tenbin flow run: workflows executed for real on MPI ranks.  Real commands
# pass files between ranks and the gathered output has its known value;
# every attempt in the log starts after its parents ended and every task
# succeeds exactly once; a failing task is retried on another rank, then
# stops the run naming it, and its descendants never run; every shared
# WfInstance runs in synthetic mode; a slowed rank makes the triggers
# reschedule; bad input gets one line.
# Environment (set by CTest): TENBIN, MPIEXEC, MPIEXEC_NUMPROC_FLAG, TB_TEST_TMP.
set -eu
cd "$TB_TEST_TMP"
. "$TB_SOURCE_DIR/tests/cli/expect.inc"
NP=${MPIEXEC_NUMPROC_FLAG:--n}
DATA="$TB_SOURCE_DIR/tests/data"
run() { n=$1; shift; "$MPIEXEC" $NP "$n" "$TENBIN" flow run "$@"; }
export TMPDIR="$TB_TEST_TMP/tmp"
rm -rf "$TMPDIR" && mkdir -p "$TMPDIR"

# check_log LOG WORKFLOW [failed-task]: exactly-once, order, ranks.
check_log() {
    python3 - "$@" <<'EOF'
import json, sys
log = json.load(open(sys.argv[1]))["tasks"]
wf = json.load(open(sys.argv[2]))["workflow"]["specification"]["tasks"]
failed = sys.argv[3] if len(sys.argv) > 3 else None
parents = {t["id"]: t.get("parents", []) for t in wf}
ok = {}
for a in log:
    assert a["end"] >= a["start"] >= 0, a
    assert isinstance(a["rank"], int) and a["host"], a
    if a["exit"] == 0 and "signal" not in a:
        assert a["task"] not in ok, "twice: " + a["task"]
        ok[a["task"]] = a
if failed is None:
    assert set(ok) == set(parents), sorted(set(parents) - set(ok))[:5]
    assert len(log) == len(parents), (len(log), len(parents))
for t, a in ok.items():
    for p in parents[t]:
        assert p in ok, (t, p)
        assert a["start"] >= ok[p]["end"], (t, a["start"], p, ok[p]["end"])
print(len(ok))
EOF
}

# ---- real commands: numbers split, summed on other ranks, gathered -----------
mkdir -p in
printf 'a\nb\nc\n' > in/words.txt
cat > real.json <<'EOF'
{"name": "sums", "schemaVersion": "1.5", "workflow": {
 "specification": {
  "tasks": [
   {"name": "gen", "id": "gen", "parents": [], "children": ["ha", "tb"], "inputFiles": [], "outputFiles": ["nums.txt"]},
   {"name": "ha", "id": "ha", "parents": ["gen"], "children": ["sa"], "inputFiles": ["nums.txt"], "outputFiles": ["a.txt"]},
   {"name": "tb", "id": "tb", "parents": ["gen"], "children": ["sb"], "inputFiles": ["nums.txt"], "outputFiles": ["b.txt"]},
   {"name": "sa", "id": "sa", "parents": ["ha"], "children": ["total"], "inputFiles": ["a.txt"], "outputFiles": ["sa.txt"]},
   {"name": "sb", "id": "sb", "parents": ["tb"], "children": ["total"], "inputFiles": ["b.txt"], "outputFiles": ["sb.txt"]},
   {"name": "total", "id": "total", "parents": ["sa", "sb"], "children": [], "inputFiles": ["sa.txt", "sb.txt"], "outputFiles": ["total.txt"]},
   {"name": "count", "id": "count", "parents": [], "children": [], "inputFiles": ["words.txt"], "outputFiles": ["wc.txt"]}
  ],
  "files": [{"id": "nums.txt", "sizeInBytes": 108894}, {"id": "a.txt", "sizeInBytes": 48894},
            {"id": "b.txt", "sizeInBytes": 60000}, {"id": "sa.txt", "sizeInBytes": 9},
            {"id": "sb.txt", "sizeInBytes": 10}, {"id": "total.txt", "sizeInBytes": 10},
            {"id": "words.txt", "sizeInBytes": 6}, {"id": "wc.txt", "sizeInBytes": 2}]},
 "execution": {"makespanInSeconds": 1, "executedAt": "20260101T000000+0000", "tasks": [
   {"id": "gen", "runtimeInSeconds": 0.05, "command": {"program": "sh", "arguments": ["-c", "seq 1 20000 > nums.txt"]}},
   {"id": "ha", "runtimeInSeconds": 0.05, "command": {"program": "head", "arguments": ["-n", "10000", "nums.txt"]}},
   {"id": "tb", "runtimeInSeconds": 0.05, "command": {"program": "sh", "arguments": ["-c", "tail -n 10000 nums.txt > b.txt"]}},
   {"id": "sa", "runtimeInSeconds": 0.05, "command": {"program": "sh", "arguments": ["-c", "awk '{s+=$1} END {print s}' a.txt > sa.txt"]}},
   {"id": "sb", "runtimeInSeconds": 0.05, "command": {"program": "sh", "arguments": ["-c", "awk '{s+=$1} END {print s}' b.txt > sb.txt"]}},
   {"id": "total", "runtimeInSeconds": 0.05, "command": {"program": "sh", "arguments": ["-c", "cat sa.txt sb.txt | awk '{s+=$1} END {print s}' > total.txt"]}},
   {"id": "count", "runtimeInSeconds": 0.05, "command": {"program": "sh", "arguments": ["-c", "wc -l < words.txt > wc.txt"]}}
 ]}}}
EOF
# `ha` writes to stdout, not a.txt: the run must say that output is missing
expect 1 "task 'ha' failed on rank .* it did not write its output 'a.txt'" \
    flow run real.json --input-dir in --out-dir out0
[ ! -e out0/total.txt ] || fail "a failed run gathered outputs"
grep -q "the tasks' directories are kept in" err.txt || fail "no word of the kept directory"
rm -rf "$TMPDIR"/tenbin-flow-*
sed -i 's/"arguments": \["-n", "10000", "nums.txt"\]/"arguments": ["-c", "head -n 10000 nums.txt > a.txt"]/; s/"program": "head"/"program": "sh"/' real.json
for n in 1 2 3; do
    rm -rf out log.json
    run $n real.json --input-dir in --out-dir out --log log.json --json > res.json ||
        fail "real commands on $n ranks: $(cat res.json)"
    [ "$(cat out/total.txt)" = 200010000 ] || fail "$n ranks: total $(cat out/total.txt)"
    [ "$(cat out/wc.txt)" = 3 ] || fail "$n ranks: wc $(cat out/wc.txt)"
    [ "$(ls out)" = "$(printf 'total.txt\nwc.txt')" ] || fail "$n ranks: out has $(ls out)"
    [ "$(check_log log.json real.json)" = 7 ] || fail "$n ranks: log"
    python3 -c "
import json, sys
r = json.loads(open('res.json').read().splitlines()[-1])
assert r['failed'] is False and r['tasks'] == 7 and r['attempts'] == 7, r
assert (r['transfers'] > 0) == ($n > 1), r
" || fail "$n ranks: summary $(cat res.json)"
done
ls "$TMPDIR" | grep -q . && fail "a run that succeeded left $(ls "$TMPDIR")"
# the schedule as it ran: Gantt chart, Chrome trace, progress lines
run 2 real.json --input-dir in --out-dir out --scheduler cpop --gantt g.svg --trace t.json --progress > res.txt 2> err.txt ||
    fail "gantt/trace: $(cat err.txt)"
grep -q "<svg" g.svg || fail "no Gantt chart"
python3 -c "
import json
ev = json.load(open('t.json'))
ev = ev['traceEvents'] if isinstance(ev, dict) else ev
names = {e.get('name') for e in ev}
assert {'gen', 'total', 'count'} <= names, sorted(n for n in names if n)[:20]
" || fail "trace: $(head -c 300 t.json)"
grep -q "flow run: 7/7 tasks done" err.txt || fail "no progress line: $(cat err.txt)"
grep -q "real.json: 7 tasks on 2 ranks, makespan" res.txt || fail "summary line: $(cat res.txt)"
# the same with a shared work directory and rank 0 only scheduling
rm -rf out
run 3 real.json --input-dir in --out-dir out --shared-fs --no-root --work-dir wd --json > res.json ||
    fail "--shared-fs --no-root: $(cat res.json)"
[ "$(cat out/total.txt)" = 200010000 ] || fail "--shared-fs: total"
grep -q '"transferred_bytes": 0,' res.json || fail "--shared-fs sent files: $(cat res.json)"
[ -f wd/rank-1/tasks/total.1/stdout ] || [ -f wd/rank-2/tasks/total.1/stdout ] ||
    fail "--work-dir keeps the tasks' directories"

# ---- big files cross ranks intact (many chunks, a bounded window) -----------
cat > big.json <<'EOF'
{"name": "big", "schemaVersion": "1.5", "workflow": {
 "specification": {
  "tasks": [
   {"name": "a", "id": "a", "parents": [], "children": [], "inputFiles": [], "outputFiles": ["a.bin", "a.md5"]},
   {"name": "b", "id": "b", "parents": [], "children": [], "inputFiles": [], "outputFiles": ["b.bin", "b.md5"]}
  ],
  "files": [{"id": "a.bin", "sizeInBytes": 20000000}, {"id": "a.md5", "sizeInBytes": 33},
            {"id": "b.bin", "sizeInBytes": 20000000}, {"id": "b.md5", "sizeInBytes": 33}]},
 "execution": {"makespanInSeconds": 1, "executedAt": "20260101T000000+0000", "tasks": [
   {"id": "a", "runtimeInSeconds": 1, "command": {"program": "sh", "arguments": ["-c", "head -c 20000000 /dev/urandom > a.bin && md5sum < a.bin > a.md5"]}},
   {"id": "b", "runtimeInSeconds": 1, "command": {"program": "sh", "arguments": ["-c", "head -c 20000000 /dev/urandom > b.bin && md5sum < b.bin > b.md5"]}}
 ]}}}
EOF
rm -rf out
run 2 big.json --out-dir out --json > res.json || fail "big files: $(cat res.json)"
for x in a b; do
    [ "$(md5sum < out/$x.bin)" = "$(cat out/$x.md5)" ] || fail "big file $x.bin damaged"
done
python3 -c "
import json
r = json.loads(open('res.json').read().splitlines()[-1])
assert r['transferred_bytes'] >= 20000000, r     # one of the two came from rank 1
" || fail "big files did not cross ranks: $(cat res.json)"

# ---- a failing task: retried on another rank, then the run stops ------------
sed 's/"seq 1 20000 > nums.txt"/"echo boom >\&2; exit 3"/' real.json > bad.json
rm -rf out log.json
set +e
run 2 bad.json --input-dir in --out-dir out --log log.json --retries 1 > out.txt 2> err.txt
st=$?
set -e
[ $st = 1 ] || fail "failing task: exit $st: $(cat err.txt)"
grep -q "task 'gen' failed on rank [01] after 2 attempts: exit code 3: boom" err.txt ||
    fail "failure line: $(cat err.txt)"
grep -q "retrying (1 of 1)" err.txt || fail "no retry line: $(cat err.txt)"
[ ! -e out/total.txt ] || fail "a failed run gathered outputs"
python3 - <<'EOF' || fail "failed run's log: $(cat log.json)"
import json
log = json.load(open("log.json"))["tasks"]
gen = [a for a in log if a["task"] == "gen"]
assert len(gen) == 2 and all(a["exit"] == 3 for a in gen), gen
assert gen[0]["rank"] != gen[1]["rank"], gen          # retried on another rank
assert [a["attempt"] for a in gen] == [1, 2], gen
assert not any(a["task"] in ("ha", "tb", "sa", "sb", "total") for a in log), log
EOF
ls "$TMPDIR"/tenbin-flow-* > /dev/null 2>&1 || fail "a failed run removed its tasks' directories"
rm -rf "$TMPDIR"/tenbin-flow-*

# ---- resume: a run that failed halfway, then only what it did not finish ---
python3 -c "
import json
w = json.load(open('real.json'))
for t in w['workflow']['execution']['tasks']:
    if t['id'] == 'sb':
        t['command'] = {'program': 'sh', 'arguments': ['-c', 'exit 4']}
json.dump(w, open('half.json', 'w'))"
rm -rf out log.json
set +e
run 2 half.json --input-dir in --out-dir out --log log1.json > out.txt 2> err.txt
st=$?
set -e
[ $st = 1 ] || fail "half: exit $st: $(cat err.txt)"
grep -q "task 'sb' failed on rank [01] after 1 attempt: exit code 4" err.txt || fail "half: $(cat err.txt)"
run 3 real.json --input-dir in --out-dir out --log log2.json --resume log1.json --work-dir wd2 \
    --json > res.json || fail "resume: $(cat res.json)"
[ "$(cat out/total.txt)" = 200010000 ] || fail "resume: total $(cat out/total.txt)"
[ "$(check_log log2.json real.json)" = 7 ] || fail "resumed log"
python3 - <<'EOF2' || fail "resume ran the wrong tasks: $(cat log1.json log2.json)"
import json
one = json.load(open("log1.json"))["tasks"]
two = json.load(open("log2.json"))["tasks"]
done1 = {a["task"] for a in one if a["exit"] == 0}
assert "gen" in done1 and "sb" not in done1 and "total" not in done1, done1
assert {a["task"] for a in two if a.get("resumed")} == done1, two
ran = [a["task"] for a in two if not a.get("resumed")]
assert sorted(ran) == sorted({"gen", "ha", "tb", "sa", "sb", "total", "count"} - done1), ran
r = json.loads(open("res.json").read().splitlines()[-1])
assert r["resumed"] == len(done1) and r["attempts"] == len(ran), r
EOF2
# everything done: nothing runs, the outputs are gathered all the same
rm -rf out
run 2 real.json --input-dir in --out-dir out --log log3.json --resume log2.json --json > res.json
grep -q '"attempts": 0, "failures": 0, "resumed": 7,' res.json ||
    fail "resume of a finished run: $(cat res.json)"
[ "$(cat out/total.txt)" = 200010000 ] || fail "resume of a finished run: total"
# a lost output: its task and every task after it run again
find wd2 -name sa.txt -exec rm {} +
run 2 real.json --input-dir in --out-dir out --log log4.json --resume log2.json > /dev/null
python3 -c "
import json
ran = sorted(a['task'] for a in json.load(open('log4.json'))['tasks'] if not a.get('resumed'))
assert ran == ['sa', 'total'], ran
" || fail "resume after a lost output: $(cat log4.json)"
[ "$(cat out/total.txt)" = 200010000 ] || fail "resume after a lost output: total"
rm -rf "$TMPDIR"/tenbin-flow-* wd2
echo '{"tasks": 3}' > badlog.json
expect 2 "resume: badlog.json: not a log of tenbin flow run" flow run real.json --input-dir in --resume badlog.json
expect 2 "resume: .*nolog.json" flow run real.json --input-dir in --resume nolog.json
# a damaged log: one line naming the file and the JSON path (the sanitizers'
# summaries aside), on one rank or more
python3 -c "
import json
log = json.load(open('log1.json'))
log['tasks'][1]['rank'] = 2.5
json.dump(log, open('badrank.json', 'w'))"
expect 2 "^tenbin flow run: --resume: badrank.json: tasks\[1\]\.rank: expected a whole number >= 0, got 2\.5$" \
    flow run real.json --input-dir in --resume badrank.json
[ "$(grep -c '^tenbin' err.txt)" = 1 ] || fail "bad rank: more than one line: $(cat err.txt)"
head -c 200 log1.json > cut.json
expect 2 "^tenbin flow run: --resume: cut.json: not JSON (near line [0-9]*)$" \
    flow run real.json --input-dir in --resume cut.json
[ "$(grep -c '^tenbin' err.txt)" = 1 ] || fail "cut log: more than one line: $(cat err.txt)"
# a run that could not start leaves no work directory of its own behind
left=$(cd "$TMPDIR" && ls -d tenbin-flow-* 2>/dev/null || true)
[ -z "$left" ] || fail "runs that did not start left: $left"
set +e
run 2 real.json --input-dir in --resume badrank.json --work-dir "$PWD/badwd" > out.txt 2> err.txt
st=$?
set -e
[ $st = 2 ] || fail "bad rank on 2 ranks: exit $st: $(cat err.txt)"
[ "$(grep -c '^tenbin flow run: ' err.txt)" = 1 ] &&
    grep -q '^tenbin flow run: --resume: badrank.json: tasks\[1\]\.rank: ' err.txt ||
    fail "bad rank on 2 ranks: $(cat err.txt)"
[ -z "$(pgrep -f -- "$PWD/badwd" || true)" ] || fail "processes left after a bad log: $(pgrep -fa -- "$PWD/badwd")"
rm -rf badwd

# ---- synthetic: every shared WfInstance, exactly once, in order ------------
for wf in "$DATA"/wfinstances/*-*.json; do
    case "$wf" in *wfcommons-schema.json) continue ;; esac
    name=$(basename "$wf" .json)
    # about one second of work in all, files at 1/100000 of their size
    scale=$(python3 -c "
import json
w = json.load(open('$wf'))['workflow']
ts = w.get('execution', {}).get('tasks') or w.get('tasks') or w.get('jobs')
print(1.0 / sum(t.get('runtimeInSeconds', t.get('runtime', 0)) for t in ts))")
    rm -rf log.json
    run 3 "$wf" --synthetic --time-scale "$scale" --size-scale 1e-5 --log log.json \
        --trigger task-finished --json > res.json 2> err.txt ||
        fail "$name synthetic: $(cat err.txt)"
    n=$(python3 -c "import json; print(len(json.load(open('$wf'))['workflow']['specification']['tasks']))")
    [ "$(check_log log.json "$wf")" = "$n" ] || fail "$name: log"
done

# ---- tasks without a command run synthetically: the text format, flow
# generate's networks, a converted workflow (each task once) ----------------
check_nocmd_log() {
    python3 - "$@" <<'EOF'
import json, sys
log = json.load(open(sys.argv[1]))["tasks"]
n = int(sys.argv[2])
ok = [a["task"] for a in log if a["exit"] == 0 and "signal" not in a]
assert len(ok) == len(set(ok)) == n == len(log), (len(ok), len(set(ok)), n, len(log))
print(len(ok))
EOF
}
cat > nocmd.txt <<'EOF'
# a diamond and a tail, work in seconds at speed 1, data in bytes
task a 2
task b 3
task c 1
task d 2
task e 1
edge a b 1000
edge a c 1000
edge b d 500
edge c d 500
edge d e 100
EOF
"$TENBIN" flow generate --tasks 30 --its-size 5 --seed 7 gen.json
"$TENBIN" flow convert nocmd.txt conv.json
ngen=$(python3 -c "import json; print(len(json.load(open('gen.json'))['workflow']['specification']['tasks']))")
for src in nocmd.txt:5 gen.json:$ngen conv.json:5; do
    wf=${src%%:*} want=${src##*:}
    for np in 1 2; do
        rm -f log.json
        run $np "$wf" --synthetic --time-scale 0.001 --log log.json > res.txt 2> err.txt ||
            fail "$wf synthetic on $np ranks: $(cat err.txt)"
        [ "$(check_nocmd_log log.json "$want")" = "$want" ] || fail "$wf on $np ranks: log"
    done
done

# ---- a slowed rank: the triggers see it ------------------------------------
FJ="$DATA/wfinstances/helloworld-forkjoin-10-chameleon.json"
for trig in perf-changed task-finished; do
    run 2 "$FJ" --synthetic --time-scale 0.0005 --slowdown 1:4 --trigger $trig --json > res.json ||
        fail "slowdown $trig"
    python3 -c "
import json
r = json.loads(open('res.json').read().splitlines()[-1])
assert r['speed_changes'] >= 1 and r['reschedules'] >= 1, r
" || fail "slowdown with $trig: $(cat res.json)"
done
run 2 "$FJ" --synthetic --time-scale 0.0005 --slowdown 1:4 --json > res.json
grep -q '"reschedules": 0,' res.json || fail "static rescheduled: $(cat res.json)"

# ---- a rank that dies: the job ends, no hang, no task left behind -------------
mkdir -p killwd
"$MPIEXEC" $NP 3 "$TENBIN" flow run "$FJ" --synthetic --time-scale 0.01 --work-dir "$PWD/killwd" \
    > kill.out 2> kill.err &
job=$!
victim=
for i in $(seq 1 100); do
    for pid in $(pgrep -f -- "$PWD/killwd" || true); do
        [ "$(cat /proc/$pid/comm 2>/dev/null)" = tenbin ] || continue
        parent=$(ps -o ppid= -p "$pid" | tr -d ' ')
        [ "$(cat /proc/$parent/comm 2>/dev/null)" = tenbin ] && continue   # a task, not a rank
        tr '\0' '\n' < /proc/$pid/environ 2>/dev/null | grep -qx OMPI_COMM_WORLD_RANK=1 && victim=$pid
    done
    [ -n "$victim" ] && [ -n "$(ls killwd/rank-1/tasks 2>/dev/null)" ] && break
    sleep 0.1
done
[ -n "$victim" ] || fail "no rank 1 to kill"
kill -9 "$victim"
for i in $(seq 1 300); do kill -0 $job 2>/dev/null || break; sleep 0.1; done
kill -0 $job 2>/dev/null && { kill -9 $job; fail "the job hung after a rank died"; }
set +e
wait $job
st=$?
set -e
[ $st != 0 ] || fail "a job whose rank died exited 0"
grep -q "rank 1 .*exited on signal 9\|rank 1 .*killed\|signal 9" kill.err || fail "no word of the dead rank: $(cat kill.err)"
sleep 0.5
[ -z "$(pgrep -f -- "$PWD/killwd" || true)" ] || fail "processes left after a rank died: $(pgrep -fa -- "$PWD/killwd")"
rm -rf killwd

# ---- bad input: one line, exit 2 --------------------------------------------
expect 2 "no-such.json: cannot read" flow run no-such.json
expect 2 "task 'cpuhog_forkjoin_00000001' runs 'cpuhog', which is not found in PATH on rank 0 (install it, or run with --synthetic)" \
    flow run "$FJ"
python3 -c "
import json
w = json.load(open('real.json'))
del w['workflow']['execution']['tasks'][2]['command']
json.dump(w, open('nocmd.json', 'w'))"
expect 2 "task 'tb' has no command" flow run nocmd.json
expect 2 "slowdown needs --synthetic" flow run "$FJ" --slowdown 1:2
expect 2 "slowdown: expected RANK:FACTOR" flow run "$FJ" --synthetic --slowdown x
# One --slowdown syntax (tools/cli.h): flow run's FROM and TO are seconds, written 5s.
expect 2 "FROM and TO count seconds" flow run "$FJ" --synthetic --slowdown 1:2@5
expect 2 "slowdown: expected RANK:FACTOR" flow run "$FJ" --synthetic --slowdown 1:2@5s-1s
expect 2 "unknown trigger 'soon'" flow run "$FJ" --trigger soon
expect 2 "no-root needs 2 ranks" flow run "$FJ" --synthetic --no-root
expect 2 "size-scale: expected a positive number" flow run "$FJ" --synthetic --size-scale -1
expect 2 "log nodir/x.json: cannot write" flow run "$FJ" --synthetic --log nodir/x.json
expect 2 "workflow input 'words.txt' (read by task 'count') is not in nowhere" \
    flow run real.json --input-dir nowhere
echo "flow run: ok"
