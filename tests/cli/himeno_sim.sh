#!/bin/sh
# tenbin himeno --sim: S4 on the simulator.  Runs are bit-reproducible; equal
# speeds never move; every layout covers the grid; the seed's trend (on <
# nopredict < off, on moving less) on a small version of its experiment; a
# real run's record replayed through the simulator gives the same decision
# at every balancing point (and a tampered record is caught); the
# SVG chart; clear errors for bad options and bad records.
# Environment (set by CTest): TENBIN, MPIEXEC, MPIEXEC_NUMPROC_FLAG, TB_TEST_TMP.
set -eu
cd "$TB_TEST_TMP"
NP=${MPIEXEC_NUMPROC_FLAG:--n}
fail() { echo "FAIL: $*" >&2; exit 1; }
# the first "KEY": NUMBER of a JSON line
num() { grep -o "\"$1\": [0-9.e+-]*" "$2" | head -n 1 | sed 's/.*: //'; }
# every "layout": [...] of a JSON line, one per output line, comma-separated
layouts() { grep -o '"layout": \[[0-9, ]*\]' "$1" | sed 's/.*\[//; s/\]//; s/ //g'; }

# Deterministic: a platform with load processes and a slowdown, twice.
plat="hosts=8,speed=0.5-1.5,load=2s,L=50us,o=5us,G=1ns"
for i in 1 2; do
    "$TENBIN" himeno --sim "$plat" --ranks 8 --size S --iters 100 --slowdown 3:2@30-70 --seed 5 \
        --json | sed 's/"decide_cpu_s": [^,]*, "wall_s": [^,]*,//' > det$i.json
done
cmp -s det1.json det2.json || fail "two identical simulations differ: $(diff det1.json det2.json)"
[ "$(num moves det1.json)" -gt 0 ] || fail "no move on uneven hosts: $(cat det1.json)"

# Every layout (each plan, and the final one) covers the 62 planes of S, >= 1 each.
layouts det1.json | awk -F, '{ s = 0; for (i = 1; i <= NF; i++) { if ($i < 1) bad = 1; s += $i }
    if (s != 62 || NF != 8) bad = 1 } END { exit bad }' || fail "a layout does not cover the grid"

# Equal constant speeds: no move at all, and the same makespan as off.
for p in 2 3 8; do
    "$TENBIN" himeno --sim "hosts=$p,L=50us,o=5us,G=1ns" --ranks $p --size S --iters 100 \
        --balance on --json > eq_on.json
    "$TENBIN" himeno --sim "hosts=$p,L=50us,o=5us,G=1ns" --ranks $p --size S --iters 100 \
        --balance off --json > eq_off.json
    [ "$(num moves eq_on.json)" = 0 ] || fail "P=$p equal speeds: $(num moves eq_on.json) moves"
    [ "$(num makespan_s eq_on.json)" = "$(num makespan_s eq_off.json)" ] ||
        fail "P=$p equal speeds: on $(num makespan_s eq_on.json) s, off $(num makespan_s eq_off.json) s"
done

# The seed's experiment, small: 3 hosts (1, 1, 1.5), loads on the second from
# 2 s (half speed) and 3 s (a third) to 14 s and 15.5 s; M, 200 sweeps.
cat > t3.json <<'EOF'
{"clusters": [{"name": "seed", "speed": 0.25, "network": {"L": "50us", "o": "5us", "G": "8ns"},
  "hosts": [{"name": "node01"},
            {"name": "node02", "trace": [[0, 1], ["2s", 0.5], ["3s", 0.333333], ["14s", 0.5], ["15.5s", 1]]},
            {"name": "opt01", "speed": 0.375}]}]}
EOF
for b in off nopredict on; do
    "$TENBIN" himeno --sim t3.json --ranks 3 --size M --iters 200 --balance $b --json > t3_$b.json
done
awk -v off="$(num makespan_s t3_off.json)" -v np="$(num makespan_s t3_nopredict.json)" \
    -v on="$(num makespan_s t3_on.json)" 'BEGIN { exit !(on < np && np < off) }' ||
    fail "trend: off $(num makespan_s t3_off.json), nopredict $(num makespan_s t3_nopredict.json), on $(num makespan_s t3_on.json)"
[ "$(num moves t3_on.json)" -le "$(num moves t3_nopredict.json)" ] ||
    fail "on moved $(num moves t3_on.json) times, nopredict $(num moves t3_nopredict.json)"

