#!/bin/sh
# The 2-D Jacobi example (examples/jacobi.c): two arrays swapped after every
# sweep (t = u; u = v; v = t) on tb_redist, one rank 3x slower.  Whatever the
# mode that moves, the interval and the timing of the moves, the grid must be
# identical bit for bit to the run that never moves (the program compares
# them).  A data pointer changed in a way the library cannot follow stops the
# job with one line naming the array.
# Environment (set by CTest): JACOBI, REDIST_FAULT, MPIEXEC, TB_TEST_TMP.
set -eu
cd "$TB_TEST_TMP"
. "$TB_SOURCE_DIR/tests/cli/expect.inc"
NP=${MPIEXEC_NUMPROC_FLAG:--n}

for mode in forced nopredict predict; do
    for interval in 1 5 7; do
        "$MPIEXEC" $NP 3 "$JACOBI" --mode $mode --interval $interval --slow 1:3 --iters 60 \
            > out.txt 2> err.txt || fail "jacobi $mode interval $interval: $(cat out.txt err.txt)"
        grep -q "identical to the run that never moves" out.txt || fail "jacobi $mode: $(cat out.txt)"
    done
done
# forced moves happen whatever the speeds: the check above saw moves
"$MPIEXEC" $NP 3 "$JACOBI" --mode forced --interval 3 --iters 30 > out.txt
grep -q "after 9 moves; identical" out.txt || fail "forced: $(cat out.txt)"
# 2 ranks, and a slow last rank
"$MPIEXEC" $NP 2 "$JACOBI" --mode nopredict --interval 2 --slow 1:3 --iters 40 > out.txt ||
    fail "jacobi on 2 ranks: $(cat out.txt)"

# pointers the library cannot follow: one line naming the array, no rank left
for how in foreign:"array u: its data pointer now points at memory that is not a block" \
           shared:"arrays u and v: their data pointers hold the same block" \
           shape:"array u: its data pointer holds the block of array w, of another shape"; do
    set +e
    "$MPIEXEC" $NP 2 "$REDIST_FAULT" "${how%%:*}" > out.txt 2> err.txt
    st=$?
    set -e
    [ $st != 0 ] || fail "redist_fault ${how%%:*}: exit 0"
    ! grep -q "returned" out.txt || fail "redist_fault ${how%%:*}: the exchange returned"
    [ "$(grep -c -- "${how#*:}" err.txt)" -ge 1 ] ||
        fail "redist_fault ${how%%:*}: no line '${how#*:}': $(cat err.txt)"
done
[ -z "$(pgrep -f -- "$REDIST_FAULT" || true)" ] || fail "processes left: $(pgrep -fa -- "$REDIST_FAULT")"
echo "jacobi: ok"
