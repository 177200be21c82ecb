#!/bin/sh
# tenbin emu sweep: one program emulated over a range of rank counts (and of
# master counts through {m}).  Known answers: the saturated single master of
# tests/cli/emu.sh has a closed-form makespan at P = 10, every point equals
# a separate `tenbin emu` run, and the saturation point and the best master
# count are recomputed from the JSON.  Every usage error, a platform too
# small, an unwritable --svg and a failing program give one line and a
# non-zero exit.
set -eu
cd "$TB_TEST_TMP"
. "$TB_SOURCE_DIR/tests/cli/expect.inc"
PAT=$EMU_PATTERNS

# close A B WHAT: relative difference at most 1e-9.
close() {
    awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; if (d < 0) d = -d; m = b < 0 ? -b : b;
                                     exit !(d <= 1e-9 * m) }' || fail "$3: got $1, want $2"
}
# arr KEY N FILE: the Nth (1-based) number of the first JSON array KEY.
arr() { sed -n "s/.*\"$1\": \[\([^]]*\)\].*/\1/p" "$3" | head -n 1 | tr -d ' ' | cut -d, -f"$2"; }
# val KEY FILE: the first scalar after "KEY": .
val() { sed -n "s/.*\"$1\": \([-0-9.eE+a-z]*\).*/\1/p" "$2" | head -n 1; }

P2=hosts=16,speed=1e12,L=50us,o=12.1us,ob=0.182us,O=0.07ns,G=20ns
"$TENBIN" emu sweep --platform $P2 --ranks 3,5,10,12 --json --timeout 120 --progress \
    -- "$PAT" master 3000 16 64 > sweep.json 2> sweep.err || fail "sweep: $(cat sweep.err)"
[ "$(grep -c '^tenbin emu sweep: point [1-4]/4: P = ' sweep.err)" = 4 ] || fail "progress lines: $(cat sweep.err)"
want=$(awk 'BEGIN { P = 10; N = 3000; k1 = 16; k2 = 64; L = 50e-6; G = 20e-9;
    o1 = 12.1e-6 + 0.182e-6 * P + 0.07e-9 * k1; o2 = 12.1e-6 + 0.182e-6 * P + 0.07e-9 * k2;
    printf "%.17g", o1 + L + (k1 - 1) * G + (N + P - 1) * (o1 + o2) + L + (k2 - 1) * G + o2 }')
close "$(arr makespan_s 3 sweep.json)" "$want" "saturated master at P = 10"
# Each point is what tenbin emu predicts alone.
i=0
for p in 3 5 10 12; do
    i=$((i + 1))
    "$TENBIN" emu --platform $P2 -n $p --json --timeout 120 -- "$PAT" master 3000 16 64 > one.json
    one=$(sed -n 's/.*"predicted_makespan_s":\([-0-9.eE+]*\).*/\1/p' one.json | head -n 1)
    close "$(arr makespan_s $i sweep.json)" "$one" "sweep vs emu at P = $p"
done
# The master's shares add up to the makespan at every P.
for i in 1 2 3 4; do
    s=$(awk -v a="$(arr master_compute_s $i sweep.json)" -v b="$(arr master_send_s $i sweep.json)" \
            -v c="$(arr master_recv_s $i sweep.json)" -v d="$(arr master_idle_s $i sweep.json)" \
            'BEGIN { printf "%.17g", a + b + c + d }')
    close "$s" "$(arr makespan_s $i sweep.json)" "master breakdown at point $i"
done
# Saturation: the first P within 2 % of the least makespan, recomputed.
sat=$(awk -v m="$(arr makespan_s '1-' sweep.json)" -v r="3,5,10,12" 'BEGIN {
    n = split(m, y, ","); split(r, p, ","); least = y[1];
    for (i = 2; i <= n; i++) if (y[i] < least) least = y[i];
    for (i = 1; i <= n; i++) if (y[i] <= 1.02 * least) { print p[i]; exit } }')
