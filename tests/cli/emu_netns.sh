#!/bin/sh
# tenbin emu with its ranks on "another node": the launcher runs in a second
# network namespace joined to this one by a veth pair only, so the ranks reach
# the coordinator over that link (--listen) and not over a shared loopback.
# Known answer: the fan-in of emu.sh (virtual order 5..1 against the real
# 1..5, makespan from the LogGPS closed form).  Without --listen the run must
# stop with one line that says why.  Needs root and iproute2 (else skipped).
set -eu
cd "$TB_TEST_TMP"
. "$TB_SOURCE_DIR/tests/cli/expect.inc"

[ "$(id -u)" = 0 ] || { echo "SKIP: network namespaces need root"; exit 77; }
command -v ip > /dev/null || { echo "SKIP: no ip (Debian iproute2)"; exit 77; }

# Names and a subnet of this run's own (parallel runs do not collide).
n=$(($$ % 250 + 1))
ns=tbemu$$ va=tbe${$}a vb=tbe${$}b net=10.213.$n
cleanup() {
    ip netns pids "$ns" 2> /dev/null | xargs -r kill -9 2> /dev/null || true
    ip link del "$va" 2> /dev/null || true
    ip netns del "$ns" 2> /dev/null || true
}
trap cleanup EXIT
ip netns add "$ns" 2> /dev/null || { echo "SKIP: cannot create a network namespace"; exit 77; }
ip link add "$va" type veth peer name "$vb"
ip link set "$vb" netns "$ns"
ip addr add "$net.1/24" dev "$va"
ip link set "$va" up
ip -n "$ns" addr add "$net.2/24" dev "$vb"
ip -n "$ns" link set "$vb" up
ip -n "$ns" link set lo up

cat > mpiexec-ns << END
#!/bin/sh
exec ip netns exec $ns "$MPIEXEC" "\$@"
END
chmod +x mpiexec-ns

P1=hosts=16,speed=1e12,L=50us,o=10us,G=10ns
# The ranks there still share this machine's /dev/shm, which ranks on a real
# other node do not: TENBIN_EMU_SHM=0 puts every frame on the link.
TENBIN_EMU_SHM=0 "$TENBIN" emu --timeout 120 --listen "$net.1" --mpiexec ./mpiexec-ns --platform $P1 -n 6 --json \
    -- "$EMU_PATTERNS" fanin 100 > fanin.out || fail "over the veth link: $(cat fanin.out)"
grep -qx 'order: 5 4 3 2 1' fanin.out || fail "ANY_SOURCE order over the link: $(cat fanin.out)"
got=$(tail -n 1 fanin.out | sed -n 's/.*"predicted_makespan_s":\([-0-9.eE+]*\).*/\1/p')
want=$(awk 'BEGIN { printf "%.17g", 10e-6 + 50e-6 + 99 * 10e-9 + 5 * 10e-6 }')
awk -v a="$got" -v b="$want" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 1e-9 * b) }' ||
    fail "fan-in over the link: got $got, want $want"

# The default address is this namespace's loopback, which the ranks cannot
# reach from theirs: one line, exit 1, nothing left running there.
expect 1 'before any rank reached the coordinator at 127.0.0.1:.*need --listen' \
    emu --timeout 120 --mpiexec ./mpiexec-ns --platform $P1 -n 2 -- "$EMU_PATTERNS" fanin 10
[ -z "$(ip netns pids "$ns")" ] || fail "processes left in the namespace: $(ip netns pids "$ns")"
# An address that is not this machine's.
expect 1 'cannot listen on 192.0.2.1: no such address on this machine' \
    emu --listen 192.0.2.1 --platform $P1 -n 2 -- "$EMU_PATTERNS" fanin 10
echo "emu over a veth link: ok"
