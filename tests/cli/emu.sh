#!/bin/sh
# tenbin emu: unmodified MPI programs (tests/emu/patterns.c) emulated on a
# modelled platform.  Known answers from the LogGPS closed forms (hosts of
# speed 1e12 make the programs' own CPU time negligible, so the prediction is
# the network model alone), wildcard receives and probes that follow virtual
# time when the real order is reversed, and every error path.
set -eu
cd "$TB_TEST_TMP"
. "$TB_SOURCE_DIR/tests/cli/expect.inc"
PAT=$EMU_PATTERNS

# num KEY FILE: the first number after "KEY": in a JSON file.
num() { sed -n "s/.*\"$1\":\([-0-9.eE+]*\).*/\1/p" "$2" | head -n 1; }
# close A B: relative difference at most 1e-9.
close() {
    awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; if (d < 0) d = -d; m = b < 0 ? -b : b;
                                     exit !(d <= 1e-9 * m) }' || fail "$3: got $1, want $2"
}
emu() { "$TENBIN" emu --timeout 120 "$@"; }

# Ping-pong: each one-way trip costs os + L + (k-1)G + or.
P1=hosts=16,speed=1e12,L=50us,o=10us,G=10ns
emu --platform $P1 -n 2 --json -- "$PAT" pingpong 100 1000 > pp2.json
close "$(num predicted_makespan_s pp2.json)" \
    "$(awk 'BEGIN { printf "%.17g", 100 * 2 * (10e-6 + 50e-6 + 999 * 10e-9 + 10e-6) }')" "ping-pong"
# Eight pairs on this machine's 2 cores predict what one pair does (ob = 0).
emu --platform $P1 -n 16 --json -- "$PAT" pingpong 100 1000 > pp16.json
close "$(num predicted_makespan_s pp16.json)" "$(num predicted_makespan_s pp2.json)" \
    "16 ranks time-sliced vs 2 ranks"
grep -q '"ranks":\[{"rank":0,"host":"h0","compute_s":' pp16.json || fail "json ranks: $(cat pp16.json)"
# The real time splits into the launcher's start-up and the run (no more than the whole).
awk -v w="$(num wall_s pp16.json)" -v s="$(num startup_wall_s pp16.json)" -v r="$(num run_wall_s pp16.json)" \
    'BEGIN { exit !(s > 0 && r > 0 && s + r <= w) }' || fail "start-up and run times: $(cat pp16.json)"

# A relay: rank 1 sends 1 MB to 0, then 1 byte to 2, which passes it on to
# 0.  The big message costs rank 1 20 ms of CPU (O = 20 ns a byte) and holds
# its link for 10 ms (LogGP's gap: its byte to 2 cannot start earlier), then
# travels 10 ms on the wire; the relayed byte, sent at 20 ms, arrives first
# in virtual time, though rank 1's big message is known to the coordinator
# first: a wildcard decision must wait until rank 1 can no longer start such
# a relay.  The big MPI_Send goes from a copy, so rank 1 runs on (the real
# MPI would hold it until rank 0 posts); makespan = the big message's
# os + O k + L + (k-1)G + or + O k.
PC=$P1,O=20ns,S=100000000
emu --platform $PC -n 3 --json -- "$PAT" chain 1000000 > chain.out 2> chain.err
grep -qx 'chain order: 2 1' chain.out || fail "relay order: $(cat chain.out)"
tail -n 1 chain.out > chain.json
close "$(num predicted_makespan_s chain.json)" \
    "$(awk 'BEGIN { printf "%.17g", 2 * (10e-6 + 20e-9 * 1e6) + 50e-6 + 999999 * 10e-9 }')" "relay"
[ "$(num unchecked_decisions chain.json)" = 0 ] || fail "relay: unchecked decisions: $(cat chain.json)"
# The same with MPI_Isend + MPI_Wait (also from a copy): exact too.
emu --platform $PC -n 3 --json -- "$PAT" chain 1000000 isend > chaini.out
grep -qx 'chain order: 2 1' chaini.out || fail "relay with MPI_Isend: $(cat chaini.out)"
tail -n 1 chaini.out > chaini.json
close "$(num predicted_makespan_s chaini.json)" "$(num predicted_makespan_s chain.json)" "relay, Isend"
[ "$(num unchecked_decisions chaini.json)" = 0 ] || fail "relay, Isend: $(cat chaini.json)"
# And with MPI_Rsend.
emu --platform $PC -n 3 --json -- "$PAT" chain 1000000 rsend > chainr.out
grep -qx 'chain order: 2 1' chainr.out || fail "relay with MPI_Rsend: $(cat chainr.out)"
# Without the copy (TENBIN_EMU_COPY_MIN above the message) rank 1 is held in
# the real MPI until rank 0 receives, so the decision cannot be checked: it
# is made (no hang) and the run says so, on stderr and in the JSON.
TENBIN_EMU_COPY_MIN=100000000 emu --platform $PC -n 3 --json -- "$PAT" chain 1000000 \
    > chainr.out 2> chainr.err
[ "$(grep -c 'warning: [0-9]* of [0-9]* wildcard receives were decided while a rank was held in a real send .* lower it below' chainr.err)" = 1 ] ||
    fail "relay held in the real MPI: no warning: $(cat chainr.err)"
tail -n 1 chainr.out > chainr.json
[ "$(num unchecked_decisions chainr.json)" -ge 1 ] || fail "relay held: $(cat chainr.json)"
[ "$(num unchecked_rendezvous chainr.json)" = 0 ] || fail "relay held: not a rendezvous: $(cat chainr.json)"

