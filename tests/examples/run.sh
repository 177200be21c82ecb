#!/bin/sh
# tests/examples/run.sh NP PROGRAM [MPIEXEC [NUMPROC_FLAG]] - run one example
# program (examples/*.c) on NP ranks.  It passes when it exits 0, having
# checked its own answer, and says it ran "on NP rank(s)" (a launcher of
# another MPI starts NP one-rank copies instead, which would pass unseen).
set -u
np=${1:?usage: run.sh NP PROGRAM [MPIEXEC [NUMPROC_FLAG]]}
prog=${2:?usage: run.sh NP PROGRAM [MPIEXEC [NUMPROC_FLAG]]}
mpiexec=${3:-mpiexec}
flag=${4:--n}

out=$("$mpiexec" "$flag" "$np" "$prog" 2>&1)
rc=$?
printf '%s\n' "$out"
name=$(basename "$prog")
if [ "$rc" -ne 0 ]; then
    echo "FAIL: $name on $np ranks exited with status $rc" >&2
    exit 1
fi
case $out in
*" on $np rank"*) ;;
*)
    echo "FAIL: $name did not say it ran on $np ranks" >&2
    exit 1
    ;;
esac
