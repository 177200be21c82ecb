#!/bin/sh
# Checkpoints of mandel's master-worker runs (tb_mw_set_checkpoint, --resume)
# and of bnb's open subproblems (tb_bnb_set_checkpoint), on many ranks and
# on one, each resumed on the other:
# a run stopped at any moment -- SIGTERM, a worker rank killed with SIGKILL,
# the whole job killed with SIGKILL -- resumes to the same image and
# checksum as an uninterrupted run, computing only the rows it did not have,
# on fewer ranks too.  Damaged, truncated, foreign and non-checkpoint files
# are refused with one line.  No timing is asserted: the kills come at
# different points of the run, whatever they are.
# Environment (set by CTest): TENBIN, MPIEXEC, MPIEXEC_NUMPROC_FLAG, TB_TEST_TMP.
set -eu
cd "$TB_TEST_TMP"
. "$TB_SOURCE_DIR/tests/cli/expect.inc"
. "$TB_SOURCE_DIR/tests/cli/procs.inc"
NP=${MPIEXEC_NUMPROC_FLAG:--n}
# The runs this test stops name a file in its directory, D: that is how it
# finds their processes (other tests run tenbin at the same time).
D=$PWD
PIC="--width 1600 --height 1600 --max-iter 2000"

mandel() { n=$1; shift; "$MPIEXEC" $NP "$n" "$TENBIN" mandel $PIC -q "$@"; }
sum_of() { grep '^checksum:' "$1" | cut -d' ' -f2; }
json_num() { grep -o "\"$1\": [0-9]*" "$2" | head -1 | cut -d' ' -f2; }

# wait until the checkpoint has something in it (the run is under way)
wait_for_rows() { wait_file "$1" 100000 || fail "no rows reached $1"; }

mandel 3 --checksum > ref.txt
REF=$(sum_of ref.txt)
[ -n "$REF" ] || fail "no reference checksum: $(cat ref.txt)"

# resume FILE N: finish the run from FILE on N ranks; its checksum must be
# the reference's and some rows must have come from the file
resume_ok() {
    mandel "$2" --resume "$1" --checksum --json > res.json 2> err.txt ||
        fail "resume from $1: $(cat err.txt)"
    [ "$(grep -o '"checksum": [0-9]*' res.json | cut -d' ' -f2)" = "$REF" ] ||
        fail "resume from $1: checksum differs: $(cat res.json)"
    r=$(json_num resumed res.json)
    [ "$r" -gt 0 ] && [ "$(json_num results res.json)" = 1600 ] ||
        fail "resume from $1: resumed $r: $(cat res.json)"
}

# 1. SIGTERM to the ranks (as scancel sends it; mpiexec would pass it on,
# but may be gone before it forwards the line): rank 0 makes the journal
# durable and says so
rm -f a.ck
mandel 3 --checkpoint "$D/a.ck" --checkpoint-interval 0.2 > out.txt 2> err.txt &
pid=$!
wait_for_rows a.ck
for r in 0 1 2; do kill -TERM "$(rank_pid "mandel .*$D/" $r)" 2> /dev/null || true; done
wait $pid && fail "SIGTERM: exit 0" || true
grep -q "interrupted by SIGTERM: [0-9]* of 1600 tasks were done and delivered; the checkpoint $D/a.ck holds [0-9]* of them" err.txt ||
    fail "SIGTERM: no line: $(cat err.txt)"
none_left "SIGTERM"
resume_ok a.ck 2

# 2. a worker rank killed with SIGKILL: the job ends (mpiexec names the
# rank), the checkpoint is intact
rm -f b.ck
mandel 3 --checkpoint "$D/b.ck" --checkpoint-interval 0.2 > out.txt 2> err.txt &
pid=$!
wait_for_rows b.ck
w=$(rank_pid "mandel .*$D/" 2) || fail "no rank 2"
kill -KILL "$w"
wait $pid && fail "SIGKILL of a rank: exit 0" || true
none_left "SIGKILL of rank 2"
resume_ok b.ck 3

