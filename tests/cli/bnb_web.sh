#!/bin/sh
# tenbin bnb --web: the live view of a real mpiexec run, over HTTP (curl):
# the page, the state with every documented key, the history growing, the
# event stream, the error statuses (404, 405 with Allow, 401, 403, 413), and
# a stop with the token that ends the run cleanly (exit 0, not proven); bad
# --web options give one line and exit 2.  No timing is judged.
# Environment (set by CTest): TENBIN, MPIEXEC, MPIEXEC_NUMPROC_FLAG, TB_TEST_TMP.
set -eu
TSP=$(cd "$(dirname "$0")/../data/tsplib" && pwd)
cd "$TB_TEST_TMP"
NP=${MPIEXEC_NUMPROC_FLAG:--n}
. "$(dirname "$0")/expect.inc"
command -v curl > /dev/null || fail "curl is not installed (scripts/bootstrap installs it)"

# kroA100 takes about 12 s on one worker: the stop comes first.
"$MPIEXEC" $NP 3 "$TENBIN" bnb tsp "$TSP/kroA100.tsp" --web 127.0.0.1:0 --json \
    > run.out 2> run.err &
run=$!
i=0
while ! grep -q "web view at" run.err && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
line=$(grep "^tenbin: web view at http://127.0.0.1:[0-9]*/ (token [0-9a-f]\{32\})$" run.err) ||
    { kill $run; fail "no web view line: $(cat run.err)"; }
url=$(echo "$line" | sed 's/.* at \(http[^ ]*\) .*/\1/')
tok=$(echo "$line" | sed 's/.*(token \([0-9a-f]*\))$/\1/')
code() { curl -s -o body.txt -w "%{http_code}" "$@"; }
check() { # STATUS WHAT CURL-ARGS...
    want=$1 what=$2
    shift 2
    got=$(code "$@") || true # a refused connection is reported below, with the run's stderr
    [ "$got" = "$want" ] ||
        { kill $run; fail "$what: HTTP $got, want $want: $(cat body.txt); run: $(tail -n 20 run.err)"; }
}
check 200 "the page" "$url"
grep -q "<title>tenbin bnb: live view</title>" body.txt || { kill $run; fail "page: $(head -c 200 body.txt)"; }
! grep -q "https\?://[a-z]" body.txt || { kill $run; fail "the page refers to another site"; }
# The first state is published once the search has begun: until then the
# view knows only that the run is on ({"running": true}).
i=0
while [ "$(code "${url}api/state")" = 200 ] && ! grep -q '"upper": ' body.txt && [ $i -lt 100 ]; do
    sleep 0.1
    i=$((i + 1))
done
check 200 "state" "${url}api/state"
for k in running upper lower gap pending nodes elapsed_s groups solution; do
    grep -q "\"$k\": " body.txt || { kill $run; fail "state: no \"$k\": $(cat body.txt)"; }
done
for k in name workers pending throughput idle_s; do
    grep -q "\"groups\": \[{.*\"$k\": " body.txt || { kill $run; fail "state groups: no \"$k\": $(cat body.txt)"; }
done
grep -q '"running": true' body.txt || { kill $run; fail "state: not running: $(cat body.txt)"; }
check 200 "problem" "${url}api/problem"
grep -q '^{"problem": "tsp", "file": ".*kroA100.tsp", "view": {"n": 100, "coords": \[\[1380, 939\], ' body.txt ||
    { kill $run; fail "problem: $(head -c 200 body.txt)"; }
