#!/bin/sh
# Bad input gets one clear line and exit status 2 (bad usage) or 1 (the run
# failed), and leaves no partial file behind.
set -eu
cd "$TB_TEST_TMP"
NP=${MPIEXEC_NUMPROC_FLAG:--n}
fail() { echo "FAIL: $*" >&2; exit 1; }

# expect STATUS PATTERN NP ARGS...: run `tenbin ARGS` on NP ranks (0: no mpiexec).
expect() {
    status=$1 pattern=$2 np=$3
    shift 3
    set +e
    if [ "$np" = 0 ]; then
        "$TENBIN" "$@" > out.txt 2> err.txt
    else
        "$MPIEXEC" $NP "$np" "$TENBIN" "$@" > out.txt 2> err.txt
    fi
    got=$?
    set -e
    [ "$got" = "$status" ] || fail "tenbin $*: exit $got, want $status; stderr: $(cat err.txt)"
    n=$(grep -c -- "$pattern" err.txt || true)
    [ "$n" = 1 ] || fail "tenbin $*: want one line matching '$pattern' on stderr, got $n: $(cat err.txt)"
}

expect 2 "^tenbin: unknown command 'bogus'" 0 bogus
expect 2 "^usage: tenbin" 0
expect 2 "^tenbin info: unknown option '--bogus'" 0 info --bogus
expect 2 "^tenbin mandel: --width: expected an integer in 1..65536, got 'abc'" 2 mandel --width abc
expect 2 "^tenbin mandel: --width: expected an integer in 1..65536, got '0'" 2 mandel --width 0
expect 2 "^tenbin mandel: --height: expected an integer" 1 mandel --height 70000
expect 2 "^tenbin mandel: --max-iter: expected an integer" 2 mandel --max-iter -5
expect 2 "^tenbin mandel: --rows-per-task: expected an integer" 2 mandel --rows-per-task 1.5
expect 2 "^tenbin mandel: --region: expected XMIN,XMAX,YMIN,YMAX" 2 mandel --region 1,0,0,1
expect 2 "^tenbin mandel: --region: expected XMIN,XMAX,YMIN,YMAX" 2 mandel --region 1,2,3
expect 2 "^tenbin mandel: --policy: expected single, multi:K (K >= 1), dynamic, dynamic:paper or dynamic:wait" 2 mandel --policy fancy
expect 2 "^tenbin mandel: --policy: expected single, multi:K (K >= 1), dynamic, dynamic:paper or dynamic:wait" 2 mandel --policy multi:0
expect 2 "^tenbin mandel: --policy: expected .*got 'dynamic:wait:0'" 2 mandel --policy dynamic:wait:0
expect 2 "^tenbin mandel: --policy: expected .*got 'dynamic:waiting'" 2 mandel --policy dynamic:waiting
expect 2 "^tenbin mandel: --policy multi:3 needs at least 3 ranks, but mpiexec started 2" 2 mandel --policy multi:3
expect 2 "^tenbin mandel: --out: the file name must end in .png or .pgm" 2 mandel --out x.jpg
expect 2 "^tenbin mandel: --task-timeout: expected seconds >= 0, got '-1'" 2 mandel --task-timeout -1
expect 2 "^tenbin mandel: --task-timeout: expected seconds >= 0, got 'soon'" 2 mandel --task-timeout soon
expect 2 "^tenbin mandel: unknown option '--bogus'" 2 mandel --bogus
expect 2 "^tenbin mandel: option '--width' needs a value" 2 mandel --width
expect 2 "^tenbin mandel: unexpected argument 'extra'" 2 mandel extra

# An image that cannot be written: exit 1, a clear line, nothing left behind.
expect 1 "cannot write missing/dir/x.png" 2 mandel --width 16 --height 16 -q --out missing/dir/x.png
[ ! -e missing ] || fail "a directory was created"
# A trace that cannot be written.
expect 1 "missing/t.json" 2 mandel --width 16 --height 16 -q --trace missing/t.json
ls ./*.tmp 2>/dev/null && fail "temporary files left behind"

# Help and the environment registry.
"$TENBIN" --help | grep -q '^  mandel' || fail "tenbin --help lists no mandel"
"$TENBIN" info --env > env.txt
grep -q '^TENBIN_LOG ' env.txt || fail "info --env lacks TENBIN_LOG: $(cat env.txt)"
grep -q '^TENBIN_MW_CHUNK ' env.txt || fail "info --env lacks TENBIN_MW_CHUNK"
"$TENBIN" info | grep -q '^mpi library' || fail "tenbin info prints no MPI library"
"$MPIEXEC" $NP 1 "$TENBIN" mandel --help | grep -q -- '--rows-per-task' || fail "mandel --help"
echo "ok errors"
