#!/bin/sh
# tenbin sim mw and tenbin mandel --sim: closed forms, determinism, the same
# image as a real run, and clear errors for bad platforms.
set -eu
cd "$TB_TEST_TMP"
NP=${MPIEXEC_NUMPROC_FLAG:--n}
. "$TB_SOURCE_DIR/tests/cli/expect.inc"
LOGP=hosts=64,speed=1,L=50us,os=10us,or=10us,g=0,G=0,S=65536

# Closed forms (one task per message, S1's model; the default rule is auto).
# At P = 2: a zero-work task costs C = 2(o_s + L + o_r) = 140 us,
# so 100,000 tasks take 14 s (plus one start-up latency).
"$TENBIN" sim mw --chunk 1 --platform $LOGP --ranks 2 --tasks 100000 --json > p2.json
for key in '"makespan_s": 14.0000' '"tasks": 100000' '"ranks": 2' '"policy": "dynamic"' \
           '"tasks_assigned": [' '"worker_idle_fraction_mean": ' '"events": ' '"wall_s": ' \
           '"simulated": true' '"promotion_times_s": []' '"masters_over_time": [[0, 1]]'; do
    grep -qF "$key" p2.json || fail "sim mw --json lacks $key: $(cat p2.json)"
done
# Saturated at P = 16: o_s + o_r = 20 us per task.
"$TENBIN" sim mw --chunk 1 --platform $LOGP --ranks 16 --tasks 100000 --policy single --json | grep -qF '"makespan_s": 2.000' \
    || fail "P=16 is not saturated at 20 us per task"

# Same seed: identical trace bytes; another seed: a different run.
SP=hosts=8,speed=1-3,L=20us,o=5us,load=0.01
"$TENBIN" sim mw --platform $SP --tasks 500 --work 1e-3 --policy multi:2 --seed 3 --trace a.json > /dev/null
"$TENBIN" sim mw --platform $SP --tasks 500 --work 1e-3 --policy multi:2 --seed 3 --trace b.json > /dev/null
"$TENBIN" sim mw --platform $SP --tasks 500 --work 1e-3 --policy multi:2 --seed 4 --trace c.json > /dev/null
cmp -s a.json b.json || fail "same seed, different traces"
cmp -s a.json c.json && fail "different seeds, identical traces"
grep -q '"traceEvents"' a.json || fail "no trace events"

# mandel --sim renders the image of a real run.
ARGS="--width 80 --height 60 --max-iter 300 --rows-per-task 2 --checksum -q"
real=$("$MPIEXEC" $NP 2 "$TENBIN" mandel $ARGS --out real.pgm | sed -n 's/^checksum: //p')
sim=$("$TENBIN" mandel $ARGS --sim hosts=16,L=50us,o=12us --policy multi:2 --out sim.pgm \
      | sed -n 's/^checksum: //p')
[ -n "$real" ] && [ "$real" = "$sim" ] || fail "checksum: real $real, simulated $sim"
cmp -s real.pgm sim.pgm || fail "simulated image differs from the real one"

expect 2 "^tenbin sim mw: --platform: spec: unknown key 'bogus'" sim mw --platform hosts=4,bogus=1
expect 2 "^tenbin sim mw: --platform: " sim mw --platform hosts=4,L=-5us
expect 2 "^tenbin sim mw: --platform: " sim mw --platform hosts=x
expect 2 "^tenbin sim mw: --platform is required" sim mw --tasks 5
expect 2 "^tenbin sim mw: --ranks 9 does not fit the platform: it has 8 cores" sim mw --platform hosts=8 --ranks 9
expect 2 "^tenbin sim mw: --policy multi:5 needs at least 5 ranks" sim mw --platform hosts=4 --policy multi:5
expect 2 "^tenbin sim mw: --work: expected seconds" sim mw --platform hosts=4 --work -1
expect 2 "^tenbin sim: unknown simulation 'flow'" sim flow
expect 2 "^tenbin sim mw: --platform: spec: key 'load': expected a time of at least 1ns" sim mw --platform hosts=2,load=1e-12
# Times that never come: one clear line and a failed run, not a hang or "inf s".
expect 1 "never ends" sim mw --platform hosts=2,speed=1e-320 --tasks 2 --work 1
expect 1 "never ends" sim mw --platform hosts=2,speed=0.1 --tasks 1 --work 1e308
expect 1 "would never finish receiving" sim mw --platform hosts=2,L=1e308,S=0 --tasks 1 --task-bytes 16
expect 1 "would never arrive" sim mw --platform hosts=2,L=1e308,o=1e308 --tasks 1
printf '{"clusters": [{"name": "a", "hosts": 4,}]}' > bad.json
expect 2 "^tenbin sim mw: --platform: bad.json:" sim mw --platform bad.json
# The summary shows the hosts the ranks used and their speeds, and a spec
# without L, o or G says once, at the end, that they are 0.
"$TENBIN" sim mw --platform hosts=16,speed=1-2 --ranks 8 --tasks 100 > hosts.txt 2> note.txt
grep -Eq '^  hosts +8 of 16 used; speed min 1[.0-9]*, median 1[.0-9]*, max [12][.0-9]*$' hosts.txt ||
    fail "hosts line: $(cat hosts.txt)"
[ "$(grep -c 'note: the platform leaves L, o, G unset, so they are 0: messages cost nothing' note.txt)" = 1 ] ||
    fail "no note of a free network: $(cat note.txt)"
"$TENBIN" sim mw --platform hosts=4,L=1us,o=1us,G=1ns --tasks 10 > /dev/null 2> note.txt
[ ! -s note.txt ] || fail "a note with the network set: $(cat note.txt)"
echo "ok sim"