[ "$(val saturation_P sweep.json)" = "$sat" ] || fail "saturation_P: want $sat: $(cat sweep.json)"
[ "$sat" = 10 ] || fail "the saturated master's saturation point: $sat, want 10"
[ "$(val failed_runs sweep.json)" = 0 ] || fail "failed runs: $(cat sweep.json)"

# Master counts: msmandel with ml:{m}, the table, the best count and the plot.
if [ -n "${MSMANDEL:-}" ]; then
    "$TENBIN" emu sweep --platform hosts=16,L=50us,o=10us --ranks 4,8 --masters 1,2 \
        --svg sweep.svg --timeout 120 -- "$MSMANDEL" --variant ml:{m} --width 64 --height 64 \
        --max-iter 200 > table.txt 2> table.err || fail "masters sweep: $(cat table.err)"
    grep -q '^     P       1 master      2 masters   master (rank 0)' table.txt ||
        fail "table header: $(cat table.txt)"
    [ "$(grep -c '^ *[48] ' table.txt)" = 2 ] || fail "table rows: $(cat table.txt)"
    grep -q '^1 master(s): saturation point P = [48] ' table.txt || fail "1 master: $(cat table.txt)"
    grep -q '^2 master(s): saturation point P = [48] ' table.txt || fail "2 masters: $(cat table.txt)"
    best=$(awk '/^ *[48] / { for (i = 2; i <= 3; i++) if (!b || $i < b) { b = $i; m = i - 1 } }
                END { print m }' table.txt)
    grep -q "^best master count: $best " table.txt || fail "best master count $best: $(cat table.txt)"
    grep -q '<svg' sweep.svg && grep -q '2 masters' sweep.svg || fail "sweep.svg: $(head -c 300 sweep.svg)"
fi

# Errors: one line, exit 2 (usage) or 1.
expect 2 "--platform and --ranks are required" emu sweep --ranks 2 -- "$PAT" master 10 1 1
expect 2 "no program given" emu sweep --platform hosts=4 --ranks 2
expect 2 "--masters: no {m} in the program's arguments" emu sweep --platform hosts=4 --ranks 2 \
    --masters 1,2 -- "$PAT" master 10 1 1
expect 2 "have {m} but no --masters LIST" emu sweep --platform hosts=4 --ranks 2 -- "$PAT" {m}
expect 2 "--ranks: P = 8 does not fit the platform's 4 cores" emu sweep --platform hosts=4 \
    --ranks 2,8 -- "$PAT" master 10 1 1
expect 2 "--ranks: values must ascend, got '4,2'" emu sweep --platform hosts=4 --ranks 4,2 \
    -- "$PAT" master 10 1 1
expect 2 "--tolerance: expected a fraction" emu sweep --platform hosts=4 --ranks 2 --tolerance 1.5 \
    -- "$PAT" master 10 1 1
expect 2 "--master 4: the smallest P has only 2 ranks" emu sweep --platform hosts=8 --ranks 2,4 \
    --master 4 -- "$PAT" master 10 1 1
expect 1 "--svg no/such/dir/s.svg: cannot write" emu sweep --platform hosts=4 --ranks 2 \
    --svg no/such/dir/s.svg -- "$PAT" master 10 1 1
# A program that fails at every P: a line per run, "failed" in the table, exit 1.
set +e
"$TENBIN" emu sweep --platform hosts=4 --ranks 2,3 --timeout 60 -- "$PAT" nosuchmode > out.txt 2> err.txt
got=$?
set -e
[ "$got" = 1 ] || fail "failing program: exit $got: $(cat err.txt)"
[ "$(grep -c 'P = [23]: .*the run failed' err.txt)" = 2 ] || fail "failing program: $(cat err.txt)"
[ "$(grep -c ' failed$' out.txt)" = 2 ] || fail "failing program's table: $(cat out.txt)"
echo "emu sweep: ok"