check 200 "history" "${url}api/history"
n1=$(grep -o '"t": ' body.txt | wc -l)
sleep 1.2
check 200 "history" "${url}api/history"
n2=$(grep -o '"t": ' body.txt | wc -l)
[ "$n2" -gt "$n1" ] && [ "$n1" -ge 1 ] || { kill $run; fail "history does not grow: $n1 then $n2"; }
grep -q '^\[{"t": [0-9.]*, "upper": ' body.txt || { kill $run; fail "history: $(head -c 200 body.txt)"; }
timeout 5 curl -s -N "${url}api/events" > events.txt || true
grep -q '^data: {"running": true' events.txt || { kill $run; fail "events: $(head -c 200 events.txt)"; }
check 404 "unknown path" "${url}nope"
check 404 "no directories" "${url}api/"
check 405 "POST /api/state" -X POST "${url}api/state"
curl -s -D headers.txt -o /dev/null -X POST "${url}api/state"
grep -qi "^Allow: GET, HEAD" headers.txt || { kill $run; fail "405 without Allow: $(cat headers.txt)"; }
check 405 "GET /api/stop" "${url}api/stop"
check 401 "stop without a token" -X POST "${url}api/stop"
check 403 "stop with a wrong token" -X POST -H "Authorization: Bearer 0123456789abcdef0123456789abcdef" \
    "${url}api/stop"
head -c 70000 /dev/zero > big.bin
check 413 "an oversized body" -X POST -H "Authorization: Bearer $tok" --data-binary @big.bin \
    "${url}api/stop"
check 200 "state after the oversized body" "${url}api/state"
grep -q '"running": true' body.txt || { kill $run; fail "an oversized stop stopped the run"; }
check 200 "stop with the token" -X POST -H "Authorization: Bearer $tok" "${url}api/stop"
grep -q '"stopping": true' body.txt || { kill $run; fail "stop: $(cat body.txt)"; }
set +e
wait $run
got=$?
set -e
[ "$got" = 0 ] || fail "the stopped run: exit $got: $(cat run.err)"
json=$(tail -n 1 run.out)
echo "$json" | grep -q '"proven": false' || fail "the stopped run: not unproven: $json"
echo "$json" | grep -q '"optimum": [0-9]' || fail "the stopped run: no incumbent: $json"
! curl -s -o /dev/null "${url}api/state" || fail "the server outlived the run"

# --history, then tenbin bnb replay serves it until SIGTERM (exit 0).
K=$(cd "$(dirname "$0")/../data/knapsack" && pwd)/knapPI_1_100_1000_1.txt
"$MPIEXEC" $NP 3 "$TENBIN" bnb knapsack "$K" --history hist.json --json -q > hrun.out ||
    fail "--history run: exit $?"
grep -q '^{"problem": {"problem": "knapsack", ' hist.json || fail "hist.json: $(head -c 200 hist.json)"
grep -q '^ "final": {"running": false, .*"proven": true' hist.json || fail "hist.json final: $(cat hist.json)"
grep -q '^ "history": \[' hist.json || fail "hist.json history: $(cat hist.json)"
"$TENBIN" bnb replay hist.json --web 127.0.0.1:0 2> replay.err &
rp=$!
i=0
while ! grep -q "replay of hist.json at" replay.err && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
rurl=$(sed -n 's/.* at \(http[^ ]*\) .*/\1/p' replay.err)
[ -n "$rurl" ] || { kill $rp; fail "replay: no line: $(cat replay.err)"; }
run=$rp
check 200 "replay state" "${rurl}api/state"
grep -q '"running":false,"problem":"knapsack".*"proven":true' body.txt ||
    { kill $rp; fail "replay state: $(cat body.txt)"; }
check 200 "replay history" "${rurl}api/history"
grep -q '^\[' body.txt || { kill $rp; fail "replay history: $(head -c 100 body.txt)"; }
check 200 "replay page" "$rurl"
kill -TERM $rp
set +e
wait $rp
got=$?
set -e
[ "$got" = 0 ] || fail "replay after SIGTERM: exit $got"
# A TSP's history (the cities' coordinates, the tour) replays too.
"$MPIEXEC" $NP 3 "$TENBIN" bnb tsp "$TSP/burma14.tsp" --history tsp.json --json -q > trun.out ||
    fail "--history tsp run: exit $?"
