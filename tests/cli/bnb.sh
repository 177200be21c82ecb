#!/bin/sh
# tenbin bnb knapsack and tsp: the known optimum of every shared knapsack
# instance up to 200 items (tests/data/knapsack/optimal.txt) and of every
# TSPLIB instance up to 29 cities (tests/data/tsplib/solutions) on 1, 2, 4
# and 8 real ranks and on 64 and 1024 simulated ranks in clusters, and of the
# other TSPLIB files to 76 cities on 1 and 4 ranks (pr76 and kroA100 to 10 %
# of it: they take minutes); knapsack
# items are checked here with awk from the file itself (worth the optimum,
# within the capacity), tours are permutations of the cities (and the tool
# checks their length against the optimum it prints); every bad-input path
# gives one line and exit 2.
# Environment (set by CTest): TENBIN, MPIEXEC, MPIEXEC_NUMPROC_FLAG, TB_TEST_TMP.
set -eu
DATA=$(cd "$(dirname "$0")/../data/knapsack" && pwd)
TSP=$(cd "$(dirname "$0")/../data/tsplib" && pwd)
cd "$TB_TEST_TMP"
NP=${MPIEXEC_NUMPROC_FLAG:--n}
. "$(dirname "$0")/expect.inc"

# check FILE OPTIMUM JSON-LINE: optimum, proven, and the items' sums.
check() {
    file=$1 want=$2 json=$3
    echo "$json" | grep -q "\"optimum\": $want," || fail "$file: want optimum $want: $json"
    echo "$json" | grep -q '"proven": true' || fail "$file: not proven: $json"
    items=$(echo "$json" | sed 's/.*"solution": \[\([0-9, ]*\)\].*/\1/' | tr -d ' ')
    awk -v items="$items" -v want="$want" '
        NR == 1 { n = $1; cap = $2; k = 0; next }
        { for (i = 1; i <= NF; i++) { v[k++] = $i } }
        END {
            m = split(items, it, ",")
            for (j = 1; j <= m; j++) {
                if (it[j] !~ /^[0-9]+$/ || it[j] >= n || seen[it[j]]++) { print "bad item " it[j]; exit 1 }
                p += v[it[j]]; w += v[n + it[j]]
            }
            if (p != want) { print "items worth " p ", want " want; exit 1 }
            if (w > cap) { print "items weigh " w " > capacity " cap; exit 1 }
        }' "$DATA/$file" || fail "$file: solution [$items] wrong"
}

n=0
for f in "$DATA"/knapPI_*_100_*.txt "$DATA"/knapPI_*_200_*.txt; do
    b=$(basename "$f" .txt)
    want=$(awk -v b="$b" '$1 == b { print $2 }' "$DATA/optimal.txt")
    [ -n "$want" ] || fail "no optimum for $b"
    for p in 1 2 4 8; do
        "$MPIEXEC" $NP $p "$TENBIN" bnb knapsack "$f" --json -q > out.txt 2> err.txt ||
            fail "$b on $p ranks: exit $?: $(cat err.txt)"
        check "$b.txt" "$want" "$(tail -n 1 out.txt)"
    done
    # Simulated: one group per cluster, uneven speeds, a slow link.
    "$TENBIN" bnb knapsack "$f" --json -q --sim "hosts=64,clusters=4,speed=0.5-2,L=10us,o=2us,wan-L=5ms" \
        > out.txt || fail "$b simulated on 64"
    check "$b.txt" "$want" "$(tail -n 1 out.txt)"
    "$TENBIN" bnb knapsack "$f" --json -q --sim "hosts=1024,clusters=8,wan-L=20ms" --depth 3 \
        --balance seed > out.txt || fail "$b simulated on 1024"
    check "$b.txt" "$want" "$(tail -n 1 out.txt)"
    n=$((n + 1))
done
[ "$n" = 18 ] || fail "expected 18 instances up to 200 items, found $n"