# 3. the whole job killed with SIGKILL (rank 0 too, maybe in the middle of
# a write): a torn last record is dropped
rm -f c.ck
mandel 3 --checkpoint "$D/c.ck" --checkpoint-interval 0 > out.txt 2> err.txt &
pid=$!
wait_for_rows c.ck
kill_job $pid "mandel .*$D/c.ck"
none_left "SIGKILL of the job"
resume_ok c.ck 1

# 4. the same file to resume from and to keep: continued, then complete;
# resuming a complete checkpoint computes nothing
cp a.ck d.ck
mandel 2 --resume d.ck --checkpoint d.ck --checksum > out.txt 2> err.txt || fail "continue: $(cat err.txt)"
[ "$(sum_of out.txt)" = "$REF" ] || fail "continue: checksum"
mandel 2 --resume d.ck --checksum --json > res.json 2> err.txt || fail "complete: $(cat err.txt)"
[ "$(json_num resumed res.json)" = 1600 ] || fail "complete: $(cat res.json)"
grep -q "\"checksum\": $REF" res.json || fail "complete: checksum: $(cat res.json)"

# 5. refused with one line, exit 1, on every rank count
refused() {
    pattern=$1
    shift
    set +e
    mandel 2 "$@" > out.txt 2> err.txt
    st=$?
    set -e
    [ "$st" = 1 ] || fail "$*: exit $st: $(cat err.txt)"
    [ "$(grep -c -- "$pattern" err.txt)" = 1 ] || fail "$*: no single line '$pattern': $(cat err.txt)"
}
echo "not a checkpoint at all" > text.ck
refused "text.ck: not a Tenbin checkpoint" --resume text.ck
head -c 20 a.ck > short.ck
refused "short.ck: truncated in its header" --resume short.ck
refused "a.ck: a checkpoint of another run (mandel 1600x1600 max-iter 2000 .*), not of this one (mandel 1600x1600 max-iter 1999" \
    --max-iter 1999 --resume a.ck
# one byte changed in the middle of a record: damaged, not silently dropped
cp a.ck bad.ck
size=$(wc -c < bad.ck)
printf 'X' | dd of=bad.ck bs=1 seek=$((size / 2)) conv=notrunc 2> /dev/null
refused "bad.ck: record [0-9]* (at byte [0-9]*) is damaged" --resume bad.ck
refused "missing.ck: cannot read" --resume missing.ck
expect 2 "a simulated run keeps no checkpoint" mandel --sim hosts=4 --checkpoint x.ck

# 6. bnb: stopped by SIGUSR1 (what Slurm sends ahead of a time limit), its
# open subproblems kept; resumed on fewer ranks, the known optimum proven
K="$TB_SOURCE_DIR/tests/data/knapsack/knapPI_3_1000_1000_1.txt"
rm -f k.ck
"$MPIEXEC" $NP 4 "$TENBIN" bnb knapsack "$K" --checkpoint "$D/k.ck" -q --json > out.txt 2> err.txt &
pid=$!
sleep 1.5
kill -USR1 $pid
set +e
wait $pid
st=$?
set -e
if grep -q '"proven": true' out.txt; then
    echo "note: bnb ended before the signal; the resume below starts from a finished search"
else
    [ "$st" = 138 ] || fail "bnb SIGUSR1: exit $st: $(cat err.txt)"
    grep -q "bnb: [0-9]* open subproblems kept in $D/k.ck: --resume $D/k.ck continues the search" err.txt ||
        fail "bnb SIGUSR1: no line about the checkpoint: $(cat err.txt)"
fi
[ -s k.ck ] || fail "bnb: no checkpoint written"
"$MPIEXEC" $NP 3 "$TENBIN" bnb knapsack "$K" --checkpoint k.ck --resume k.ck -q --json > out.txt 2> err.txt ||
    fail "bnb resume: $(cat err.txt)"