# A rank held in the real MPI by a large message to rank 0 (a rendezvous in
# the model too) cannot act before rank 0 takes it, so rank 0's wildcard
# receive of a later message from rank 2 must not wait for it (it once
# waited for ever): decided, counted as unchecked, and as the model implies
# (rank 1 cannot act before rank 0 takes its message, in the model too): no
# warning, the count in the JSON and in the text summary.
emu --platform hosts=4,L=50us,o=10us,G=10ns,S=1000 -n 3 --json --timeout 60 -- "$PAT" held 200000 > held.out 2> held.err ||
    fail "held sender: $(cat held.err)"
grep -qx 'held: 2 then 1' held.out || fail "held sender: order: $(cat held.out)"
tail -n 1 held.out > held.json
[ "$(num unchecked_decisions held.json)" -ge 1 ] || fail "held sender: $(cat held.json)"
[ "$(num unchecked_rendezvous held.json)" = "$(num unchecked_decisions held.json)" ] ||
    fail "held sender: not all in rendezvous: $(cat held.json)"
! grep -q 'warning' held.err || fail "held sender: a warning: $(cat held.err)"
emu --platform hosts=4,L=50us,o=10us,G=10ns,S=1000 -n 3 --timeout 60 -- "$PAT" held 200000 > held.out 2> held.err ||
    fail "held sender, text: $(cat held.err)"
grep -q '^            ([0-9]* of the decisions made while a rank was held in a rendezvous send to the$' held.out ||
    fail "held sender: no line in the summary: $(cat held.out)"

# Fan-in with MPI_ANY_SOURCE: rank r sends (6-r)*100 bytes after sleeping
# 0.05 r s of real time, so the real order is 1..5 and the virtual one 5..1.
emu --platform $P1 -n 6 --json -- "$PAT" fanin 100 > fanin.out
grep -qx 'order: 5 4 3 2 1' fanin.out || fail "ANY_SOURCE order: $(cat fanin.out)"
tail -n 1 fanin.out > fanin.json
# All five arrive before rank 0 is done with the first: first arrival + 5 or.
close "$(num predicted_makespan_s fanin.json)" \
    "$(awk 'BEGIN { printf "%.17g", 10e-6 + 50e-6 + 99 * 10e-9 + 5 * 10e-6 }')" "fan-in"
# LogGP's gap, for every message size (docs/platform.md): a stream of 50
# messages of 64 KiB (eager: not above S) from one rank starts them
# T = g + (k-1)G = 655.35 us apart, 65 times os, so rank 0 has the last at
# (N-1)T + os + L + (k-1)G + or; three ranks streaming into rank 0 are
# bounded by rank 0's link, which lets their messages through T apart:
# os + L + (k-1)G + (3N-1)T + or.
emu --platform $P1 -n 2 --json -- "$PAT" stream 50 65536 > stream2.json
close "$(num predicted_makespan_s stream2.json)" \
    "$(awk 'BEGIN { T = 65535 * 10e-9; printf "%.17g", 49 * T + 10e-6 + 50e-6 + T + 10e-6 }')" \
    "stream of 64 KiB messages"
emu --platform $P1 -n 4 --json -- "$PAT" stream 50 65536 > stream4.json
close "$(num predicted_makespan_s stream4.json)" \
    "$(awk 'BEGIN { T = 65535 * 10e-9; printf "%.17g", 10e-6 + 50e-6 + T + 149 * T + 10e-6 }')" \
    "three streams into one rank"
# Ranks on the coordinator's node talk to it through shared memory; ranks on
# other nodes through TCP.  The same fan-in with every rank on TCP, and with
# the odd ranks on TCP (a mixed run, as with ranks on two nodes), gives the
# same order and makespan.
cat > half-tcp.sh << 'END'
#!/bin/sh
[ $((${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-0}} % 2)) = 1 ] && unset TENBIN_EMU_SEGMENT
exec "$@"
END
chmod +x half-tcp.sh
for how in tcp mixed; do
    if [ $how = tcp ]; then
        env TENBIN_EMU_SHM=0 "$TENBIN" emu --timeout 120 --platform $P1 -n 6 --json -- \
            "$PAT" fanin 100 > fanin-$how.out
    else
        TENBIN_LOG=debug "$TENBIN" emu --timeout 120 --platform $P1 -n 6 --json -- \
            ./half-tcp.sh "$PAT" fanin 100 > fanin-$how.out 2> fanin-$how.err
        [ "$(grep -c 'frames go on TCP' fanin-$how.err)" = 3 ] &&
            [ "$(grep -c 'frames go through shared memory' fanin-$how.err)" = 3 ] ||
            fail "mixed run: $(grep 'said hello' fanin-$how.err)"
    fi
    grep -qx 'order: 5 4 3 2 1' fanin-$how.out || fail "ANY_SOURCE order ($how): $(cat fanin-$how.out)"
    tail -n 1 fanin-$how.out > fanin-$how.json
    close "$(num predicted_makespan_s fanin-$how.json)" "$(num predicted_makespan_s fanin.json)" \
        "fan-in over $how"
done
(export TENBIN_EMU_SHM=2; expect 1 'TENBIN_EMU_SHM' emu --platform $P1 -n 2 -- "$PAT" fanin 10)
(export TENBIN_EMU_SPIN=-1; expect 1 'TENBIN_EMU_SPIN' emu --platform $P1 -n 2 -- "$PAT" fanin 10)
(export TENBIN_EMU_AHEAD=33; expect 1 'TENBIN_EMU_AHEAD' emu --platform $P1 -n 2 -- "$PAT" fanin 10)
# Answers in advance: rank 0 takes 15 messages that are all known when it
# first asks, so one decision can answer several receives; a receive from a
# named source, MPI_Probe and MPI_Iprobe in between void what is left.  The
# sources, the times and the makespan are those of a run that asks for every
# receive (TENBIN_EMU_AHEAD=0).
emu --platform $P1 -n 6 --json -- "$PAT" ahead 100 > ahead.out
env TENBIN_EMU_AHEAD=0 "$TENBIN" emu --timeout 120 --platform $P1 -n 6 --json -- "$PAT" ahead 100 \
    > ahead0.out