# TSP: check_tour NAME WANT JSON-LINE
check_tour() {
    name=$1 want=$2 json=$3
    echo "$json" | grep -q "\"optimum\": $want," || fail "$name: want length $want: $json"
    echo "$json" | grep -q '"proven": true' || fail "$name: not proven: $json"
    check_perm "$name" "$json"
}
check_perm() {
    name=$1 json=$2
    dim=$(sed -n 's/^DIMENSION *: *\([0-9]*\).*/\1/p' "$TSP/$name.tsp")
    echo "$json" | sed 's/.*"solution": \[\([0-9, ]*\)\].*/\1/' | tr -d ' ' | awk -F, -v n="$dim" '
        { if (NF != n) { print NF " cities, want " n; exit 1 }
          for (i = 1; i <= NF; i++) if ($i !~ /^[0-9]+$/ || $i >= n || seen[$i]++) { print "bad city " $i; exit 1 } }' ||
        fail "$name: the tour is not a permutation of $dim cities"
}
n=0
for name in burma14 ulysses16 gr17 gr21 ulysses22 gr24 fri26 bayg29 bays29; do
    want=$(awk -v b="$name" '$1 == b { print $3 }' "$TSP/solutions")
    [ -n "$want" ] || fail "no optimum for $name"
    for p in 1 2 4 8; do
        "$MPIEXEC" $NP $p "$TENBIN" bnb tsp "$TSP/$name.tsp" --json -q > out.txt 2> err.txt ||
            fail "$name on $p ranks: exit $?: $(cat err.txt)"
        check_tour "$name" "$want" "$(tail -n 1 out.txt)"
    done
    "$TENBIN" bnb tsp "$TSP/$name.tsp" --json -q --sim "hosts=64,clusters=4,speed=0.5-2,wan-L=5ms" \
        --node-cost 1e-3 > out.txt || fail "$name simulated on 64"
    check_tour "$name" "$want" "$(tail -n 1 out.txt)"
    "$TENBIN" bnb tsp "$TSP/$name.tsp" --json -q --sim "hosts=1024,clusters=8,wan-L=20ms" \
        --node-cost 1e-3 --depth 1 --startup 0 > out.txt || fail "$name simulated on 1024"
    check_tour "$name" "$want" "$(tail -n 1 out.txt)"
    n=$((n + 1))
done
[ "$n" = 9 ] || fail "expected 9 TSP instances, did $n"
# The rest of the shared TSPLIB files (42-76 cities): proven on 1 and 4 ranks;
# the two that take minutes (pr76, kroA100) read and stopped within 10 %: the
# tour is a permutation at most 10 % above the optimum, never below it.
for name in dantzig42 swiss42 att48 gr48 hk48 eil51 berlin52 st70 eil76; do
    want=$(awk -v b="$name" '$1 == b { print $3 }' "$TSP/solutions")
    for p in 1 4; do
        "$MPIEXEC" $NP $p "$TENBIN" bnb tsp "$TSP/$name.tsp" --json -q > out.txt 2> err.txt ||
            fail "$name on $p ranks: exit $?: $(cat err.txt)"
        check_tour "$name" "$want" "$(tail -n 1 out.txt)"
    done
    n=$((n + 1))
done
for name in pr76 kroA100; do
    want=$(awk -v b="$name" '$1 == b { print $3 }' "$TSP/solutions")
    "$TENBIN" bnb tsp "$TSP/$name.tsp" --json -q --gap 0.1 > out.txt 2> err.txt ||
        fail "$name: exit $?: $(cat err.txt)"
    json=$(tail -n 1 out.txt)
    got=$(echo "$json" | sed 's/.*"optimum": \([0-9.e+]*\),.*/\1/')
    awk -v g="$got" -v w="$want" 'BEGIN { exit !(g >= w && g <= 1.1 * w) }' ||
        fail "$name: length $got, optimum $want: $json"
    check_perm "$name" "$json"
    n=$((n + 1))
done
[ "$n" = "$(ls "$TSP"/*.tsp | wc -l)" ] || fail "$n TSP instances done, $(ls "$TSP"/*.tsp | wc -l) in $TSP"

# BMI: a generated instance (the same bytes for the same seed), solved within the
# default gap on real and simulated ranks, the bounds agreeing across runs.
"$TENBIN" bnb generate bmi --m 6 --nx 2 --ny 3 --seed 4 > bmi.json
"$TENBIN" bnb generate bmi --m 6 --nx 2 --ny 3 --seed 4 | cmp -s - bmi.json || fail "generate is not reproducible"
"$TENBIN" bnb generate bmi --m 6 --nx 2 --ny 3 --seed 5 | cmp -s - bmi.json && fail "generate ignores --seed"
for p in 1 2 4; do
    "$MPIEXEC" $NP $p "$TENBIN" bnb bmi bmi.json --json -q > "bmi_$p.txt" 2> err.txt ||
        fail "bmi on $p ranks: $(cat err.txt)"
