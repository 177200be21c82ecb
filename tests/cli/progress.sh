#!/bin/sh
# Long commands print progress lines by default only when the user watches:
# stderr a terminal (here a pseudo-terminal from script(1)), or, for a rank
# under mpiexec, mpiexec's stderr a terminal.  --progress forces them in a
# script, --quiet turns them off.
# Environment (set by CTest): TENBIN, MPIEXEC, MPIEXEC_NUMPROC_FLAG, TB_TEST_TMP.
set -eu
cd "$TB_TEST_TMP"
. "$TB_SOURCE_DIR/tests/cli/expect.inc"
NP=${MPIEXEC_NUMPROC_FLAG:--n}
command -v script > /dev/null || { echo "script(1) not found: skipped"; exit 77; }
EXP="flow experiment --instances 1 --tasks 60 --its-size 10 --table 3 --out fx"

# a terminal: on by default, off with --quiet
script -qec "\"$TENBIN\" $EXP" /dev/null > tty.txt
grep -aq '^tenbin flow experiment: table 3, .*: instance 1/1' tty.txt || fail "no progress on a terminal: $(cat tty.txt)"
script -qec "\"$TENBIN\" $EXP --quiet" /dev/null > tty.txt
! grep -aq 'instance 1/1' tty.txt || fail "progress with --quiet: $(cat tty.txt)"
# a file: off by default, on with --progress
"$TENBIN" $EXP > out.txt 2> err.txt
! grep -q 'instance 1/1' err.txt || fail "progress into a file: $(cat err.txt)"
"$TENBIN" $EXP --progress > out.txt 2> err.txt
grep -q 'instance 1/1' err.txt || fail "no progress with --progress: $(cat err.txt)"

# a rank under mpiexec: mpiexec's stderr decides
script -qec "\"$MPIEXEC\" $NP 2 \"$TENBIN\" himeno --size XS --iters 20" /dev/null > tty.txt
grep -aq '^progress: 20/20 sweeps (100.0%)' tty.txt || fail "no progress under mpiexec on a terminal: $(cat tty.txt)"
"$MPIEXEC" $NP 2 "$TENBIN" himeno --size XS --iters 20 > out.txt 2> err.txt
! grep -q 'sweeps' err.txt || fail "progress from mpiexec into a file: $(cat err.txt)"
"$MPIEXEC" $NP 2 "$TENBIN" himeno --size XS --iters 20 --progress > out.txt 2> err.txt
grep -q '^progress: 20/20 sweeps' err.txt || fail "no progress with --progress: $(cat err.txt)"

# branch-and-bound on one rank (the sequential search) prints the supervisor's lines too
TENBIN_PROGRESS_INTERVAL=0.05 "$TENBIN" bnb knapsack "$TB_SOURCE_DIR/tests/data/knapsack/knapPI_3_200_1000_2.txt" \
    --progress > out.txt 2> err.txt
grep -q '^bnb: [0-9.]* s  incumbent [0-9]*  bound [0-9.]*  gap .*  pending [0-9]*  nodes [0-9]*$' err.txt ||
    fail "no progress from a one-rank bnb: $(cat err.txt)"
"$TENBIN" bnb knapsack "$TB_SOURCE_DIR/tests/data/knapsack/knapPI_3_200_1000_2.txt" > out.txt 2> err.txt
! grep -q '^bnb: ' err.txt || fail "bnb progress into a file: $(cat err.txt)"
echo "ok progress"
