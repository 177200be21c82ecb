#!/bin/sh
# tenbin himeno: the official known answers on one rank (gosa after 1, 3 and
# 100 sweeps of XS, 200 of S), p_bitsum identical for every rank count and
# after forced random moves, balancing towards a slowed rank, and clear
# errors for bad options.
# Environment (set by CTest): TENBIN, MPIEXEC, MPIEXEC_NUMPROC_FLAG, TB_TEST_TMP.
set -eu
cd "$TB_TEST_TMP"
NP=${MPIEXEC_NUMPROC_FLAG:--n}
fail() { echo "FAIL: $*" >&2; exit 1; }
field() { sed -n "s/^$1: *//p" "$2" | cut -d' ' -f1; }

# Known answers (RIKEN's reference code, float, on one process).
for case in "XS 1 6.711068e-03" "XS 3 6.227474e-03" "XS 100 2.317046e-03" "S 200 1.688606e-03"; do
    set -- $case
    "$MPIEXEC" $NP 1 "$TENBIN" himeno --size $1 --iters $2 --balance off > ka.txt
    got=$(field gosa ka.txt)
    [ "$got" = "$3" ] || fail "size $1, $2 sweeps: gosa $got, the reference gives $3"
done

# p is bit-identical for every decomposition and after any moves.
"$MPIEXEC" $NP 1 "$TENBIN" himeno --size XS --iters 40 --balance off > one.txt
want=$(field p_bitsum one.txt)
[ -n "$want" ] || fail "no p_bitsum: $(cat one.txt)"
for p in 2 3 4; do
    "$MPIEXEC" $NP $p "$TENBIN" himeno --size XS --iters 40 --balance off > s$p.txt
    [ "$(field p_bitsum s$p.txt)" = "$want" ] || fail "P=$p static: p_bitsum differs"
    "$MPIEXEC" $NP $p "$TENBIN" himeno --size XS --iters 40 --force-moves 3 --seed $p \
        > f$p.txt
    [ "$(field p_bitsum f$p.txt)" = "$want" ] || fail "P=$p forced moves: p_bitsum differs"
    moves=$(field moves f$p.txt)
    [ "$moves" -ge 10 ] || fail "P=$p: only $moves forced moves"
    # gosa: float sums in another order, equal to about 4 digits
    awk -v a="$(field gosa one.txt)" -v b="$(field gosa f$p.txt)" \
        'BEGIN { d = (a - b) / a; if (d < 0) d = -d; exit !(d < 1e-3) }' ||
        fail "P=$p: gosa $(field gosa f$p.txt) too far from $(field gosa one.txt)"
done

# A rank at a third of the speed: balancing moves planes away from it, and
# the JSON says so.  (Which planes exactly depends on timing; sweeps of
# 1-2 ms are measured, so when other tests load the 2 cores a run may be
# misled: the property must hold in one of three runs.)
for try in 1 2 3; do
    "$MPIEXEC" $NP 2 "$TENBIN" himeno --size XS --iters 60 --slowdown 1:3 --interval 5 --json \
        > bal.json
    for key in '"gosa": ' '"p_bitsum": ' '"wall_s": ' '"moves": ' '"bytes_moved": ' '"actions": ['; do
        grep -qF "$key" bal.json || fail "--json lacks $key: $(cat bal.json)"
    done
    [ "$(wc -l < bal.json)" -eq 1 ] || fail "--json printed more than one line"
    lay=$(sed -n 's/.*"layout": \[\([0-9]*\),\([0-9]*\)\], "actions".*/\1 \2/p' bal.json)
    set -- $lay
    [ "$#" -eq 2 ] && [ "$1" -gt "$2" ] && break
    echo "note: run $try: slowed rank 1 kept as many planes: layout '$lay'"
    [ "$try" -lt 3 ] || fail "slowed rank 1 kept as many planes in 3 runs: layout '$lay'"
done
grep -q '"moves": 0,' bal.json && fail "no move despite a 3x slower rank: $(cat bal.json)"
"$MPIEXEC" $NP 1 "$TENBIN" himeno --size XS --iters 60 --balance off --json > one60.json
b1=$(sed -n 's/.*"p_bitsum": \([0-9]*\).*/\1/p' one60.json)
b2=$(sed -n 's/.*"p_bitsum": \([0-9]*\).*/\1/p' bal.json)
[ "$b1" = "$b2" ] || fail "balanced run p_bitsum $b2, one rank $b1"

# Bad input: one line, exit status 2.
expect_usage() {
    if "$@" > err.out 2> err.txt; then fail "accepted: $*"; else rc=$?; fi
    [ "$rc" -eq 2 ] || fail "exit status $rc for: $* ($(cat err.txt))"
    grep -q "^tenbin himeno: " err.txt || fail "no error line for: $* ($(cat err.txt))"
}
expect_usage "$MPIEXEC" $NP 1 "$TENBIN" himeno --size XXL
expect_usage "$MPIEXEC" $NP 1 "$TENBIN" himeno --balance sometimes
expect_usage "$MPIEXEC" $NP 1 "$TENBIN" himeno --slowdown 1:0.5
expect_usage "$MPIEXEC" $NP 1 "$TENBIN" himeno --slowdown 1:2@50-10
expect_usage "$MPIEXEC" $NP 1 "$TENBIN" himeno --slowdown 1:2@5s
grep -q "FROM and TO count iterations" err.txt || fail "--slowdown 1:2@5s: $(cat err.txt)"
expect_usage "$MPIEXEC" $NP 1 "$TENBIN" himeno --slowdown 1:2@2.5
expect_usage "$MPIEXEC" $NP 2 "$TENBIN" himeno --slowdown 2:2
expect_usage "$MPIEXEC" $NP 1 "$TENBIN" himeno --iters 0
expect_usage "$MPIEXEC" $NP 1 "$TENBIN" himeno --threshold 0.9
echo "ok"