[ "$(head -n 1 ahead.out)" = "$(head -n 1 ahead0.out)" ] ||
    fail "answers in advance changed the order or times: $(head -n 1 ahead.out) vs $(head -n 1 ahead0.out)"
grep -q '^ 5@0.000070990 4@0.000080990 1@0.000090990 3@' ahead.out || fail "ahead: $(cat ahead.out)"
tail -n 1 ahead.out > ahead.json
tail -n 1 ahead0.out > ahead0.json
close "$(num predicted_makespan_s ahead.json)" "$(num predicted_makespan_s ahead0.json)" "ahead makespan"
[ "$(num answered_ahead ahead.json)" -ge 1 ] && [ "$(num answered_ahead ahead0.json)" = 0 ] ||
    fail "answered_ahead: $(num answered_ahead ahead.json), with TENBIN_EMU_AHEAD=0: $(num answered_ahead ahead0.json)"
# Nothing left in shared memory.
# leftover_shm: segments (/dev/shm/tenbin-emu-PID-KEY) whose coordinator PID
# is gone (other tests' live emulations have theirs).
leftover_shm() {
    for f in $(ls /dev/shm 2>/dev/null | grep '^tenbin-emu-'); do
        pid=$(echo "$f" | cut -d- -f3)
        kill -0 "$pid" 2> /dev/null || echo "$f"
    done
}
[ -z "$(leftover_shm)" ] || fail "left in /dev/shm: $(leftover_shm)"
# The same with MPI_Irecv per source and MPI_Waitany.
emu --platform $P1 -n 6 -- "$PAT" waitany 100 > waitany.out
grep -qx 'order: 5 4 3 2 1' waitany.out || fail "Waitany order: $(cat waitany.out)"

# A polling loop: rank 1's message really arrives 0.2 s late, in virtual
# time at os + L + 63 G = 60.63 us; each failed MPI_Iprobe costs or = 10 us,
# so the 8th probe, at 70 us, is the first to see it.
emu --platform $P1 -n 2 -- "$PAT" iprobe 64 > iprobe.out
grep -qx 'polls 8 source 1 seen_at 0.000070000' iprobe.out || fail "Iprobe: $(cat iprobe.out)"

# Saturated single master with S3's P-dependent overhead: per task the master
# pays or(k1) + os(k2); at P = 10 the workers' round trip is shorter than
# the master's turn, so makespan = first request + (N+P-1) c + last stop.
P2=hosts=16,speed=1e12,L=50us,o=12.1us,ob=0.182us,O=0.07ns,G=20ns
emu --platform $P2 -n 10 --json -- "$PAT" master 3000 16 64 > master.json
want=$(awk 'BEGIN { P = 10; N = 3000; k1 = 16; k2 = 64; L = 50e-6; G = 20e-9;
    o1 = 12.1e-6 + 0.182e-6 * P + 0.07e-9 * k1; o2 = 12.1e-6 + 0.182e-6 * P + 0.07e-9 * k2;
    c = o1 + o2; R = L + (k2 - 1) * G + o2 + o1 + L + (k1 - 1) * G;
    if (R > (P - 2) * c) exit 1;
    printf "%.17g", o1 + L + (k1 - 1) * G + (N + P - 1) * c + L + (k2 - 1) * G + o2 }')
close "$(num predicted_makespan_s master.json)" "$want" "saturated master"
# The master's breakdown sums to the makespan.
sum=$(awk -v f=master.json 'BEGIN { getline s < f;
    n = split(s, a, /[,{}]/); for (i = 1; i <= n; i++) { split(a[i], kv, ":");
    if (kv[1] ~ /"(compute|send|recv|idle)_s"/ && !seen[kv[1]]++) t += kv[2] } printf "%.17g", t }')
close "$sum" "$(num predicted_makespan_s master.json)" "master breakdown sum"

# Emulated and simulated agree on two clusters joined by a slow link, with
# a gap, per-byte overheads and S3's ob (the simulator runs the same
# patterns as actors: tests/emu/sim_patterns.c).
W=hosts=16,clusters=2,speed=1e12,L=5us,o=3us,ob=0.1us,O=0.5ns,G=1ns,g=2us,wan-L=1ms,wan-G=100ns
emu --platform $W -n 16 --json -- "$PAT" master 500 16 2000 > wm.json
close "$(num predicted_makespan_s wm.json)" "$("$EMU_SIM_PATTERNS" $W 16 master 500 16 2000)" \
    "emulated vs simulated master on two clusters"
emu --platform $W -n 16 --json -- "$PAT" pingpong 50 3000 > wp.json
close "$(num predicted_makespan_s wp.json)" "$("$EMU_SIM_PATTERNS" $W 16 pingpong 50 3000)" \
    "emulated vs simulated ping-pong on two clusters"
emu --platform $W -n 16 --json -- "$PAT" stream 20 2000 > ws.json
close "$(num predicted_makespan_s ws.json)" "$("$EMU_SIM_PATTERNS" $W 16 stream 20 2000)" \
    "emulated vs simulated streams into one rank on two clusters"

# Rendezvous (k > S): the receiver pays 2L + (k-1)G more to pull the data,
# the sender waits for it; a one-way trip is os + 3L + (k-1)G + or.
emu --platform $P1,S=65536 -n 2 --json -- "$PAT" pingpong 20 100000 > rdv.json
close "$(num predicted_makespan_s rdv.json)" \
    "$(awk 'BEGIN { printf "%.17g", 20 * 2 * (10e-6 + 3 * 50e-6 + 99999 * 10e-9 + 10e-6) }')" \
    "rendezvous ping-pong"