grep -q '"view": {"n": 14, "coords": \[\[' tsp.json || fail "tsp.json: $(head -c 200 tsp.json)"
grep -q '"solution": \[0, ' tsp.json || fail "tsp.json solution: $(cat tsp.json)"
"$TENBIN" bnb replay tsp.json --web 127.0.0.1:0 2> treplay.err &
rp=$!
i=0
while ! grep -q "replay of tsp.json at" treplay.err && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
grep -q "replay of tsp.json at" treplay.err || { kill $rp; fail "tsp replay: $(cat treplay.err)"; }
kill -TERM $rp
set +e
wait $rp
got=$?
set -e
[ "$got" = 0 ] || fail "tsp replay after SIGTERM: exit $got"
# A bad history: exit 2 and one line on stderr naming the file and where in
# it, before any server starts (timeout ends a replay that would serve it).
bad_replay() { # FILE WHAT-AND-WHERE
    set +e
    timeout 10 "$TENBIN" bnb replay "$1" --web 127.0.0.1:0 > out.txt 2> err.txt
    got=$?
    set -e
    [ "$got" = 2 ] || fail "replay $1: exit $got, want 2: $(cat err.txt)"
    [ "$(wc -l < err.txt)" = 1 ] && grep -q -- "^tenbin bnb: replay: $1$2$" err.txt ||
        fail "replay $1: want the one line 'tenbin bnb: replay: $1$2': $(cat err.txt)"
}
grep -q '"history": \[{"t": ' hist.json || fail "hist.json: no history point: $(cat hist.json)"
echo 'nonsense' > bad.json
bad_replay bad.json ":1:1: not JSON"
echo '{"problem": 1}' > bad.json
bad_replay bad.json ": problem: expected an object, got 1"
sed 's/"final": /"finale": /' hist.json > bad.json
bad_replay bad.json ": final: missing, expected an object"
sed 's/{"t": /{"t": "0", "t0": /' hist.json > bad.json
bad_replay bad.json ": history\[0\].t: expected a number >= 0, got a string"
sed 's/"history": \[{/"history": [{"t": 5, "upper": null, "lower": 1, "pending": 0, "groups": [0]}, {/' \
    hist.json > bad.json
bad_replay bad.json ": history\[1\].t: expected >= history\[0\].t = 5 (times go forward), got .*"
sed 's/"workers": \([0-9]*\)/"workers": "\1"/' hist.json > bad.json
bad_replay bad.json ": final.groups\[0\].workers: expected a whole number >= 0, got a string"
sed 's/"sense": "max"/"sense": "maximum"/' hist.json > bad.json
bad_replay bad.json ": final.sense: expected \"min\" or \"max\", got a string"
sed 's/"solution": \[0, /"solution": [14, /' tsp.json > bad.json
bad_replay bad.json ": final.solution\[0\]: expected a city below problem.view.n = 14, got 14"
sed 's/"coords": \[\[[^]]*\], /"coords": [/' tsp.json > bad.json
bad_replay bad.json ": problem.view.coords: expected problem.view.n = 14 pairs, got 13"
expect 2 "replay: no/such.json: cannot read" bnb replay no/such.json --web 127.0.0.1:0
expect 2 "--history no/such/dir/h.json: cannot write" bnb knapsack "$K" --history no/such/dir/h.json