done
"$TENBIN" bnb bmi bmi.json --json -q --sim "hosts=32,clusters=2,wan-L=2ms" > bmi_sim.txt
# the split first (a node as dear as a task), and no split at all
"$TENBIN" bnb bmi bmi.json --json -q --sim "hosts=32,clusters=2,wan-L=2ms" --node-cost 0.02 \
    --task-time 0.01 > bmi_dear.txt || fail "bmi, nodes as dear as a task"
"$TENBIN" bnb bmi bmi.json --json -q --sim "hosts=32,clusters=2,wan-L=2ms" --no-split \
    > bmi_nosplit.txt || fail "bmi --no-split"
# with the semidefinite bound bmi does not split: the same run as --no-split
"$TENBIN" bnb bmi bmi.json --json -q --sim "hosts=32,clusters=2,wan-L=2ms" --node-cost 0.02 \
    --task-time 0.01 --no-split > bmi_dear_nosplit.txt || fail "bmi, nodes as dear as a task, --no-split"
ms() { tail -n 1 "$1" | grep -o '"nodes": [0-9]*, "tasks": [0-9]*\|"makespan_s": [0-9.e+-]*' | tr '\n' ' '; }
[ -n "$(ms bmi_dear.txt)" ] && [ "$(ms bmi_dear.txt)" = "$(ms bmi_dear_nosplit.txt)" ] ||
    fail "bmi with the semidefinite bound split: $(tail -n 1 bmi_dear.txt) against $(tail -n 1 bmi_dear_nosplit.txt)"
# the eigenvalue bounds alone (no semidefinite one), as before it existed
TENBIN_BMI_BOUND=eigen "$TENBIN" bnb bmi bmi.json --json -q > bmi_eigen.txt ||
    fail "bmi with TENBIN_BMI_BOUND=eigen"
for f in bmi_1.txt bmi_2.txt bmi_4.txt bmi_sim.txt bmi_dear.txt bmi_nosplit.txt bmi_eigen.txt; do
    tail -n 1 $f | grep -q '"x": \[[-0-9.e, ]*\], "y": \[[-0-9.e, ]*\]' || fail "$f: no x and y: $(tail -n 1 $f)"
done
# the semidefinite bounds, summed over the ranks, none failed; none when off
for f in bmi_1.txt bmi_2.txt bmi_4.txt bmi_sim.txt; do
    tail -n 1 $f | grep -q '"bmi": {"sdp_bounds": [1-9][0-9]*, "sdp_failed": 0, "sdp_pruned": [0-9]*, "sdp_reduced": [0-9]*}' ||
        fail "$f: no semidefinite bounds counted: $(tail -n 1 $f)"
done
tail -n 1 bmi_eigen.txt | grep -q '"bmi": {"sdp_bounds": 0, "sdp_failed": 0, "sdp_pruned": 0, "sdp_reduced": 0}' ||
    fail "TENBIN_BMI_BOUND=eigen computed semidefinite bounds: $(tail -n 1 bmi_eigen.txt)"
"$TENBIN" bnb bmi bmi.json -q | grep -q '^bmi: sdp_bounds [1-9][0-9]*, sdp_failed 0, sdp_pruned [0-9]*, sdp_reduced [0-9]*$' ||
    fail "the text result does not count the semidefinite bounds"
# every run's lower bound is below every run's upper bound, each within the gap
cat bmi_1.txt bmi_2.txt bmi_4.txt bmi_sim.txt bmi_dear.txt bmi_nosplit.txt bmi_eigen.txt | grep '^{' | awk '
    { match($0, /"upper": [-0-9.e+]+/); u[NR] = substr($0, RSTART + 9, RLENGTH - 9) + 0
      match($0, /"lower": [-0-9.e+]+/); l[NR] = substr($0, RSTART + 9, RLENGTH - 9) + 0 }
    END { if (NR != 7) { print "want 7 results, got " NR; exit 1 }
          for (i = 1; i <= NR; i++) {
              if (u[i] - l[i] > 1e-3 * (u[i] < 0 ? -u[i] : u[i]) * (1 + 1e-9)) { print "gap of run " i; exit 1 }
              for (j = 1; j <= NR; j++) if (l[i] > u[j]) { print "lower " l[i] " above upper " u[j]; exit 1 } } }' ||
    fail "bmi bounds disagree"
