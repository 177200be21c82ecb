#!/bin/sh
# User code that fails on a real run: a worker function that returns an
# error, crashes (SIGSEGV, SIGFPE) or never returns within the task timeout,
# a result function that fails, and a branch-and-bound operation that fails
# or crashes.  Each ends the run with one line naming
# the task and the rank, exit status 1, every rank gone, and no output file
# (tests/mw/mw_fault.c writes it through a temporary name only on success).
set -eu
cd "$TB_TEST_TMP"
NP=${MPIEXEC_NUMPROC_FLAG:--n}
fail() { echo "FAIL: $*" >&2; exit 1; }

# run MODE TASK STATUS PATTERN [TIMEOUT]: mw_fault on 3 ranks; the exit
# status, exactly one stderr line matching PATTERN, no output file, no
# process left.  PROG=bnb_fault: its arguments are MODE only.
run() {
    mode=$1 task=$2 status=$3 pattern=$4
    shift 4
    prog=${PROG:-$MW_FAULT}
    rm -f out.txt out.txt.tmp
    set +e
    if [ "$prog" = "$MW_FAULT" ]; then
        timeout 60 "$MPIEXEC" $NP 3 "$prog" "$mode" "$task" out.txt "$@" > run.out 2> run.err
    else
        timeout 60 "$MPIEXEC" $NP 3 "$prog" "$mode" out.txt > run.out 2> run.err
    fi
    got=$?
    set -e
    [ "$got" != 124 ] || fail "$mode: the run hung (killed after 60 s)"
    [ "$got" = "$status" ] || fail "$mode: exit $got, want $status; stderr: $(cat run.err)"
    n=$(grep -c -- "$pattern" run.err || true)
    [ "$n" = 1 ] || fail "$mode: want one line matching '$pattern', got $n: $(cat run.err)"
    [ ! -e out.txt ] || fail "$mode: an output file was left behind"
    [ ! -e out.txt.tmp ] || fail "$mode: a temporary file was left behind"
    # Every rank is gone (pgrep -f would match this shell's own command line
    # only through the program's path, which it does not contain).
    sleep 0.2
    if pgrep -f "$prog" > /dev/null; then
        pgrep -a -f "$prog" >&2
        pkill -9 -f "$prog" || true
        fail "$mode: processes of the run were left"
    fi
}

# The run that does not fail writes the sum of i^2 for i < 64.
"$MPIEXEC" $NP 3 "$MW_FAULT" ok 0 out.txt 0.5 || fail "ok: exit $?"
[ "$(cat out.txt)" = 85344 ] || fail "ok: sum $(cat out.txt), want 85344"
run error 17 1 "^mw_fault: task 17 on rank [12] failed: a task failed$"
run result 23 1 "^mw_fault: task 23 on rank 0 failed: input/output error$"
run segv 17 1 "^tenbin: rank [12]: task 17 crashed (signal 11, SIGSEGV); ending the job$"
run fpe 9 1 "^tenbin: rank [12]: task 9 crashed (signal 8, SIGFPE); ending the job$"
run hang 5 1 "^tenbin: rank [12]: task 5 ran longer than the task timeout (0.5 s); ending the job$" 0.5
# The environment variable sets the same limit.
rm -f out.txt
set +e
TENBIN_MW_TASK_TIMEOUT=0.25 timeout 60 "$MPIEXEC" $NP 2 "$MW_FAULT" hang 3 out.txt > run.out 2> run.err
got=$?
set -e
[ "$got" = 1 ] || fail "TENBIN_MW_TASK_TIMEOUT: exit $got, want 1: $(cat run.err)"
grep -q "^tenbin: rank 1: task 3 ran longer than the task timeout (0.25 s); ending the job$" run.err ||
    fail "TENBIN_MW_TASK_TIMEOUT: $(cat run.err)"
[ ! -e out.txt ] || fail "TENBIN_MW_TASK_TIMEOUT: an output file was left behind"
# A branch-and-bound problem whose branch operation fails or crashes on one
# node (the optimum of the run that does not fail is 1).
"$MPIEXEC" $NP 3 "$BNB_FAULT" ok out.txt || fail "bnb ok: exit $?"
[ "$(cat out.txt)" = 1 ] || fail "bnb ok: optimum $(cat out.txt), want 1"
PROG=$BNB_FAULT run error - 1 "rank [12]: task [0-9]* failed: a task failed$"
PROG=$BNB_FAULT run segv - 1 "^tenbin: rank [12]: task [0-9]* crashed (signal 11, SIGSEGV); ending the job$"
# Ranks configured differently: one line naming the setting, before the run.
PROG=$BNB_FAULT run disagree - 1 "tb_bnb_run: ranks disagree on the gap (tb_bnb_set_gap) (0 on one, 0.01 on another)"
run disagree 0 1 "tb_mw_run: ranks disagree on the number of masters (tb_mw_set_policy) (from 1 to 2)"

# tenbin mandel --task-timeout: a limit no task reaches changes nothing (the
# checksum is the run's without it).
"$MPIEXEC" $NP 2 "$TENBIN" mandel --width 64 --height 64 -q --checksum --task-timeout 30 > m.txt ||
    fail "mandel --task-timeout 30: exit $?"
"$MPIEXEC" $NP 2 "$TENBIN" mandel --width 64 --height 64 -q --checksum > m0.txt
a=$(sed -n 's/^checksum: //p' m.txt)
b=$(sed -n 's/^checksum: //p' m0.txt)
[ -n "$a" ] && [ "$a" = "$b" ] || fail "mandel --task-timeout changed the checksum: '$a' vs '$b'"
echo "ok faults"
