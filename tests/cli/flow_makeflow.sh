#!/bin/sh
# tenbin flow convert --to makeflow: workflows run under cctools' makeflow.
# A small workflow of real commands (an argument with quotes, $, #, a
# backslash and a tab; edges without files) gives its known answer; a
# WfInstance converted in synthetic mode writes every file at its scaled
# size; bad input gets one line.  Needs makeflow (Debian coop-computing-tools,
# installed by scripts/bootstrap).
# Environment (set by CTest): TENBIN, TB_SOURCE_DIR, TB_TEST_TMP.
set -eu
cd "$TB_TEST_TMP"
. "$TB_SOURCE_DIR/tests/cli/expect.inc"
DATA="$TB_SOURCE_DIR/tests/data"
command -v makeflow > /dev/null ||
    fail "makeflow is not installed (Debian package coop-computing-tools; scripts/bootstrap installs it)"

# mf DIR FILE: run makeflow on FILE in DIR.  Makeflow exits 0 even when a
# rule failed for good, so its output must also show no failure.
mf() {
    (cd "$1" && makeflow -T local "$2" > makeflow.out 2>&1) ||
        fail "makeflow $1/$2: $(tail -5 "$1/makeflow.out")"
    ! grep -q "failed" "$1/makeflow.out" ||
        fail "makeflow $1/$2: $(grep failed "$1/makeflow.out" | head -3)"
    grep -q "nothing left to do" "$1/makeflow.out" ||
        fail "makeflow $1/$2 did not finish: $(tail -5 "$1/makeflow.out")"
}

# (a) gen writes 1..20000, lo and hi split it, join sums the halves
# (200010000).  check reads nums.txt and writes check.txt, which join does
# not read; idle has no files at all: the edges check -> join, idle -> join
# and gen -> idle carry no file, so markers order them (join fails if check
# has not run).  odd writes an argument with characters Makeflow or sh could
# take for their own.
cat > sum.json <<'EOF'
{"name": "sum", "schemaVersion": "1.5", "workflow": {
  "specification": {
    "tasks": [
      {"name": "gen", "id": "gen", "parents": [], "children": ["lo", "hi", "check", "idle"],
       "inputFiles": [], "outputFiles": ["nums.txt"]},
      {"name": "lo", "id": "lo", "parents": ["gen"], "children": ["join"],
       "inputFiles": ["nums.txt"], "outputFiles": ["lo.txt"]},
      {"name": "hi", "id": "hi", "parents": ["gen"], "children": ["join"],
       "inputFiles": ["nums.txt"], "outputFiles": ["hi.txt"]},
      {"name": "check", "id": "check", "parents": ["gen"], "children": ["join"],
       "inputFiles": ["nums.txt"], "outputFiles": ["check.txt"]},
      {"name": "idle", "id": "idle", "parents": ["gen"], "children": ["join"],
       "inputFiles": [], "outputFiles": []},
      {"name": "join", "id": "join", "parents": ["lo", "hi", "check", "idle"], "children": [],
       "inputFiles": ["lo.txt", "hi.txt"], "outputFiles": ["sum.txt"]},
      {"name": "odd", "id": "odd", "parents": [], "children": [],
       "inputFiles": [], "outputFiles": ["odd.txt"]}
    ],
    "files": [
      {"id": "nums.txt", "sizeInBytes": 108894}, {"id": "lo.txt", "sizeInBytes": 48894},
      {"id": "hi.txt", "sizeInBytes": 60000}, {"id": "check.txt", "sizeInBytes": 3},
      {"id": "sum.txt", "sizeInBytes": 10}, {"id": "odd.txt", "sizeInBytes": 40}
    ]
  },
  "execution": {"makespanInSeconds": 1, "executedAt": "2024-01-01T00:00:00+00:00", "tasks": [
    {"id": "gen", "runtimeInSeconds": 0.1,
     "command": {"program": "sh", "arguments": ["-c", "seq 1 20000 > nums.txt"]}},
    {"id": "lo", "runtimeInSeconds": 0.1,
     "command": {"program": "sh", "arguments": ["-c", "head -n 10000 nums.txt > lo.txt"]}},
    {"id": "hi", "runtimeInSeconds": 0.1,
     "command": {"program": "sh", "arguments": ["-c", "tail -n 10000 nums.txt > hi.txt"]}},
    {"id": "check", "runtimeInSeconds": 0.1,
     "command": {"program": "sh", "arguments": ["-c", "test -s nums.txt && echo ok > check.txt"]}},
    {"id": "idle", "runtimeInSeconds": 0.1, "command": {"program": "true", "arguments": []}},
    {"id": "join", "runtimeInSeconds": 0.1,
     "command": {"program": "sh", "arguments": ["-c",
       "test -s check.txt && cat lo.txt hi.txt | awk '{ s += $1 } END { print s }' > sum.txt"]}},
    {"id": "odd", "runtimeInSeconds": 0.1,
     "command": {"program": "sh", "arguments": ["-c", "printf '%s\\n' \"$1\" > odd.txt", "sh",
                 "it's $HOME #x \\ \"q\"\t~ a=b LOCAL '' \\'"]}}
  ]}
}}
EOF
mkdir real
"$TENBIN" flow convert sum.json real/sum.makeflow
for rule in 'nums.txt \.tenbin-done-0:' 'check.txt \.tenbin-done-3: nums.txt' \
            '\.tenbin-done-4: \.tenbin-done-0' \
            'sum.txt: lo.txt hi.txt \.tenbin-done-3 \.tenbin-done-4'; do
    grep -q "^$rule\$" real/sum.makeflow || fail "no rule '$rule': $(cat real/sum.makeflow)"
