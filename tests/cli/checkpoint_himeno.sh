#!/bin/sh
# Checkpoints of S4's distributed arrays (tb_redist_checkpoint/restore,
# himeno --checkpoint/--resume): a run stopped at any moment -- SIGTERM to
# the ranks, a rank killed with SIGKILL, the whole job killed with SIGKILL
# in the middle of a write -- resumes to the same p_bitsum as a run never
# stopped, on any number of ranks, and to the same gosa on as many ranks
# (the same layout: float sums in the same order).  Foreign, truncated and
# damaged checkpoints are refused with one line.  No timing is asserted: the
# kills come wherever they come.
# Environment (set by CTest): TENBIN, MPIEXEC, MPIEXEC_NUMPROC_FLAG, TB_TEST_TMP.
set -eu
cd "$TB_TEST_TMP"
. "$TB_SOURCE_DIR/tests/cli/expect.inc"
. "$TB_SOURCE_DIR/tests/cli/procs.inc"
NP=${MPIEXEC_NUMPROC_FLAG:--n}
D=$PWD
GRID="--size S --iters 120 --balance off"

himeno() { n=$1; shift; "$MPIEXEC" $NP "$n" "$TENBIN" himeno $GRID -q "$@"; }
num() { grep -o "\"$1\": [-+.e0-9]*" "$2" | head -1 | cut -d' ' -f2; }

himeno 2 --json > ref.json
REF_BITS=$(num p_bitsum ref.json)
REF_GOSA=$(num gosa ref.json)
[ -n "$REF_BITS" ] && [ -n "$REF_GOSA" ] || fail "no reference: $(cat ref.json)"

# wait until the checkpoint is there (the run is under way)
wait_for() { wait_file "$1" || fail "no checkpoint $1"; }

# resume FILE N [gosa]: finish from FILE on N ranks: the reference's
# p_bitsum (and gosa when asked), some sweeps from the file
resume_ok() {
    himeno "$2" --resume "$1" --json > res.json 2> err.txt || fail "resume $1 on $2: $(cat err.txt)"
    [ "$(num p_bitsum res.json)" = "$REF_BITS" ] || fail "resume $1 on $2: p_bitsum: $(cat res.json)"
    [ $# -lt 3 ] || [ "$(num gosa res.json)" = "$REF_GOSA" ] ||
        fail "resume $1 on $2: gosa $(num gosa res.json), not $REF_GOSA"
    r=$(num resumed res.json)
    [ "$r" -gt 0 ] && [ "$r" -lt 120 ] || fail "resume $1 on $2: resumed $r"
}

# 1. SIGTERM to every rank: the last checkpoint is written, and said
rm -f a.ck
himeno 2 --checkpoint "$D/a.ck" --checkpoint-interval 0.3 > out.txt 2> err.txt &
pid=$!
wait_for a.ck
for r in 0 1; do kill -TERM "$(rank_pid "himeno .*$D/a.ck" $r)" 2> /dev/null || true; done
wait $pid && fail "SIGTERM: exit 0" || true
grep -q "interrupted by SIGTERM before sweep [0-9]* of 120; the checkpoint $D/a.ck holds sweeps 1-[0-9]* (--resume $D/a.ck continues)" err.txt ||
    fail "SIGTERM: no line: $(cat err.txt)"
none_left "SIGTERM"
resume_ok a.ck 2 gosa

# 2. a rank killed with SIGKILL: the job ends, the checkpoint is whole;
# resumed on another number of ranks
rm -f b.ck
himeno 2 --checkpoint "$D/b.ck" --checkpoint-interval 0.2 > out.txt 2> err.txt &
pid=$!
wait_for b.ck
sleep 0.5
kill -KILL "$(rank_pid "himeno .*$D/b.ck" 1)" || fail "no rank 1"
wait $pid && fail "SIGKILL of a rank: exit 0" || true
none_left "SIGKILL of rank 1"
resume_ok b.ck 3

# 3. the whole job killed with SIGKILL while it writes after every sweep:
# the file is the last whole checkpoint, never a torn one
rm -f c.ck
himeno 2 --checkpoint "$D/c.ck" --checkpoint-interval 0 > out.txt 2> err.txt &
pid=$!
wait_for c.ck
sleep 0.7
kill_job $pid "himeno .*$D/c.ck"
none_left "SIGKILL of the job"
resume_ok c.ck 2 gosa
resume_ok c.ck 1

# 4. the same file to resume from and to keep: started when it is not there,
# then continued with more sweeps
rm -f d.ck
"$MPIEXEC" $NP 2 "$TENBIN" himeno --size S --iters 60 --balance off -q --checkpoint d.ck --resume d.ck > out.txt 2> err.txt ||
    fail "first run of a requeued job: $(cat err.txt)"
himeno 2 --checkpoint d.ck --resume d.ck --json > res.json 2> err.txt || fail "continued: $(cat err.txt)"
[ "$(num p_bitsum res.json)" = "$REF_BITS" ] && [ "$(num gosa res.json)" = "$REF_GOSA" ] &&
    [ "$(num resumed res.json)" = 60 ] || fail "continued: $(cat res.json)"

# 5. refused with one line
refused() {
    status=$1 pattern=$2
    shift 2
    set +e
    "$MPIEXEC" $NP 2 "$TENBIN" himeno "$@" > out.txt 2> err.txt
    st=$?
    set -e
    [ "$st" = "$status" ] || fail "$*: exit $st: $(cat err.txt)"
    [ "$(grep -c -- "$pattern" err.txt)" = 1 ] || fail "$*: no single line '$pattern': $(cat err.txt)"
}
refused 1 "a.ck: a checkpoint of another run (himeno 64x64x128), not of this one (himeno 32x32x64)" \
    --size XS --resume a.ck
refused 2 "d.ck: it holds 120 sweeps, as many as --iters 100 asks or more" --size S --resume d.ck
size=$(wc -c < a.ck)
head -c $((size - 1000)) a.ck > short.ck
refused 1 "short.ck: truncated ([0-9]* bytes where its records make $size)" --size S --resume short.ck
cp a.ck bad.ck
printf 'X' | dd of=bad.ck bs=1 seek=$((size / 2)) conv=notrunc 2> /dev/null
refused 1 "bad.ck: the record at byte [0-9]* (array [a-z0-9]*) is damaged" --size S --resume bad.ck
echo "not a checkpoint" > text.ck
refused 1 "text.ck: not a Tenbin checkpoint" --size S --resume text.ck
refused 1 "missing.ck: cannot read" --size S --resume missing.ck
expect 1 "a.ck: a checkpoint of redist-arrays, not of mw-journal" mandel --resume a.ck
expect 2 "a simulated run keeps no checkpoint" himeno --sim hosts=2 --ranks 2 --checkpoint x.ck
echo "ok checkpoint_himeno"