# A halo exchange of 100 kB (k > S): both receives first, each costing
# os + L (request) + or + 2L + (k-1)G; the sends end when their data left.
emu --platform $P1,S=65536 -n 4 --json -- "$PAT" halo 100000 > halo.json
close "$(num predicted_makespan_s halo.json)" \
    "$(awk 'BEGIN { printf "%.17g", 10e-6 + 50e-6 + 10e-6 + 2 * 50e-6 + 99999 * 10e-9 }')" "halo"

# The same below S: each MPI_Isend goes from a copy (the model sends it
# without its receiver); the data is checked by the program.
emu --platform $P1,S=1e9 -n 4 --json -- "$PAT" halo 100000 > halo2.json
close "$(num predicted_makespan_s halo2.json)" \
    "$(awk 'BEGIN { printf "%.17g", 10e-6 + 50e-6 + 99999 * 10e-9 + 10e-6 }')" "halo, eager"

# Situations that once stalled or fooled the emulator print what a real run
# prints.
"$MPIEXEC" ${MPIEXEC_NUMPROC_FLAG:--n} 3 "$PAT" tricky > tricky.real
emu --platform $P1 -n 3 -- "$PAT" tricky | grep -v '^$' | sed '/^tenbin emu:/,$d' > tricky.emu
cmp -s tricky.real tricky.emu || fail "tricky: real $(cat tricky.real), emulated $(cat tricky.emu)"

# Every emulated collective gives the right data.
emu --platform $P1 -n 5 -- "$PAT" collectives > coll.out
grep -qx 'collectives ok' coll.out || fail "collectives: $(cat coll.out)"
# With their 800 kB messages below S: sent from copies (the data is checked).
emu --platform $P1,S=1e9 -n 5 -- "$PAT" collectives > coll2.out
grep -qx 'collectives ok' coll2.out || fail "collectives, eager: $(cat coll2.out)"

# Point-to-point odds and ends: derived datatypes, Sendrecv, Bsend, Issend
# with a Test loop, Mprobe/Mrecv, Waitsome.
# (L = 47 us: with 50 us a test loop lands exactly on the send's end, and
# the programs' own CPU time, 1e-17 s on these hosts, tips the comparison.)
P3=hosts=16,speed=1e12,L=47us,o=10us,G=10ns
emu --platform $P3 -n 4 --json -- "$PAT" p2p > p2p.out
grep -qx 'p2p ok' p2p.out || fail "p2p: $(cat p2p.out)"
# ... and the prediction does not depend on real timing (a test loop on a
# synchronous send once ran the clock while the acknowledgement travelled).
emu --platform $P3 -n 4 --json -- "$PAT" p2p > p2p2.out
close "$(num predicted_makespan_s p2p.out)" "$(num predicted_makespan_s p2p2.out)" "p2p twice"

# An intercommunicator between WORLD's halves (A = 0, 1; B = 2, 3): its sizes
# and remote group, and each pattern timed from the same virtual time (P3:
# o = 10 us, L = 47 us, G = 10 ns).  A wildcard receive of B0 takes A1's 10
# bytes (really 0.2 s late) first, then A0's 1000; B0 replies to A1.  The
# barrier (blocking, or MPI_Ibarrier + MPI_Wait): each rank sends an empty
# message to both remote ranks, then takes both; local rank i's arrive at
# (i+1) o + L.  MPI_Ibarrier + an MPI_Test loop: a failed test costs or, the
# test that finds both arrived takes them.  MPI_Bcast from A0 (MPI_ROOT): to
# B0, which passes it to B1; A1 (MPI_PROC_NULL) does nothing.  MPI_Allreduce:
# each group reduces to its rank 0, the two exchange, each broadcasts.  Then
# MPI_Intercomm_merge and an allreduce on the result, MPI_Comm_split into
# pairs, MPI_Comm_dup and MPI_Comm_disconnect (the data is checked by the
# program).
emu --platform $P3 -n 4 -- "$PAT" inter > inter.out
grep -qx 'inter ok' inter.out || fail "inter: $(cat inter.out)"
awk 'BEGIN { o = 10e-6; L = 47e-6; G = 10e-9
    a1 = o + L + 9 * G; a0 = o + L + 999 * G; w = a1 + o; if (a0 > w) w = a0; w += o
    printf "inter wildcard: 1 (10 bytes) 0 at %.8f\n", w
    printf "inter reply at %.8f\n", w + o + L + 3 * G + o
    k = 100 * 4; red = o + L + 3 * G + o; x = red + o + L + 3 * G + o
    for (r = 0; r < 4; r++) {
        i = r % 2; arr = (i + 1) * o + L
        printf "inter barrier %d: %.8f\n", r, arr + 2 * o
        printf "inter ibarrier wait %d: %.8f\n", r, arr + 2 * o
        for (t = 2 * o; t < arr; t += o) ;
        printf "inter ibarrier test %d: %.8f\n", r, t + 2 * o
        printf "inter bcast %d: %.8f\n", r, r == 0 ? o : r == 1 ? 0 : \
            r == 2 ? o + L + (k - 1) * G + o + o : 2 * (o + L + (k - 1) * G + o)
        printf "inter allreduce %d: %.8f\n", r, i == 0 ? x + o : x + o + L + 3 * G + o
    } }' | sort > inter.want
grep '^inter ' inter.out | grep -vx 'inter ok' | sort > inter.got
cmp -s inter.want inter.got || fail "inter: got $(cat inter.got), want $(cat inter.want)"