grep -q '"optimum": 14390,' out.txt && grep -q '"proven": true' out.txt ||
    fail "bnb resume: not the optimum 14390 proven: $(cat out.txt)"
# killed outright (SIGKILL of every process of the job) after some
# checkpoint rounds: the last round's file is whole, and resumed it proves
# the optimum
rm -f r.ck
"$MPIEXEC" $NP 3 "$TENBIN" bnb knapsack "$K" --checkpoint "$D/r.ck" --checkpoint-interval 0.3 -q > out.txt 2> err.txt &
pid=$!
wait_file r.ck || true
sleep 0.5
kill_job $pid "bnb knapsack .*$D/r.ck"
if [ -s r.ck ]; then
    "$MPIEXEC" $NP 2 "$TENBIN" bnb knapsack "$K" --resume r.ck -q --json > out.txt 2> err.txt ||
        fail "bnb resume after SIGKILL: $(cat err.txt)"
    grep -q '"optimum": 14390,' out.txt && grep -q '"proven": true' out.txt ||
        fail "bnb resume after SIGKILL: not 14390 proven: $(cat out.txt)"
else
    echo "note: the search ended before a checkpoint round"
fi

# refused: another instance, another mechanism's checkpoint
K2="$TB_SOURCE_DIR/tests/data/knapsack/knapPI_3_500_1000_1.txt"
set +e
"$MPIEXEC" $NP 2 "$TENBIN" bnb knapsack "$K2" --resume k.ck -q > out.txt 2> err.txt
st=$?
set -e
[ "$st" = 1 ] && [ "$(grep -c 'k.ck: a checkpoint of another run (bnb knapsack knapPI_3_1000_1000_1.txt' err.txt)" = 1 ] ||
    fail "bnb: a checkpoint of another instance: exit $st: $(cat err.txt)"
set +e
"$MPIEXEC" $NP 2 "$TENBIN" bnb knapsack "$K" --resume a.ck -q > out.txt 2> err.txt
st=$?
set -e
[ "$st" = 1 ] && [ "$(grep -c 'a.ck: a checkpoint of mw-journal, not of bnb-open' err.txt)" = 1 ] ||
    fail "bnb: mandel's checkpoint: exit $st: $(cat err.txt)"
# 7. bnb on one rank (no mpiexec: a first run usually is one): stopped by
# SIGTERM, its queue and incumbent kept in the same file format; resumed on
# 3 ranks, and a search stopped on 3 ranks resumed on one, each proving the
# optimum
opt_ok() { # what, ranks: out.txt has the known optimum, proven, on that many ranks
    grep -q '"optimum": 14390,' out.txt && grep -q '"proven": true' out.txt &&
        grep -q "\"ranks\": $2," out.txt || fail "$1: not 14390 proven on $2 ranks: $(cat out.txt)"
}
rm -f s.ck
"$TENBIN" bnb knapsack "$K" --checkpoint "$D/s.ck" -q --json > out.txt 2> err.txt &
pid=$!
sleep 1.5
kill -TERM $pid
set +e
wait $pid
st=$?
set -e
stopped=0
if grep -q '"proven": true' out.txt; then
    echo "note: the sequential search ended before the signal"
else
    stopped=1
    [ "$st" = 143 ] && grep -q '"interrupted": "SIGTERM"' out.txt ||
        fail "bnb one rank SIGTERM: exit $st: $(cat out.txt) $(cat err.txt)"
    [ "$(grep -c "bnb: [0-9]* open subproblems kept in $D/s.ck: --resume $D/s.ck continues the search" err.txt)" = 1 ] ||
        fail "bnb one rank SIGTERM: no single line about the checkpoint: $(cat err.txt)"
fi
"$MPIEXEC" $NP 3 "$TENBIN" bnb knapsack "$K" --resume s.ck -q --json > out.txt 2> err.txt ||
    fail "bnb 1 -> 3 ranks: $(cat err.txt)"
