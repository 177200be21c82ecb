#!/bin/sh
# tenbin mandel under mpiexec: the image and checksum are identical for every
# policy and rank count, equal the one-rank run, and equal an independent
# evaluation of the definition (awk, double precision, same operation order).
# Environment (set by CTest): TENBIN, MPIEXEC, MPIEXEC_NUMPROC_FLAG, TB_TEST_TMP.
set -eu
cd "$TB_TEST_TMP"
NP=${MPIEXEC_NUMPROC_FLAG:--n}
fail() { echo "FAIL: $*" >&2; exit 1; }

W=61 H=47 IT=250
ARGS="--width $W --height $H --max-iter $IT --rows-per-task 3 --checksum -q"

# Independent known answer: the definition, evaluated by awk.
want=$(awk -v W=$W -v H=$H -v IT=$IT 'BEGIN {
    xmin = -2; xmax = 1; ymin = -1.5; ymax = 1.5
    dx = (xmax - xmin) / W; dy = (ymax - ymin) / H; s = 0
    for (y = 0; y < H; y++) for (x = 0; x < W; x++) {
        cr = xmin + (x + 0.5) * dx; ci = ymax - (y + 0.5) * dy
        zr = 0; zi = 0; v = IT
        for (n = 1; n <= IT; n++) {
            t = zr * zr - zi * zi + cr; zi = 2.0 * zr * zi + ci; zr = t
            if (zr * zr + zi * zi > 4.0) { v = n; break }
        }
        s += v
    }
    printf "%d\n", s }')
[ -n "$want" ] || fail "awk reference produced nothing"

"$MPIEXEC" $NP 1 "$TENBIN" mandel $ARGS --out ref.pgm > ref.txt
got=$(sed -n 's/^checksum: //p' ref.txt)
[ "$got" = "$want" ] || fail "one-rank checksum $got, definition gives $want"
head -c 2 ref.pgm | grep -q P5 || fail "ref.pgm is not a PGM"

for p in 2 3 4; do
    for pol in single multi:2; do
        "$MPIEXEC" $NP $p "$TENBIN" mandel $ARGS --policy $pol --out "img_${p}_$pol.pgm" \
            > "out_${p}_$pol.txt"
        got=$(sed -n 's/^checksum: //p' "out_${p}_$pol.txt")
        [ "$got" = "$want" ] || fail "P=$p $pol: checksum $got, want $want"
        cmp -s ref.pgm "img_${p}_$pol.pgm" || fail "P=$p $pol: image differs from the one-rank run"
    done
done

# --json carries the summary and the checksum.
"$MPIEXEC" $NP 3 "$TENBIN" mandel $ARGS --policy multi:2 --json > run.json
for key in '"ranks": 3' '"policy": "multi:2"' '"tasks": 16' '"wall_s": ' '"tasks_per_s": ' \
           "\"checksum\": $want" '"tasks_assigned": [' '"worker_idle_fraction_mean": '; do
    grep -qF "$key" run.json || fail "--json output lacks $key: $(cat run.json)"
done
[ "$(wc -l < run.json)" -eq 1 ] || fail "--json printed more than one line"

# PNG output and a merged trace with one process per rank.
"$MPIEXEC" $NP 3 "$TENBIN" mandel $ARGS --out img.png --trace trace.json > /dev/null
[ "$(head -c 8 img.png | od -An -tx1 | tr -d ' \n')" = "89504e470d0a1a0a" ] || fail "img.png is not a PNG"
grep -q '"traceEvents"' trace.json || fail "trace has no traceEvents"
for r in 0 1 2; do
    grep -q "\"pid\": *$r[,}]" trace.json || fail "trace has no events of rank $r"
done
grep -q '"ph": *"X"' trace.json || fail "trace has no complete events"
grep -q '"ph": *"C"' trace.json || fail "trace has no counters"
ls ./*.tmp 2>/dev/null && fail "temporary files left behind"

# Every chunk rule gives the same image: the checksum of the definition.
for rule in gss tss fac wf awf af auto; do
    "$MPIEXEC" $NP 3 "$TENBIN" mandel $ARGS --chunk $rule > chunk_$rule.txt
    got=$(sed -n 's/^checksum: //p' chunk_$rule.txt)
    [ "$got" = "$want" ] || fail "--chunk $rule: checksum $got, want $want"
done
if "$MPIEXEC" $NP 1 "$TENBIN" mandel --chunk nope > /dev/null 2> chunk_err.txt; then
    fail "--chunk nope was accepted"
fi
grep -q "^tenbin mandel: --chunk: expected" chunk_err.txt || fail "--chunk nope: $(cat chunk_err.txt)"

# Progress lines go to stderr unless -q.
"$MPIEXEC" $NP 2 "$TENBIN" mandel --width 40 --height 30 --max-iter 50 > /dev/null 2> prog.txt
grep -q '^progress: 30/30 tasks (100.0%)' prog.txt || fail "no final progress line: $(cat prog.txt)"
# Simulated: the progress is the real-time rate of simulating, the summary's
# time is virtual, and each says which.
"$MPIEXEC" $NP 1 "$TENBIN" mandel --sim hosts=4 --width 40 --height 30 --max-iter 50 > sim.txt 2> prog.txt
grep -q '^progress: 30/30 simulated tasks (100.0%)' prog.txt || fail "sim progress: $(cat prog.txt)"
grep -q 'done in .* s of virtual time .* events simulated in .* s of real time' sim.txt ||
    fail "sim summary: $(cat sim.txt)"
echo "ok mandel (checksum $want)"