# mpi4py.futures' task pool in its static mode (python3 -m mpi4py.futures:
# rank 0 runs the script, the others serve the pool; python3-mpi4py, installed
# by scripts/bootstrap): an intercommunicator between rank 0 and the rest,
# MPI_Ibarrier and an MPI_Test loop, MPI_Bcast from MPI_ROOT, MPI_Allreduce,
# pickled tasks by MPI_Issend, MPI_Iprobe and MPI_Mprobe from any source, and
# rank 0's messages on a thread of its own.  The map's results are right, and
# so is its time as the script measures it (virtual on both of rank 0's
# threads): no less than the workers' CPU time for the tasks (each task
# measures its own, virtual too) shared by the two workers, no more than all
# of it plus a 1 ms back-off sleep of the pool on each side of every task,
# and within the predicted makespan.
/usr/bin/python3 -c 'import mpi4py.futures' 2> /dev/null ||
    fail "python3-mpi4py is not installed (scripts/bootstrap installs it)"
cat > futures.py << 'END'
import time
from mpi4py.futures import MPIPoolExecutor


def task(x):
    c0 = time.process_time()
    s = 0
    for i in range(20000):
        s += i % 7
    return x ** 3, time.process_time() - c0


if __name__ == '__main__':
    t0 = time.perf_counter()
    with MPIPoolExecutor() as ex:
        got = list(ex.map(task, range(40)))
    took = time.perf_counter() - t0
    print('futures: %d %s took %.9f work %.9f' % (
        sum(v for v, _ in got), [v for v, _ in got] == [x ** 3 for x in range(40)], took,
        sum(w for _, w in got)))
END
emu --platform hosts=4,L=50us,o=10us -n 3 --json -- /usr/bin/python3 -m mpi4py.futures futures.py \
    > futures.out 2> futures.err || fail "mpi4py.futures: $(cat futures.err)"
grep -q '^futures: 608400 True took ' futures.out || fail "mpi4py.futures: $(cat futures.out)"
tail -n 1 futures.out > futures.json
awk -v m="$(num predicted_makespan_s futures.json)" '/^futures:/ { took = $5; work = $7;
    exit !(work > 0 && took >= work / 2 && took <= work + 40 * 2e-3 && took < m) }' futures.out ||
    fail "mpi4py.futures: implausible: $(head -n 1 futures.out), $(cat futures.json)"
[ "$(num unchecked_decisions futures.json)" = 0 ] || fail "mpi4py.futures: $(cat futures.json)"

# Two threads of rank 0 take turns to call MPI while the one that called last
# reads the monotonic clock in a loop: the emulator gives MPI_THREAD_SERIALIZED
# (not the MPI_THREAD_MULTIPLE asked for), and a clock read is no MPI call (it
# once took the pair for two threads in MPI at once, and mpi4py.futures' pool
# died of it now and then).
emu --platform hosts=2,L=50us,o=10us -n 2 -- "$PAT" handover 300 > handover.out 2>&1 ||
    fail "handover: $(cat handover.out)"
grep -qx 'handover: level serialized rounds 300' handover.out || fail "handover: $(cat handover.out)"

# One-sided communication: the data is right after fences, flushes and
# unlocks, and the times are LogGPS's with the target taking no part (o = 10
# us, L = 50 us, G = 10 ns, 8 bytes): a shared lock is a request and its
# grant, o + 2L = 110 us; a put costs the origin o = 10 us; the flush after it
# waits for the data to be there and said so, L + 7G + L = 100 us after the
# put; a get and its flush o + L + L + 7G = 110 us; the unlock with nothing
# pending sends its release, o = 10 us.
# Two of Open MPI's one-sided components: pt2pt (active messages: the target
# must call MPI for them to progress) alone, and with sm for MPI_Win_allocate
# (the tests set btl_vader_single_copy_mechanism=none, which leaves rdma
# nothing to do MPI_Win_create over the program's memory with: the real
# MPI_Win_create fails, and the emulator says so in one line).
RMAP=hosts=4,speed=1e12,L=50us,o=10us,G=10ns
for osc in pt2pt pt2pt,sm; do
    OMPI_MCA_osc=$osc emu --platform $RMAP -n 3 -- "$PAT" rma > rma.out 2>&1 ||
        fail "rma ($osc): $(cat rma.out)"
    grep -qx 'rma: lock 110 put 10 flush 100 get 110 unlock 10 us' rma.out ||
        fail "rma ($osc): $(cat rma.out)"
    grep -qx 'rma: data right' rma.out || fail "rma ($osc): $(cat rma.out)"
done
# The same through mpi4py's MPI.Win (Allocate, Fence, Put, Get, Accumulate,
# Lock, Flush, Unlock, Free), as a Python program would call it (the default
# components: mpi4py asks for MPI_THREAD_MULTIPLE, which pt2pt refuses).
cat > rma.py << 'END'
from array import array
from mpi4py import MPI
comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
win = MPI.Win.Allocate(8 * 4, 8, comm=comm)
buf = memoryview(win).cast('B').cast('d')
for i in range(4):
    buf[i] = rank
win.Fence()
prev = (rank + size - 1) % size
win.Put(array('d', [100.0 + rank]), (rank + 1) % size, target=[0, 1, MPI.DOUBLE])
got = array('d', [0.0])
win.Get(got, prev, target=[1, 1, MPI.DOUBLE])
win.Accumulate(array('d', [1.0]), 0, target=[3, 1, MPI.DOUBLE], op=MPI.SUM)
win.Fence()
ok = buf[0] == 100.0 + prev and got[0] == prev and (rank != 0 or buf[3] == size)
comm.Barrier()
if rank == 0:
    t0 = MPI.Wtime()
    win.Lock(1, MPI.LOCK_SHARED)
    t1 = MPI.Wtime()
    win.Put(array('d', [7.0]), 1, target=[2, 1, MPI.DOUBLE])
    win.Flush(1)
    t2 = MPI.Wtime()
    win.Unlock(1)
    t3 = MPI.Wtime()
    print("py-rma: lock %.0f put+flush %.0f unlock %.0f us" % (1e6 * (t1 - t0), 1e6 * (t2 - t1), 1e6 * (t3 - t2)))