done
mf real sum.makeflow
[ "$(cat real/sum.txt)" = 200010000 ] || fail "sum: '$(cat real/sum.txt)', want 200010000"
python3 -c 'import json, sys
t = json.load(open("sum.json"))["workflow"]["execution"]["tasks"][-1]
sys.stdout.write(t["command"]["arguments"][-1] + "\n")' > odd.want
cmp -s real/odd.txt odd.want || fail "odd.txt: '$(cat real/odd.txt)', want '$(cat odd.want)'"
# --to wins over the name
"$TENBIN" flow convert sum.json sum.out --to makeflow
cmp -s sum.out real/sum.makeflow || fail "--to makeflow differs from .makeflow"

# (b) a WfInstance in synthetic mode: each file at its size x 1e-3, rounded
# (the workflow's input too, made by a rule of its own)
mkdir syn
"$TENBIN" flow convert "$DATA/wfinstances/helloworld-forkjoin-10-chameleon.json" syn/fj.mf \
    --synthetic --time-scale 0.001 --size-scale 1e-3
mf syn fj.mf
python3 - "$DATA/wfinstances/helloworld-forkjoin-10-chameleon.json" syn <<'EOF'
import json, os, sys
spec = json.load(open(sys.argv[1]))["workflow"]["specification"]
size = {f["id"]: f["sizeInBytes"] for f in spec["files"]}
used = {n for t in spec["tasks"] for n in t["inputFiles"] + t["outputFiles"]}
assert len(used) == 11, used
for name in sorted(used):
    want = int(size[name] * 1e-3 + 0.5)
    got = os.path.getsize(os.path.join(sys.argv[2], name))
    assert got == want, (name, got, want)
EOF

# (c) bad input: one line, status 2, no file
printf '{"name": "x", "schemaVersion": "1.5", "workflow": {"specification": {"tasks": [
  {"name": "a", "id": "a", "parents": [], "children": [], "inputFiles": [], "outputFiles": []}],
  "files": []}, "execution": {"tasks": [{"id": "a", "runtimeInSeconds": 1}]}}}\n' > nocmd.json
expect 2 "^tenbin flow convert: .*nocmd.json: task 'a' has no command" \
    flow convert nocmd.json nocmd.makeflow
[ ! -e nocmd.makeflow ] || fail "a failed convert left nocmd.makeflow"
"$TENBIN" flow convert nocmd.json nocmd.makeflow --synthetic
grep -q '^\.tenbin-done-0:$' nocmd.makeflow || fail "synthetic a: $(cat nocmd.makeflow)"
expect 2 "^tenbin flow convert: --synthetic needs Makeflow output" \
    flow convert sum.json s.json --synthetic
expect 2 "^tenbin flow convert: --time-scale needs --synthetic" \
    flow convert sum.json s.makeflow --time-scale 2
expect 2 "^tenbin flow convert: --to: expected text, wfjson or makeflow, got 'make'" \
    flow convert sum.json s.makeflow --to make
expect 2 "^tenbin flow convert: --to dax: writing DAX is not supported" \
    flow convert sum.json s.dax --to dax
sed 's/"lo.txt"/"lo txt"/g' sum.json > space.json
expect 2 "^tenbin flow convert: .*space.json: file 'lo txt': Makeflow cannot name it" \
    flow convert space.json space.makeflow
[ ! -e s.json ] && [ ! -e s.makeflow ] && [ ! -e space.makeflow ] || fail "a failed convert left a file"
echo "flow_makeflow.sh: all checks passed"
