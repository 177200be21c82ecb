#!/bin/sh
# apps/msmandel (MASE, the paper's plain-MPI master/slave Mandelbrot: si, ml:PM,
# dy): the checksum is the same for every variant, rank count and task size,
# equals an independent evaluation of the definition (awk) and the known value
# at the defaults; dy splits when its threshold is tiny; bad input gets one line
# and exit status 2.
# Environment: MSMANDEL (the executable), MPIEXEC, MPIEXEC_NUMPROC_FLAG, TB_TEST_TMP.
set -eu
: "${MSMANDEL:?MSMANDEL must name the msmandel executable}"
cd "${TB_TEST_TMP:-.}"
NP=${MPIEXEC_NUMPROC_FLAG:--n}
fail() { echo "FAIL: $*" >&2; exit 1; }

W=61 H=47 IT=300
ARGS="--width $W --height $H --max-iter $IT --checksum"

# The definition, in awk's doubles with the program's operation order.
want=$(awk -v W=$W -v H=$H -v IT=$IT 'BEGIN {
    xmin = -2; xmax = 0.5; ymin = -1.25; ymax = 1.25; s = 0
    for (j = 0; j < H; j++) for (i = 0; i < W; i++) {
        cr = xmin + (xmax - xmin) * (i + 0.5) / W; ci = ymin + (ymax - ymin) * (j + 0.5) / H
        zr = 0; zi = 0; n = 0
        while (n < IT && zr * zr + zi * zi <= 4.0) {
            t = zr * zr - zi * zi + cr; zi = 2.0 * zr * zi + ci; zr = t; n++
        }
        s += n * ((j * W + i) % 1009 + 1)
    }
    printf "%.0f\n", s }')
[ -n "$want" ] || fail "awk reference produced nothing"

# run P OUT ARGS...: msmandel on P ranks, stdout to OUT.
run() {
    p=$1 out=$2
    shift 2
    "$MPIEXEC" $NP "$p" "$MSMANDEL" "$@" > "$out" || fail "msmandel -n $p $*: exit $?"
}
checksum() { sed -n 's/^checksum: //p' "$1"; }

for c in "2 si 1" "3 si 64" "4 ml:2 7" "8 ml:3 1" "3 dy 7" "8 dy 13"; do
    set -- $c
    run "$1" out.txt $ARGS --variant "$2" --task "$3"
    got=$(checksum out.txt)
    [ "$got" = "$want" ] || fail "P=$1 $2 T=$3: checksum '$got', want $want: $(cat out.txt)"
    grep -q "^msmandel: variant $2 $W x $H, $1 ranks, " out.txt || fail "P=$1 $2: summary: $(cat out.txt)"
done

# DY with a tiny threshold splits (and merges as often) at P = 8, same image.
run 8 dy.txt $ARGS --variant dy --task 1 --split-wait 1e-7
[ "$(checksum dy.txt)" = "$want" ] || fail "dy split run: checksum: $(cat dy.txt)"
line=$(grep '^msmandel: masters max ' dy.txt) || fail "dy prints no masters line: $(cat dy.txt)"
splits=$(echo "$line" | sed -n 's/.*splits \([0-9]*\), merges \([0-9]*\)$/\1/p')
merges=$(echo "$line" | sed -n 's/.*splits \([0-9]*\), merges \([0-9]*\)$/\2/p')
[ -n "$splits" ] && [ "$splits" -gt 0 ] || fail "dy --split-wait 1e-7 did not split: $line"
[ "$splits" = "$merges" ] || fail "dy: $splits splits but $merges merges"

# The defaults (256 x 256, 1000 iterations, T = 64): the known value.
run 4 def.txt --variant dy --checksum --quiet
[ "$(cat def.txt)" = "checksum: 8096403956" ] || fail "defaults: $(cat def.txt)"

# expect PATTERN NP ARGS...: exit 2, nothing on stdout, and on stderr exactly
# one line of ours, matching PATTERN (mpiexec may add its own notice).
expect() {
    pattern=$1 np=$2
    shift 2
    set +e
    "$MPIEXEC" $NP "$np" "$MSMANDEL" "$@" > out.txt 2> err.txt
    got=$?
    set -e
    [ "$got" = 2 ] || fail "msmandel $*: exit $got, want 2: $(cat err.txt)"
    [ ! -s out.txt ] || fail "msmandel $*: printed on stdout: $(cat out.txt)"
    [ "$(grep -c '^msmandel' err.txt)" = 1 ] || fail "msmandel $*: not one line: $(cat err.txt)"
    grep -q -- "$pattern" err.txt || fail "msmandel $*: no '$pattern': $(cat err.txt)"
}
expect "^msmandel: --width: expected a positive integer, got 'x'$" 2 --width x
expect "^msmandel: --task: expected a positive integer, got '0'$" 3 --task 0
expect "^msmandel: --variant: expected si, ml:PM (PM >= 1) or dy, got 'ml:0'$" 2 --variant ml:0
expect "^msmandel: --variant ml:2 needs at least 4 ranks" 3 --variant ml:2
expect "^msmandel: unknown option '--bogus'$" 2 --bogus
expect "^msmandel: option '--height' needs a value$" 2 --height
expect "^msmandel: the region is empty" 2 --xmin 1
expect "^msmandel: a master needs at least one slave" 1
echo "ok msmandel (checksum $want)"