opt_ok "bnb 1 -> 3 ranks" 3
rm -f m.ck
"$MPIEXEC" $NP 3 "$TENBIN" bnb knapsack "$K" --checkpoint "$D/m.ck" -q --json > out.txt 2> err.txt &
pid=$!
sleep 1.5
kill -USR1 $pid
set +e
wait $pid
st=$?
set -e
grep -q '"proven": true' out.txt || [ "$st" = 138 ] || fail "bnb 3 ranks SIGUSR1: exit $st: $(cat err.txt)"
"$TENBIN" bnb knapsack "$K" --checkpoint m.ck --resume m.ck -q --json > out.txt 2> err.txt ||
    fail "bnb 3 -> 1 rank: $(cat err.txt)"
opt_ok "bnb 3 -> 1 rank" 1
# m.ck now holds the finished search: resumed, nothing is left to expand
"$TENBIN" bnb knapsack "$K" --resume m.ck -q --json > out.txt 2> err.txt ||
    fail "bnb finished search: $(cat err.txt)"
opt_ok "bnb finished search" 1
grep -q '"nodes": 0,' out.txt || fail "bnb finished search: nodes expanded: $(cat out.txt)"
# one rank killed outright after some periodic checkpoints (nothing is
# written at a SIGKILL): the last one is whole, and resumed it proves the
# optimum
rm -f q.ck
"$TENBIN" bnb knapsack "$K" --checkpoint "$D/q.ck" --checkpoint-interval 0.3 -q > out.txt 2> err.txt &
pid=$!
wait_file q.ck || true
sleep 0.5
kill_job $pid "bnb knapsack .*$D/q.ck"
if [ -s q.ck ]; then
    "$MPIEXEC" $NP 3 "$TENBIN" bnb knapsack "$K" --resume q.ck -q --json > out.txt 2> err.txt ||
        fail "bnb one rank resumed after SIGKILL: $(cat err.txt)"
    opt_ok "bnb one rank resumed after SIGKILL" 3
else
    echo "note: the sequential search ended before a checkpoint"
fi
# refused on one rank as on many: exit 1, one line
expect 1 "k.ck: a checkpoint of another run (bnb knapsack knapPI_3_1000_1000_1.txt" \
    bnb knapsack "$K2" --resume k.ck -q
expect 1 "a.ck: a checkpoint of mw-journal, not of bnb-open" bnb knapsack "$K" --resume a.ck -q
expect 1 "text.ck: not a Tenbin checkpoint" bnb knapsack "$K" --resume text.ck -q
head -c 30 k.ck > kshort.ck
expect 1 "kshort.ck: truncated in its header" bnb knapsack "$K" --resume kshort.ck -q
if [ $stopped = 1 ]; then # s.ck holds thousands of subproblems
    cp s.ck sbad.ck
    size=$(wc -c < sbad.ck)
    printf 'X' | dd of=sbad.ck bs=1 seek=$((size / 2)) conv=notrunc 2> /dev/null
    expect 1 "sbad.ck: record [0-9]* (at byte [0-9]*) is damaged" bnb knapsack "$K" --resume sbad.ck -q
fi

# a simulated run keeps no checkpoint, and says why in one line (exit 2)
expect 2 "bnb: --checkpoint: a simulated run keeps no checkpoint: a checkpoint holds the open subproblems, not the simulation's virtual clock" \
    bnb knapsack "$K" --sim hosts=4 --checkpoint sim.ck
expect 2 "bnb: --resume: a simulated run keeps no checkpoint: .*rerun it (it is deterministic), or checkpoint a real run" \
    bnb knapsack "$K" --sim hosts=1 --ranks 1 --resume k.ck
[ ! -e sim.ck ] || fail "bnb --sim: a checkpoint was written"
echo "ok checkpoint"