comm.Barrier()
ok = ok and (rank != 1 or buf[2] == 7.0)
win.Free()
print("py-rma: rank %d %s" % (rank, "right" if ok else "WRONG"))
END
emu --platform $RMAP -n 3 -- /usr/bin/python3 rma.py > pyrma.out 2>&1 || fail "mpi4py rma: $(cat pyrma.out)"
grep -qx 'py-rma: lock 110 put+flush 110 unlock 10 us' pyrma.out || fail "mpi4py rma: $(cat pyrma.out)"
# (the ranks' lines may come interleaved through the launcher)
[ "$(grep -o 'py-rma: rank [0-2] right' pyrma.out | sort -u | wc -l)" = 3 ] &&
    ! grep -q WRONG pyrma.out || fail "mpi4py rma: $(cat pyrma.out)"
set +e
emu --platform $RMAP -n 3 -- "$PAT" rma > rma.out 2> rma.err
st=$?
set -e
[ "$st" = 0 ] || [ "$st" = 1 -a "$(grep -c 'MPI_Win_create failed in the real MPI: ' rma.err)" = 1 ] ||
    fail "rma (default components): exit $st: $(cat rma.err)"
# Exclusive locks: 3 ranks add 1 to a counter on rank 0, 20 times each, under
# MPI_LOCK_EXCLUSIVE: 60 only if they exclude (with pt2pt and with sm).  Then
# rank 1 holds rank 0's lock over a 1 ms sleep and a put while rank 0 asks
# for it (really later): with sm (no target progress needed, so the real
# order is sure) rank 0 waits in virtual time, and gets the lock when rank
# 1's release reaches it, L = 50 us after rank 1's unlock ended.
for osc in pt2pt sm; do
    OMPI_MCA_osc=$osc emu --platform $RMAP -n 3 -- "$PAT" rma-locks 20 > rmal.out 2>&1 ||
        fail "rma-locks ($osc): $(cat rmal.out)"
    grep -q '^rma-locks: count 60 of 60, ' rmal.out || fail "rma-locks ($osc): $(cat rmal.out)"
done
grep -qx "rma-locks: count 60 of 60, waited over 1 ms, granted 50.00 us after rank 1's unlock, got 7" rmal.out ||
    fail "rma-locks (sm): $(cat rmal.out)"

# A poll of a named source that is blocked until a third rank's message (really
# 0.3 s late) wakes it: rank 1's message reaches 0 at os + L + 3G = 57.03 us,
# rank 0 takes it (+ or) and sends on to 2: 124.06 us; each failed MPI_Iprobe
# costs or, so the 14th, at 130 us, sees it.  (The coordinator once answered
# "nothing, ever" while rank 0 waited, and rank 2 polled for ever.)
emu --platform $P3 -n 3 -- "$PAT" relayed > relayed.out
grep -qx 'relayed: polls 14 seen_at 0.000130000' relayed.out || fail "relayed: $(cat relayed.out)"

# tenbin mandel itself (Improbe, Mrecv, Testsome, Comm_split_type, ...)
# renders under the emulator exactly what it renders for real.
MA="mandel --width 64 --height 48 --max-iter 200 --rows-per-task 2 --checksum -q --out m.pgm"
real=$("$MPIEXEC" ${MPIEXEC_NUMPROC_FLAG:--n} 3 "$TENBIN" $MA --policy single | sed -n 's/^checksum: //p')
emud=$(emu --platform hosts=8,L=50us,o=12us -n 3 -- "$TENBIN" $MA --policy single |
       sed -n 's/^checksum: //p')
[ -n "$real" ] && [ "$real" = "$emud" ] || fail "tenbin mandel checksum: real $real, emulated $emud"

# S3's Mandelbrot variants (apps/msmandel: plain MPI) under the emulator:
# the image of a real run; DY's masters split on virtual waiting times.
MS="--width 61 --height 47 --task 7 --checksum"
want=$("$MPIEXEC" ${MPIEXEC_NUMPROC_FLAG:--n} 2 "$MSMANDEL" --variant si $MS | sed -n 's/^checksum: //p')
for v in si ml:2 dy; do
    got=$(emu --platform hosts=64,L=50us,o=12.1us,ob=0.182us -n 6 -- "$MSMANDEL" --variant $v \
              --split-wait 1e-6 $MS | sed -n 's/^checksum: //p')
    [ -n "$want" ] && [ "$got" = "$want" ] || fail "msmandel $v under emu: checksum $got, want $want"
done

# 16 KiB results: above the real MPI's eager limit, below the model's S, so a
# slave is held in its real send until the master posts the receive, while
# the master's wildcard decisions and the slaves' probes go on (three runs:
# the stalls this guards against depended on real timing).
for i in 1 2 3; do
    got=$(emu --timeout 60 --platform hosts=64,L=50us,o=12.1us,ob=0.182us -n 6 -- "$MSMANDEL" \
              --variant dy --width 128 --height 128 --task 2048 --checksum | sed -n 's/^checksum: //p')
    [ "$got" = 2046753529 ] || fail "msmandel dy with 8 KiB results under emu: checksum '$got'"
done