printf '{"m": 2, "nx": 1, "ny": 1,\n "F00": [[1, 2], [3, 4]], "Fx": [[[1, 0], [0, 1]]], "Fy": [[[1, 0], [0, 1]]],\n "Fxy": [[[[1, 0], [0, 1]]]], "x": [[-1, 1]], "y": [[-1, 1]]}\n' > asym.json
printf '{"m": 2,\n "nx": 1,\n "ny": 1,,\n}\n' > broken.json
printf '{"m": 2, "nx": 1, "ny": 1, "F00": [[1, 0], [0, 1]], "Fx": [], "Fy": [], "Fxy": []}\n' > fx.json
expect 2 "asym.json: F00: not symmetric" bnb bmi asym.json --sim hosts=2
expect 2 "broken.json:3: not valid JSON" bnb bmi broken.json --sim hosts=2
expect 2 "fx.json: Fx: expected nx = 1 matrices" bnb bmi fx.json --sim hosts=2
# Found by tests/fuzz: the matrices were allocated (30 GB here) before their
# shapes were checked.
printf '{"m": 1000, "nx": 60, "ny": 60}\n' > huge.json
expect 2 "huge.json: F00: expected an array of 1000 rows" bnb bmi huge.json --sim hosts=2
expect 2 "bmi: --gap must be above 0" bnb bmi bmi.json --gap 0
expect 2 "generate: expected 'generate bmi" bnb generate sat

# Groups, forced moves, no start-up expansion: the same optimum.
f=knapPI_3_200_1000_1.txt
want=$(awk '$1 == "knapPI_3_200_1000_1" { print $2 }' "$DATA/optimal.txt")
"$MPIEXEC" $NP 8 "$TENBIN" bnb knapsack "$DATA/$f" --json -q --groups 3 --force-moves --startup 0 \
    > out.txt || fail "groups 3 with forced moves"
check "$f" "$want" "$(tail -n 1 out.txt)"
tail -n 1 out.txt | grep -q '"groups": \[{"master": 1, "workers": 2,' || fail "group layout: $(tail -n 1 out.txt)"

# A wide-area delay injected between the groups: the same optimum.
"$MPIEXEC" $NP 5 "$TENBIN" bnb knapsack "$DATA/$f" --json -q --groups 2 --wan-delay 5 > out.txt ||
    fail "wan delay run"
check "$f" "$want" "$(tail -n 1 out.txt)"
"$MPIEXEC" $NP 5 "$TENBIN" bnb knapsack "$DATA/$f" --json -q --groups 1 --sites 2 --wan-delay 5 > out.txt ||
    fail "wan delay run, one group across two sites"
check "$f" "$want" "$(tail -n 1 out.txt)"

# A gap: the answer is within it.
"$TENBIN" bnb knapsack "$DATA/knapPI_3_200_1000_2.txt" --json -q --gap 0.01 --sim hosts=16 > out.txt
awk '{ match($0, /"optimum": [0-9.e+]+/); o = substr($0, RSTART + 11, RLENGTH - 11)
       match($0, /"bound": [0-9.e+]+/); b = substr($0, RSTART + 9, RLENGTH - 9)
       if (!(o <= 4577 && 4577 <= b && (b - o) <= 0.01 * o * (1 + 1e-9))) { print "gap run: " $0; exit 1 } }' \
    out.txt || fail "gap run"

# A Chrome trace: every worker's tasks, the start-up, the bounds over time.
"$MPIEXEC" $NP 4 "$TENBIN" bnb knapsack "$DATA/$f" -q --trace run.json > out.txt || fail "trace run"
for ev in '"name":"task"' '"name":"start-up"' '"name":"bounds"' '"name":"pending"'; do
    tr -d ' ' < run.json | grep -q "$ev" || fail "trace: no $ev event"