# tenbin bnb serve: runs started from uploads, one at a time, until /api/quit.
"$MPIEXEC" $NP 3 "$TENBIN" bnb serve --web 127.0.0.1:0 --max-upload 100000 > serve.out 2> serve.err &
sv=$!
run=$sv
i=0
while ! grep -q "web view at" serve.err && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
surl=$(sed -n 's/.* at \(http[^ ]*\) .*/\1/p' serve.err)
stok=$(sed -n 's/.*(token \([0-9a-f]*\))$/\1/p' serve.err)
[ -n "$surl" ] || { kill $sv; fail "serve: no line: $(cat serve.err)"; }
check 200 "serve: idle state" "${surl}api/state"
grep -q '"serve": true, "idle": true' body.txt || { kill $sv; fail "serve idle: $(cat body.txt)"; }
check 401 "serve: start without a token" -X POST --data-binary @"$K" "${surl}api/start?problem=knapsack"
head -c 200000 /dev/zero > big2.bin
check 413 "serve: an upload over --max-upload" -X POST -H "Authorization: Bearer $stok" \
    --data-binary @big2.bin "${surl}api/start?problem=knapsack"
printf '3 10\n1 2\n' > short.txt
check 400 "serve: a malformed upload" -X POST -H "Authorization: Bearer $stok" \
    --data-binary @short.txt "${surl}api/start?problem=knapsack&name=short.txt"
grep -q '"error": "short.txt:2: expected 3 profits, found 2"' body.txt ||
    { kill $sv; fail "serve: the parser's message: $(cat body.txt)"; }
check 400 "serve: an unknown problem" -X POST -H "Authorization: Bearer $stok" --data-binary @"$K" \
    "${surl}api/start?problem=nope"
check 202 "serve: a knapsack" -X POST -H "Authorization: Bearer $stok" --data-binary @"$K" \
    "${surl}api/start?problem=knapsack&name=k1.txt"
i=0
until curl -s "${surl}api/state" | grep -q '"file": "k1.txt".*"proven": true' || [ $i -ge 100 ]; do
    sleep 0.2; i=$((i + 1))
done
[ $i -lt 100 ] || { kill $sv; fail "serve: the knapsack did not end proven: $(curl -s "${surl}api/state")"; }
curl -s "${surl}api/state" | grep -q '"upper": 9147' || { kill $sv; fail "serve: knapsack optimum"; }
check 202 "serve: a long TSP" -X POST -H "Authorization: Bearer $stok" --data-binary @"$TSP/kroA100.tsp" \
    "${surl}api/start?problem=tsp&name=kroA100.tsp"
check 409 "serve: a second run while one goes on" -X POST -H "Authorization: Bearer $stok" \
    --data-binary @"$K" "${surl}api/start?problem=knapsack"
check 200 "serve: stop the TSP" -X POST -H "Authorization: Bearer $stok" "${surl}api/stop"
i=0
until curl -s "${surl}api/state" | grep -q '"running": false, "problem": "tsp".*"proven": false' ||
      [ $i -ge 150 ]; do
    sleep 0.2; i=$((i + 1))
done
[ $i -lt 150 ] || { kill $sv; fail "serve: the stopped TSP: $(curl -s "${surl}api/state" | head -c 200)"; }
check 200 "serve: quit" -X POST -H "Authorization: Bearer $stok" "${surl}api/quit"
set +e
wait $sv
got=$?
set -e
[ "$got" = 0 ] || fail "serve after quit: exit $got: $(cat serve.err)"
grep -q "^tenbin: knapsack k1.txt: proven 9147$" serve.err || fail "serve: $(cat serve.err)"
expect 2 "serve needs 2 ranks or more" bnb serve --web 127.0.0.1:0

# Errors: one line, exit 2.
K=$(cd "$(dirname "$0")/../data/knapsack" && pwd)/knapPI_1_100_1000_1.txt
expect 2 "not a loopback address; serving the run to the network needs --web-public" \
    bnb knapsack "$K" --web 192.0.2.1:0
expect 2 "--web abc: expected \[HOST:\]PORT with PORT in 0..65535" bnb knapsack "$K" --web abc
expect 2 "'nohost' is not an IPv4 address" bnb knapsack "$K" --web nohost:0
expect 2 "--web-public goes with --web" bnb knapsack "$K" --web-public
expect 2 "--web needs 2 ranks or more" bnb knapsack "$K" --web 0
echo "bnb web: ok"