# Compute follows the host's speed over virtual time: 0.2 s of CPU on a host
# at speed 1 until 0.1 s, then 0.5: 0.1 + 0.1/0.5 = 0.3 s.
cat > trace.json <<'JSON'
{"clusters": [{"hosts": [{"trace": [[0, 1], [0.1, 0.5]]}]}]}
JSON
emu --platform trace.json -n 1 -- "$PAT" wtime > wtrace.out
awk '/^sleep/ { exit !($4 > 0.29 && $4 < 0.33) }' wtrace.out || fail "trace speed: $(cat wtrace.out)"

# MPI_Wtime is virtual: a sleep is not compute, a busy loop is (speed 1).
emu --platform hosts=2 -n 1 -- "$PAT" wtime > wtime.out
awk '/^sleep/ { exit !($2 < 0.01 && $4 > 0.15 && $4 < 0.3) }' wtime.out ||
    fail "Wtime: $(cat wtime.out)"

# The program's own clocks and sleeps are virtual: 0.2 + 0.1 + 0.05 + 0.25 s
# of nanosleep, usleep, poll and clock_nanosleep (to an absolute time), each
# with 50 us of timer slack, read 0.6002 s on every clock, are idle, not compute, and take no real time; a busy
# loop reads the same on MPI_Wtime, CLOCK_MONOTONIC and the CPU clock; the
# date goes on from the real one.  (Rank 0's idle also holds its wait for
# rank 1 at the end, whose loop may take a little longer.)
t0=$(date +%s.%N)
emu --platform hosts=2 -n 2 -- "$PAT" clocks > clocks.out
took=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')
awk '/^sleeps/ { for (i = 3; i <= 9; i += 2) if ($i < 0.6001 || $i > 0.601) exit 1; if ($11 > 0.01) exit 1; ok++ }
     /^busy/ { if ($3 < 0.005 || $5 - $3 > 1e-4 || $3 - $5 > 1e-4 || $7 - $3 > 1e-4 || $3 - $7 > 1e-4) exit 1; ok++ }
     /^date/ { if ($3 < $2 || $3 > $2 + 30 || $4 < $3 - 1 || $4 > $3 + 1) exit 1; ok++ }
     END { exit ok != 3 }' clocks.out || fail "the program's clocks: $(cat clocks.out)"
awk '$1 == 0 && $2 == "h0" { exit !($7 >= 0.5999 && $7 < 0.8) }' clocks.out ||
    fail "the program's sleeps are not idle: $(cat clocks.out)"
awk -v t="$took" 'BEGIN { exit !(t < 20) }' || fail "the sleeps took real time: $took s"

# MPI_Cancel: receives nothing matched are cancelled (a wildcard one and one
# from a named source), one whose message had come is received, a send is
# sent; the same as the real MPI says.
emu --platform hosts=4 -n 2 -- "$PAT" cancel > cancel.out
grep -qx 'cancel: wildcard cancelled, named cancelled (test flag 1), arrived received got 5, then 6; sent 7' cancel.out ||
    fail "MPI_Cancel: $(cat cancel.out)"

# Python's clocks through libc: time.perf_counter, time.time and MPI.Wtime
# agree over a 0.3 s time.sleep and a loop; time.process_time counts the
# loop, not the sleep.
cat > clocks.py <<'PY'
from mpi4py import MPI
import time
t0, w0, p0, d0 = time.perf_counter(), MPI.Wtime(), time.process_time(), time.time()
time.sleep(0.3)
s = 0
for i in range(300000):
    s += i
t1, w1, p1, d1 = time.perf_counter(), MPI.Wtime(), time.process_time(), time.time()
if MPI.COMM_WORLD.rank == 0:
    print("python perf %.6f wtime %.6f process %.6f time %.6f" % (t1 - t0, w1 - w0, p1 - p0, d1 - d0))
PY
emu --platform hosts=2 -n 2 -- /usr/bin/python3 clocks.py > pyclocks.out
awk '/^python/ { d1 = $3 - $5; d2 = $9 - $5; s = $3 - 0.3 - $7
                 exit !(d1 < 1e-4 && d1 > -1e-4 && d2 < 1e-4 && d2 > -1e-4 && $7 > 0 && s < 0.005 && s > -0.005) }' pyclocks.out ||
    fail "Python's clocks under emu: $(cat pyclocks.out)"

# A master that polls with MPI_Iprobe and sleeps 1 ms between polls (as
# HyPhy's does) until ranks 1 and 2 send after 0.1 and 0.2 s: about 190 polls
# (one per 1 ms + 50 us of Linux's timer slack + 12 us of failed probe), its
# time idle, not compute.
emu --platform hosts=4,L=50us,o=12us -n 3 -- "$PAT" pollsleep > pollsleep.out
awk '/^polls/ { exit !($2 >= 187 && $2 <= 193) }' pollsleep.out || fail "pollsleep: $(cat pollsleep.out)"
awk '$1 == 0 && $2 == "h0" { exit !($7 > 0.19 && $4 < 0.01) }' pollsleep.out ||
    fail "pollsleep: the master's sleeps are not idle: $(cat pollsleep.out)"

# --trace: the project's Chrome trace, one process per rank.
emu --platform $P1 -n 3 --trace t.json -- "$PAT" collectives > /dev/null
grep -q '"traceEvents"' t.json && grep -q '"name":"rank 2 (h2)"' t.json ||
    fail "trace: $(head -c 300 t.json)"

# expect (expect.inc), and no result printed after a failure.
expect_fail() {
    expect "$@"
    shift 2
    grep -q predicted_makespan out.txt && fail "tenbin $*: printed a result after failing"
    return 0
}
expect_fail 2 "^tenbin emu: 4 ranks do not fit the platform: it has 2 cores" \
    emu --platform hosts=2 -n 4 -- "$PAT" pingpong 1 1