done
# Knapsack maximises: every bound in the trace is at or above the optimum, every
# incumbent at or below it, and the last incumbent is the optimum.
opt=$(awk -v b="${f%.txt}" '$1 == b { print $2 }' "$DATA/optimal.txt")
tr -d ' ' < run.json | tr '{' '\n' | awk -v o="$opt" -F'[:}]' '
    /^"bound":/ { nb++; if ($2 + 0 < o) bad = bad " bound " $2 }
    /^"incumbent":/ { ni++; last = $2; if ($2 + 0 > o) bad = bad " incumbent " $2 }
    END { if (bad != "" || !nb || !ni || last + 0 != o) { print "optimum " o ":" bad " last " last; exit 1 } }' ||
    fail "trace: bounds on the wrong side of the optimum"
"$TENBIN" bnb knapsack "$DATA/$f" -q --sim hosts=8 --trace sim.json > out.txt || fail "simulated trace"
tr -d ' ' < sim.json | grep -q '"name":"task"' || fail "simulated trace: no task"

# Progress lines on stderr with --progress (by default only on a terminal:
# tests/cli/progress.sh), none into a file without it.
"$TENBIN" bnb knapsack "$DATA/knapPI_3_200_1000_2.txt" --sim hosts=8 --node-cost 1e-5 --progress > out.txt 2> err.txt
grep -q '^bnb: .* incumbent .* bound .* gap .* pending .* nodes' err.txt || fail "no progress lines: $(cat err.txt)"
"$TENBIN" bnb knapsack "$DATA/knapPI_3_200_1000_2.txt" --sim hosts=8 --node-cost 1e-5 > out.txt 2> err.txt
! grep -q '^bnb: .* incumbent' err.txt || fail "progress lines into a file: $(cat err.txt)"

