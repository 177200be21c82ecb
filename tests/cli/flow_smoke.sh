#!/bin/sh
# tenbin flow run, small: a real-command workflow on 2 ranks gives its known
# answer (200010000) with files sent between the ranks.  Short enough for the
# MPICH smoke test (make test-mpich); tests/cli/flow_run.sh has the rest.
# Environment (set by CTest): TENBIN, MPIEXEC, MPIEXEC_NUMPROC_FLAG, TB_TEST_TMP.
set -eu
cd "$TB_TEST_TMP"
. "$TB_SOURCE_DIR/tests/cli/expect.inc"
export TMPDIR="$TB_TEST_TMP/tmp"
mkdir -p "$TMPDIR"
cat > sums.json <<'EOF'
{"name": "sums", "schemaVersion": "1.5", "workflow": {
 "specification": {
  "tasks": [
   {"name": "gen", "id": "gen", "parents": [], "children": ["ha", "tb"], "inputFiles": [], "outputFiles": ["nums.txt"]},
   {"name": "ha", "id": "ha", "parents": ["gen"], "children": ["total"], "inputFiles": ["nums.txt"], "outputFiles": ["a.txt"]},
   {"name": "tb", "id": "tb", "parents": ["gen"], "children": ["total"], "inputFiles": ["nums.txt"], "outputFiles": ["b.txt"]},
   {"name": "total", "id": "total", "parents": ["ha", "tb"], "children": [], "inputFiles": ["a.txt", "b.txt"], "outputFiles": ["total.txt"]}
  ],
  "files": [{"id": "nums.txt", "sizeInBytes": 108894}, {"id": "a.txt", "sizeInBytes": 48894},
            {"id": "b.txt", "sizeInBytes": 60000}, {"id": "total.txt", "sizeInBytes": 10}]},
 "execution": {"makespanInSeconds": 1, "executedAt": "20260101T000000+0000", "tasks": [
   {"id": "gen", "runtimeInSeconds": 0.05, "command": {"program": "sh", "arguments": ["-c", "seq 1 20000 > nums.txt"]}},
   {"id": "ha", "runtimeInSeconds": 0.05, "command": {"program": "sh", "arguments": ["-c", "head -n 10000 nums.txt > a.txt"]}},
   {"id": "tb", "runtimeInSeconds": 0.05, "command": {"program": "sh", "arguments": ["-c", "tail -n 10000 nums.txt > b.txt"]}},
   {"id": "total", "runtimeInSeconds": 0.05, "command": {"program": "sh", "arguments": ["-c", "cat a.txt b.txt | awk '{s+=$1} END {print s}' > total.txt"]}}
 ]}}}
EOF
"$MPIEXEC" ${MPIEXEC_NUMPROC_FLAG:--n} 2 "$TENBIN" flow run sums.json --out-dir out --json > res.json ||
    fail "flow run on 2 ranks: $(cat res.json)"
[ "$(cat out/total.txt)" = 200010000 ] || fail "total $(cat out/total.txt)"
grep -q '"attempts": 4, "failures": 0,' res.json || fail "summary: $(cat res.json)"
grep -q '"transferred_bytes": 0,' res.json && fail "no file crossed ranks: $(cat res.json)"
echo "flow smoke: ok"