# Replay: a real run on 2 ranks (rank 1 3x slower, so it moves) records its
# balancing points; the simulator decides from those measures and must agree
# at every point, ending in the real run's layout.
"$MPIEXEC" $NP 2 "$TENBIN" himeno --size S --iters 60 --interval 5 --slowdown 1:3 \
    --record rec.jsonl --json > real.json
points=$(grep -c '"point"' rec.jsonl)
[ "$points" -ge 10 ] || fail "the record has $points points: $(head -c 300 rec.jsonl)"
"$TENBIN" himeno --sim hosts=2 --size S --iters 60 --replay rec.jsonl --json > replay.json ||
    fail "replay failed"
[ "$(num replay_points replay.json)" = "$points" ] || fail "replayed $(num replay_points replay.json) of $points points"
[ "$(num replay_agree replay.json)" = "$points" ] || fail "only $(num replay_agree replay.json) of $points decisions agree"
[ "$(layouts real.json | head -n 1)" = "$(layouts replay.json | head -n 1)" ] ||
    fail "final layouts differ: real $(layouts real.json | head -n 1), replay $(layouts replay.json | head -n 1)"
[ "$(num moves replay.json)" = "$(num moves real.json)" ] || fail "moves differ"
# A record whose first point that kept the layout says it moved no longer agrees: exit 1.
sed '0,/"move": 0/s//"move": 1/' rec.jsonl > bad.jsonl
if "$TENBIN" himeno --sim hosts=2 --size S --iters 60 --replay bad.jsonl > out.txt 2> err.txt; then
    fail "a tampered record was accepted"
else
    rc=$?
fi
[ "$rc" -eq 1 ] || fail "tampered record: exit status $rc"
grep -q "^tenbin himeno: replay: at iteration [0-9]*" err.txt || fail "tampered record: $(cat err.txt)"

# The chart over rank counts.
"$TENBIN" himeno --sim "hosts=8,speed=0.5-1.5" --ranks 2,4,8 --size S --iters 40 --balance all \
    --svg chart.svg > table.txt
grep -q "<svg" chart.svg || fail "no SVG chart"
[ "$(grep -c -E '^ +[248] +(off|nopredict|on) ' table.txt)" -eq 9 ] || fail "table: $(cat table.txt)"

# Bad input: one line, exit status 2, nothing left behind.
expect_usage() {
    if "$@" > err.out 2> err.txt; then fail "accepted: $*"; else rc=$?; fi
    [ "$rc" -eq 2 ] || fail "exit status $rc for: $* ($(cat err.txt))"
    [ "$(wc -l < err.txt)" -eq 1 ] || fail "not one line for: $* ($(cat err.txt))"
    grep -q "^tenbin himeno: " err.txt || fail "no error line for: $* ($(cat err.txt))"
}
expect_usage "$TENBIN" himeno --sim no-such-platform.json --ranks 2
expect_usage "$TENBIN" himeno --sim hosts=4 --ranks 5
expect_usage "$TENBIN" himeno --sim hosts=4
expect_usage "$TENBIN" himeno --sim hosts=4 --ranks 2 --size 3x3
expect_usage "$TENBIN" himeno --sim hosts=64 --ranks 64 --size XS --iters 5
expect_usage "$TENBIN" himeno --sim hosts=4 --ranks 2 --guards loud
expect_usage "$TENBIN" himeno --sim hosts=4 --ranks 2 --point-cost -1
expect_usage "$TENBIN" himeno --sim hosts=4 --ranks 2 --svg never.svg
expect_usage "$TENBIN" himeno --sim hosts=4 --ranks 2 --force-moves 3
expect_usage "$TENBIN" himeno --sim hosts=4 --replay no-such-record.jsonl
echo "garbage" > garbage.jsonl
expect_usage "$TENBIN" himeno --sim hosts=4 --replay garbage.jsonl
grep -q "garbage.jsonl:1:" err.txt || fail "malformed record: $(cat err.txt)"
expect_usage "$TENBIN" himeno --sim hosts=4 --size M --replay rec.jsonl
expect_usage "$TENBIN" himeno --ranks 4
# Records found by tests/fuzz: out-of-range numbers, min_units 0, 2e9 ranks.
for f in "$TB_SOURCE_DIR"/tests/fuzz/regress/fuzz_redist_record/*.jsonl; do
    expect_usage "$TENBIN" himeno --sim hosts=4,cores=2 --iters 20 --replay "$f"
done
[ ! -e never.svg ] || fail "a chart was written after an error"
echo "ok"
