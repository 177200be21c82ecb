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
expect 2 "^tenbin mandel: --task-timeout: expected seconds from 0 to 1e9, got '-1'" 2 mandel --task-timeout -1
expect 2 "^tenbin mandel: --task-timeout: expected seconds from 0 to 1e9, got 'soon'" 2 mandel --task-timeout soon
expect 2 "^tenbin mandel: unknown option '--bogus'" 2 mandel --bogus
expect 2 "^tenbin mandel: option '--width' needs a value" 2 mandel --width
expect 2 "^tenbin mandel: unexpected argument 'extra'" 2 mandel extra

# An output that cannot be written is refused before any work (exit 2, a
# usage error, not 1 after the run), one line, nothing left behind.
expect 2 "^tenbin mandel: --out missing/dir/x.png: cannot write: No such file" 2 mandel --width 16 --height 16 -q --out missing/dir/x.png
[ ! -e missing ] || fail "a directory was created"
expect 2 "^tenbin mandel: --trace missing/t.json: cannot write" 2 mandel --width 16 --height 16 -q --trace missing/t.json
mkdir -p adir.png
expect 2 "^tenbin mandel: --out adir.png: cannot write: it is a directory" 1 mandel -q --out adir.png
expect 2 "^tenbin sim mw: --trace missing/t.json: cannot write" 0 sim mw --platform hosts=4 --tasks 10 --trace missing/t.json
KNAP="$TB_SOURCE_DIR/tests/data/knapsack/knapPI_1_100_1000_1.txt"
expect 2 "^tenbin bnb: --trace missing/t.json: cannot write" 1 bnb knapsack "$KNAP" --trace missing/t.json
expect 2 "^tenbin bnb: --history missing/h.json: cannot write" 1 bnb knapsack "$KNAP" --history missing/h.json
WF="$TB_SOURCE_DIR/tests/data/wfinstances/montage-chameleon-2mass-005d-001.json"
expect 2 "^tenbin flow schedule: --gantt missing/g.svg: cannot write" 0 flow schedule "$WF" --platform hosts=4 --gantt missing/g.svg
expect 2 "^tenbin flow simulate: --trace missing/t.json: cannot write" 0 flow simulate "$WF" --platform hosts=4 --trace missing/t.json
expect 2 "^tenbin emu: --trace missing/t.json: cannot write" 0 emu --platform hosts=4 -n 2 --trace missing/t.json -- "$TENBIN" mandel -q
[ "$(wc -l < err.txt)" = 1 ] || fail "more than one line: $(cat err.txt)"
expect 2 "^tenbin himeno: --record missing/r.json: cannot write" 1 himeno --record missing/r.json
ls ./*.tmp 2>/dev/null && fail "temporary files left behind"
# bnb on one rank writes its trace too (the sequential search as one bar)
"$TENBIN" bnb knapsack "$KNAP" --trace one.json > out.txt
python3 -c "
import json; t = json.load(open('one.json'))['traceEvents']
assert any(e.get('name') == 'search' and e['args']['nodes'] > 0 for e in t), t
" || fail "bnb --trace on one rank: $(cat one.json)"

# Real-valued options: one parser (tb_cli_double), one line naming the range.
expect 2 "^tenbin sim mw: --work: expected seconds >= 0, got 'inf'" 0 sim mw --platform hosts=4 --work inf
expect 2 "^tenbin mandel: --iter-cost: expected seconds >= 0, got 'nan'" 0 mandel --sim hosts=4 --iter-cost nan
expect 2 "^tenbin himeno: --threshold: expected a number >= 1, got '0.5'" 1 himeno --threshold 0.5
expect 2 "^tenbin flow schedule: --task-overhead: expected seconds from 0 to 1e6, got '1e7'" 0 flow schedule "$WF" --platform hosts=4 --task-overhead 1e7
expect 2 "^tenbin emu: --timeout: expected seconds > 0, got '0'" 0 emu --platform hosts=4 -n 2 --timeout 0 -- "$TENBIN" mandel

# Commands that use no MPI print once under mpiexec (rank 0 runs them);
# emu, which starts its own ranks, refuses.
[ "$("$MPIEXEC" $NP 2 "$TENBIN" sim mw --platform hosts=4 --tasks 10 | grep -c '^summary')" = 1 ] ||
    fail "sim mw under mpiexec -n 2 did not print once"
[ "$("$MPIEXEC" $NP 2 "$TENBIN" info | grep -c '^tenbin ')" = 1 ] || fail "info printed twice"
expect 2 "^tenbin emu: it starts the program's ranks itself; run it without mpiexec" 2 emu --platform hosts=4 -n 2 -- "$TENBIN" mandel -q

# Help and the environment registry.
"$TENBIN" --help | grep -q '^  mandel' || fail "tenbin --help lists no mandel"
"$TENBIN" info --env > env.txt
grep -q '^TENBIN_LOG ' env.txt || fail "info --env lacks TENBIN_LOG: $(cat env.txt)"
grep -q '^TENBIN_MW_CHUNK ' env.txt || fail "info --env lacks TENBIN_MW_CHUNK"
"$TENBIN" info | grep -q '^mpi library' || fail "tenbin info prints no MPI library"
"$MPIEXEC" $NP 1 "$TENBIN" mandel --help | grep -q -- '--rows-per-task' || fail "mandel --help"
echo "ok errors"