# Bad input: one line, exit 2.
printf '3 10\n1 2 3\n4 5\n' > short.txt
printf '2 10\n1 x\n4 5\n' > word.txt
printf '2 10\n1 2\n4 5\n9\n' > extra.txt
: > empty.txt
expect 2 "short.txt:3: expected 3 weights, found 2" bnb knapsack short.txt --sim hosts=2
expect 2 "word.txt:2: expected an integer from 0 to 2147483647, got 'x'" bnb knapsack word.txt --sim hosts=2
expect 2 "extra.txt:4: unexpected '9' after the 2 weights" bnb knapsack extra.txt --sim hosts=2
expect 2 "empty.txt:1: empty file" bnb knapsack empty.txt --sim hosts=2
expect 2 "nosuch.txt: No such file or directory" bnb knapsack nosuch.txt --sim hosts=2
# a bad platform is named by the option that gave it
printf '{"clusters": [{"name": "a", "hosts": 2}, {"name": "b", "hosts": 2}]}\n' > twosites.json
printf '3 10\n1 2 3\n4 5 6\n' > ok.txt
expect 2 "^tenbin bnb: --sim: twosites.json: missing key 'wan'" bnb knapsack ok.txt --sim twosites.json
expect 2 "unknown problem 'sat' (expected knapsack, tsp or bmi)" bnb sat x.txt
expect 2 "which problem" bnb
expect 2 "knapsack: which file" bnb knapsack
expect 2 "gap: expected a number in \[0, 1), got '1.5'" bnb knapsack "$DATA/$f" --gap 1.5
expect 2 "depth: expected an integer in 1..64, got '0'" bnb knapsack "$DATA/$f" --depth 0
expect 2 "balance: expected throughput or seed, got 'x'" bnb knapsack "$DATA/$f" --balance x
expect 2 "groups 4 needs at least 5 ranks" bnb knapsack "$DATA/$f" --sim hosts=4 --groups 4
expect 2 "ranks 9 does not fit the platform: it has 8 cores" bnb knapsack "$DATA/$f" --sim hosts=8 --ranks 9
expect 2 "ranks and --node-cost go with --sim" bnb knapsack "$DATA/$f" --ranks 4
expect 2 "wan-delay is for real runs" bnb knapsack "$DATA/$f" --sim hosts=4 --wan-delay 10
expect 2 "wan-delay: expected milliseconds from 0 to 60000, got '-1'" bnb knapsack "$DATA/$f" --wan-delay -1
printf 'NAME: t\nTYPE: TSP\nEDGE_WEIGHT_TYPE: EUC_2D\nNODE_COORD_SECTION\n1 0 0\n' > nodim.tsp
printf 'NAME: t\nTYPE: TSP\nDIMENSION: 3\nEDGE_WEIGHT_TYPE: XRAY\n' > type.tsp
printf 'NAME: t\nTYPE: ATSP\nDIMENSION: 3\n' > atsp.tsp
printf 'TYPE: TSP\nDIMENSION: 3\nEDGE_WEIGHT_TYPE: EUC_2D\nNODE_COORD_SECTION\n1 0 0\n2 1 1\n' > few.tsp
printf 'TYPE: TSP\nDIMENSION: 3\nEDGE_WEIGHT_TYPE: EUC_2D\nNODE_COORD_SECTION\n1 0 0\n3 1 1\n2 5 5\n' > order.tsp
printf 'TYPE: TSP\nDIMENSION: 3\nEDGE_WEIGHT_TYPE: EXPLICIT\nEDGE_WEIGHT_FORMAT: UPPER_ROW\nEDGE_WEIGHT_SECTION\n1 2 -3\n' > neg.tsp
expect 2 "nodim.tsp:4: NODE_COORD_SECTION before a DIMENSION of 3 or more" bnb tsp nodim.tsp --sim hosts=2
expect 2 "type.tsp:4: EDGE_WEIGHT_TYPE XRAY is not supported" bnb tsp type.tsp --sim hosts=2
expect 2 "atsp.tsp:2: TYPE ATSP: only symmetric TSP" bnb tsp atsp.tsp --sim hosts=2
expect 2 "few.tsp:6: the file ends where a city number was expected" bnb tsp few.tsp --sim hosts=2
expect 2 "order.tsp:6: expected city 2, got 3" bnb tsp order.tsp --sim hosts=2
expect 2 "neg.tsp:6: edge weights must be integers from 0 to 1e8, got -3" bnb tsp neg.tsp --sim hosts=2
# Found by tests/fuzz: a second section or DIMENSION overran the matrix of the
# first; far-apart cities overflowed the int32 distances.
printf 'DIMENSION: 3\nEDGE_WEIGHT_TYPE: EUC_2D\nNODE_COORD_SECTION\n1 0 0\n2 0 1\n3 1 0\nDIMENSION: 400\n' > dim2.tsp
printf 'DIMENSION: 3\nEDGE_WEIGHT_TYPE: EUC_2D\nNODE_COORD_SECTION\n1 0 0\n2 0 1\n3 1 0\nNODE_COORD_SECTION\n' > sec2.tsp
printf 'DIMENSION: 3\nEDGE_WEIGHT_TYPE: EUC_2D\nNODE_COORD_SECTION\n1 0 0\n2 1e300 0\n3 0 1\n' > far.tsp
expect 2 "dim2.tsp:7: DIMENSION after the data section" bnb tsp dim2.tsp --sim hosts=2
expect 2 "sec2.tsp:7: NODE_COORD_SECTION after the data section" bnb tsp sec2.tsp --sim hosts=2
expect 2 "far.tsp:6: cities 1 and 2: distance inf out of range (at most 1e8)" bnb tsp far.tsp --sim hosts=2
# Found by tests/fuzz: a root whose bound fails or is not a number made the
# one-rank search free a pointer it never set.
R="$TB_SOURCE_DIR/tests/fuzz/regress/fuzz_bnb_bmi"
expect 1 "run failed: value out of range" bnb bmi "$R/root-bound-fails.json"
expect 1 "the problem's bound is not a number" bnb bmi "$R/root-bound-nan.json"
set +e
"$MPIEXEC" $NP 3 "$TENBIN" bnb knapsack "$DATA/$f" --groups 3 > out.txt 2> err.txt
got=$?
set -e
[ "$got" = 2 ] || fail "groups 3 on 3 ranks: exit $got"
[ "$(grep -c 'groups 3 needs at least 4 ranks (a supervisor and a master per group), but mpiexec started 3' err.txt)" = 1 ] ||
    fail "groups 3 on 3 ranks: $(cat err.txt)"
echo "ok bnb"