expect_fail 2 "^tenbin emu: --platform: spec: unknown key 'bogus'" \
    emu --platform hosts=2,bogus=1 -n 2 -- "$PAT" pingpong 1 1
expect_fail 2 "^tenbin emu: ./nonexistent: no such program" emu --platform hosts=2 -n 2 -- ./nonexistent
expect_fail 2 "^tenbin emu: no program given" emu --platform hosts=2 -n 2
expect_fail 2 "^tenbin emu: -n P is required" emu --platform hosts=2 -- "$PAT"
expect_fail 2 "^tenbin emu: --platform is required" emu -n 2 -- "$PAT"
expect_fail 1 "^tenbin emu: MPI_Comm_spawn is not emulated" emu --platform hosts=2 -n 2 -- "$PAT" spawn
expect_fail 1 "^tenbin emu: MPI_Gather over an intercommunicator is not emulated" \
    emu --platform hosts=4 -n 4 -- "$PAT" inter-gather
# mpi4py.futures' dynamic mode (the script run alone) spawns its workers.
expect_fail 1 "^tenbin emu: MPI_Comm_spawn is not emulated" \
    emu --platform hosts=4 -n 1 -- /usr/bin/python3 futures.py
expect_fail 1 "^tenbin emu: rank 1 called MPI_Abort with code 3" \
    emu --platform hosts=2 -n 2 -- "$PAT" abort
expect_fail 1 "^tenbin emu: .*rank 1 ended before MPI_Finalize" \
    emu --platform hosts=2 -n 2 -- "$PAT" crash
expect_fail 1 "^tenbin emu: .*deadlock: every rank waits for a message no rank will send (rank 0: from 1, tag 9, rank 1: from 0, tag 9)" \
    emu --platform hosts=2 -n 2 -- "$PAT" deadlock
expect_fail 1 "^tenbin emu: .*deadlock: .*rank 0: its send to 1 to be received" \
    emu --platform hosts=2 -n 2 -- "$PAT" ssend-deadlock
expect_fail 1 "^tenbin emu: .*ranks called MPI_Init through the emulator" \
    emu --platform hosts=2 -n 2 -- /bin/true
# A rank that does not load the library (its LD_PRELOAD removed here) is
# noticed instead of waited for.
cat > nopreload.sh <<'SH'
#!/bin/sh
if [ "${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-0}}" = 1 ]; then unset LD_PRELOAD; fi
exec "$@"
SH
chmod +x nopreload.sh
expect_fail 1 "^tenbin emu: .*only 1 of 2 ranks started under the emulator" \
    emu --platform hosts=2 -n 2 -- ./nopreload.sh "$PAT" pingpong 10 10
# --timeout while a rank is still starting (MPI_Init waits for every rank):
# says how far the start got, and
# leaves no process behind.
cat > slowstart.sh <<'SH'
#!/bin/sh
if [ "${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-0}}" = 1 ]; then sleep 30; fi
exec "$@"
SH
chmod +x slowstart.sh
expect_fail 1 "^tenbin emu: no end after 5 s of real time (stopped; see --timeout): 0 of 2 ranks were out of MPI_Init" \
    emu --timeout 5 --platform hosts=2 -n 2 -- ./slowstart.sh "$PAT" pingpong 10 10
i=0 # the launcher stops its ranks itself; give it time on a loaded machine
while pgrep -f "slowstart.sh $PAT|^sleep 30\$" > /dev/null && [ $i -lt 40 ]; do sleep 0.5; i=$((i + 1)); done
! pgrep -f "slowstart.sh $PAT|^sleep 30\$" > /dev/null ||
    fail "--timeout left processes: $(pgrep -af 'slowstart|sleep 30')"
# The coordinator killed outright (no chance to stop anyone): the ranks see
# it gone (on their ring, at their next look at the connection) and end, and
# the launcher with them.
"$TENBIN" emu --platform $P1 -n 4 -- "$PAT" pingpong 100000000 100 > /dev/null 2>&1 &
coord=$!
i=0
until [ "$(ps -eo args= | grep -c "^$PAT pingpong 100000000")" = 4 ] || [ $i -ge 200 ]; do
    sleep 0.1; i=$((i + 1))
done
[ $i -lt 200 ] || fail "the 4 ranks to be left alone never started"
# ... and have said hello (the coordinator then unlinks its shared memory; on a
# loaded machine 0.5 s after the processes appear was not always enough).
i=0
while ls /dev/shm/tenbin-emu-$coord-* > /dev/null 2>&1 && [ $i -lt 600 ]; do
    sleep 0.1; i=$((i + 1))
done
sleep 0.5
kill -9 $coord
wait $coord 2> /dev/null || true
i=0
while ps -eo stat=,args= | awk -v pat="$PAT pingpong 100000000" '$1 !~ /^Z/ && index($0, pat) && !/awk/' | grep -q .; do
    [ $i -ge 300 ] && fail "ranks still running 30 s after the coordinator was killed"
    sleep 0.1; i=$((i + 1))
done
[ -z "$(leftover_shm)" ] || fail "left in /dev/shm after the coordinator was killed: $(leftover_shm)"
# Nothing of this test left running (zombies waiting for their reaper are
# not running; other tests' emulations run in their own directories).
sleep 0.5
here=$(pwd -P)
left=$(for p in $(pgrep -f "$PAT"); do
    [ "$(readlink "/proc/$p/cwd" 2>/dev/null)" = "$here" ] || continue
    ps -o stat=,args= -p "$p" | awk '$1 !~ /^Z/'
done)
[ -z "$left" ] || fail "processes left behind: $left"
echo "emu: all checks passed"
