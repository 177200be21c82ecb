#!/bin/sh
# A short check of tenbin emu with whatever MPI this tree was built with (the
# MPICH build of `make test` runs it): a ping-pong's closed form and an
# MPI_ANY_SOURCE fan-in that follows virtual time.
set -eu
cd "$TB_TEST_TMP"
fail() { echo "FAIL: $*" >&2; exit 1; }
P=hosts=8,speed=1e12,L=50us,o=10us,G=10ns
"$TENBIN" emu --timeout 120 --platform $P -n 2 --json -- "$EMU_PATTERNS" pingpong 10 1000 > pp.json
got=$(sed -n 's/.*"predicted_makespan_s":\([-0-9.eE+]*\).*/\1/p' pp.json)
awk -v a="$got" 'BEGIN { b = 10 * 2 * (10e-6 + 50e-6 + 999 * 10e-9 + 10e-6); d = a - b;
                         if (d < 0) d = -d; exit !(d <= 1e-9 * b) }' ||
    fail "ping-pong: got $got: $(cat pp.json)"
"$TENBIN" emu --timeout 120 --platform $P -n 4 -- "$EMU_PATTERNS" fanin 100 > fanin.out
grep -qx 'order: 3 2 1' fanin.out || fail "ANY_SOURCE order: $(cat fanin.out)"
echo "emu smoke: ok"
