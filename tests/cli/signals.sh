#!/bin/sh
# A run stopped from outside ends cleanly: SIGINT (Ctrl-C), SIGTERM (kill,
# scancel, a launcher) and SIGUSR1 (Slurm's --signal ahead of a time limit).
#   - bnb says what it has (the incumbent, unproven, "interrupted" in --json)
#     and exits 128 + the signal where the launcher passes the status on;
#   - mandel ends the job with one line saying how many tasks were done, and
#     writes no image;
#   - himeno stops before a sweep on every rank; flow run writes its log, and
#     --resume LOG runs only the rest;
#   - the emulator stops the program's ranks and says so (130);
#   - a simulation ends with one line and 128 + the signal;
#   - Ctrl-C typed on a terminal (the whole foreground group) works too;
#   - probe ends its measurements on every rank with one line and writes no
#     platform file;
#   - bnb serve stops the run going on, closes its page, removes its scratch
#     directories and says so in one line;
#   - no process of the run is left behind.
# The instance is a 0/1 knapsack of the hard class (profit = weight + 100,
# capacity half the weights) that runs for minutes: every signal comes long
# before it could end.  No timing is asserted.
# Environment (set by CTest): TENBIN, MPIEXEC, MPIEXEC_NUMPROC_FLAG, EMU_PATTERNS, TB_TEST_TMP.
# curl (bnb serve's page) is needed too: scripts/bootstrap installs it.
set -eu
cd "$TB_TEST_TMP"
. "$TB_SOURCE_DIR/tests/cli/expect.inc"
. "$TB_SOURCE_DIR/tests/cli/procs.inc"
NP=${MPIEXEC_NUMPROC_FLAG:--n}
# Every process this test starts names a file in its own directory, D: that
# is how it finds them (other tests run tenbin at the same time).
D=$PWD

awk -v s=5 'BEGIN { n = 300
    for (i = 0; i < n; i++) { s = (s * 16807) % 2147483647; w[i] = 1 + int(s / 2147483647 * 1000); t += w[i] }
    printf "%d %d\n", n, int(t / 2)
    for (i = 0; i < n; i++) printf "%d ", w[i] + 100; print ""
    for (i = 0; i < n; i++) printf "%d ", w[i]; print "" }' > hard.txt

# run_signalled SIGNAL AFTER CMD...: start CMD (stdout out.txt, stderr
# err.txt), send SIGNAL to it after AFTER seconds, wait; its status in $st.
run_signalled() {
    sig=$1 after=$2
    shift 2
    "$@" > out.txt 2> err.txt &
    pid=$!
    sleep "$after"
    kill -s "$sig" "$pid"
    set +e
    wait "$pid"
    st=$?
    set -e
}

# kill_ranks SIGNAL PATTERN: SIGNAL to every tenbin process (the ranks, not
# the launcher) whose command line matches PATTERN, as scancel sends it
kill_ranks() {
    for p in $(pgrep -f "$2" || true); do
        case $(cat "/proc/$p/comm" 2> /dev/null) in tenbin) kill -s "$1" "$p" ;; esac
    done
}

json_field() { grep -o "\"$1\": [^,}]*" out.txt | head -1; }

# 1. one rank, SIGINT: the sequential search stops between nodes
run_signalled INT 2 "$TENBIN" bnb knapsack "$D/hard.txt" --json
[ "$st" = 130 ] || fail "bnb, one rank, SIGINT: exit $st, want 130: $(cat err.txt)"
[ "$(json_field interrupted)" = '"interrupted": "SIGINT"' ] || fail "bnb SIGINT: $(cat out.txt)"
[ "$(json_field proven)" = '"proven": false' ] || fail "bnb SIGINT proven: $(cat out.txt)"
grep -q '"optimum": [0-9]' out.txt || fail "bnb SIGINT: no incumbent: $(cat out.txt)"
none_left "bnb SIGINT"

# 1b. the same signal twice within a second is one stop (timeout(1) signals
# the process, then its process group): a result, not a silent death
"$TENBIN" bnb knapsack "$D/hard.txt" --json > out.txt 2> err.txt &
pid=$!
sleep 1
kill -s INT "$pid"
sleep 0.05
kill -s INT "$pid"
set +e
wait "$pid"
st=$?
set -e
[ "$st" = 130 ] || fail "bnb, SIGINT twice in 50 ms: exit $st, want 130: $(cat err.txt)"
[ "$(json_field interrupted)" = '"interrupted": "SIGINT"' ] || fail "bnb SIGINT twice: $(cat out.txt)"
for i in 1 2 3 4 5 6; do
    set +e
    timeout -s INT 0.5 "$TENBIN" bnb knapsack "$D/hard.txt" --json > out.txt 2> err.txt
    set -e
    grep -q '"interrupted": "SIGINT"' out.txt || fail "bnb under timeout -s INT: no result ($i): $(cat err.txt)"
done
none_left "bnb SIGINT twice"

# 2. four ranks, SIGUSR1 to mpiexec (forwarded to every rank): the search
# stops as a reached gap would; one line on stderr says so at once
run_signalled USR1 3 "$MPIEXEC" $NP 4 "$TENBIN" bnb knapsack "$D/hard.txt" --json
[ "$st" = 138 ] || fail "bnb, 4 ranks, SIGUSR1: exit $st, want 138: $(cat err.txt)"
[ "$(json_field interrupted)" = '"interrupted": "SIGUSR1"' ] || fail "bnb SIGUSR1: $(cat out.txt)"
[ "$(json_field proven)" = '"proven": false' ] || fail "bnb SIGUSR1 proven: $(cat out.txt)"
[ "$(grep -c 'bnb: SIGUSR1: stopping the search; so far incumbent' err.txt)" = 1 ] ||
    fail "bnb SIGUSR1: no single line: $(cat err.txt)"
none_left "bnb SIGUSR1"

# 3. SIGTERM to mpiexec (it passes SIGTERM to every rank, then SIGKILL 1 s
# later): the text result comes before that
run_signalled TERM 3 "$MPIEXEC" $NP 3 "$TENBIN" bnb knapsack "$D/hard.txt"
[ "$st" != 0 ] || fail "bnb SIGTERM: exit 0"
grep -q "^knapsack $D/hard.txt: best found [0-9]* (not proven: stopped by SIGTERM), bound" out.txt ||
    fail "bnb SIGTERM: $(cat out.txt) $(cat err.txt)"
none_left "bnb SIGTERM"

# 4. mandel, SIGTERM to every rank (as scancel sends it): one line with what
# was done, no image
rm -f m.png
"$MPIEXEC" $NP 3 "$TENBIN" mandel --width 4000 --height 4000 --max-iter 3000 --out "$D/m.png" > out.txt 2> err.txt &
pid=$!
sleep 2
for p in $(pgrep -f "$TENBIN mandel .*$D/m.png"); do
    case $(cat "/proc/$p/comm" 2> /dev/null) in tenbin) kill -TERM "$p" ;; esac
done
set +e
wait "$pid"
st=$?
set -e
[ "$st" != 0 ] || fail "mandel SIGTERM: exit 0"
[ "$(grep -c 'the master-worker run interrupted by SIGTERM: [0-9]* of 4000 tasks were done and delivered; ending the job' err.txt)" = 1 ] ||
    fail "mandel SIGTERM: no single line: $(cat err.txt)"
[ ! -e m.png ] || fail "mandel SIGTERM: an image was written"
none_left "mandel SIGTERM"

# 5. himeno: every rank agrees to stop before the next sweep; one line
run_signalled USR1 3 "$MPIEXEC" $NP 2 "$TENBIN" himeno --size S --iters 100000 --record "$D/h.jsonl"
[ "$st" = 138 ] || fail "himeno SIGUSR1: exit $st, want 138: $(cat err.txt)"
[ "$(grep -c '^tenbin himeno: interrupted by SIGUSR1 before sweep [0-9]* of 100000; nothing is written' err.txt)" = 1 ] ||
    fail "himeno SIGUSR1: no single line: $(cat err.txt)"
none_left "himeno"

# 6. flow run: SIGTERM writes the log of what ended; --resume LOG runs the
# rest and the result is the whole chain's
python3 - <<'EOF'
import json
n = 8
tasks, ex, files = [], [], []
for i in range(n):
    tasks.append({"name": "t%d" % i, "id": "t%d" % i,
                  "parents": ["t%d" % (i - 1)] if i else [],
                  "children": ["t%d" % (i + 1)] if i < n - 1 else [],
                  "inputFiles": ["f%d.txt" % (i - 1)] if i else [],
                  "outputFiles": ["f%d.txt" % i]})
    prev = "cat f%d.txt" % (i - 1) if i else "echo 0"
    ex.append({"id": "t%d" % i, "runtimeInSeconds": 0.4,
               "command": {"program": "sh", "arguments": ["-c", "sleep 0.4; echo $((1 + $(%s))) > f%d.txt" % (prev, i)]}})
    files.append({"id": "f%d.txt" % i, "sizeInBytes": 2})
json.dump({"name": "chain", "schemaVersion": "1.5", "workflow": {
    "specification": {"tasks": tasks, "files": files},
    "execution": {"makespanInSeconds": 4, "executedAt": "20260101T000000+0000", "tasks": ex}}},
    open("chain.json", "w"))
EOF
mkdir -p in
export TMPDIR="$TB_TEST_TMP/tmp" && rm -rf "$TMPDIR" && mkdir -p "$TMPDIR"
rm -rf out log1.json log2.json
run_signalled TERM 2 "$MPIEXEC" $NP 2 "$TENBIN" flow run "$D/chain.json" --input-dir in --out-dir out --log log1.json
[ "$st" != 0 ] || fail "flow run SIGTERM: exit 0"
[ "$(grep -c 'the workflow run interrupted by SIGTERM: [0-9] of 8 tasks had ended well; --resume log1.json runs the rest' err.txt)" = 1 ] ||
    fail "flow run SIGTERM: no single line: $(cat err.txt)"
[ ! -e out ] || fail "flow run SIGTERM: outputs written as if complete"
none_left "flow run"
"$MPIEXEC" $NP 2 "$TENBIN" flow run "$D/chain.json" --input-dir in --out-dir out --log log2.json \
    --resume log1.json --json > out.txt 2> err.txt || fail "flow run --resume: $(cat err.txt)"
[ "$(cat out/f7.txt)" = 8 ] || fail "flow run --resume: f7.txt is $(cat out/f7.txt)"
grep -q '"resumed": [1-9]' out.txt || fail "flow run --resume resumed nothing: $(cat out.txt)"

# 7. the emulator: the program's ranks are stopped with it; one line
run_signalled INT 3 "$TENBIN" emu --platform hosts=3,L=10us -n 3 -- "$EMU_PATTERNS" pingpong 100000000 8
[ "$st" = 130 ] || fail "emu SIGINT: exit $st, want 130: $(cat err.txt)"
[ "$(grep -c 'interrupted by SIGINT after [0-9.]* s: the program was stopped, nothing is predicted' err.txt)" = 1 ] ||
    fail "emu SIGINT: no single line: $(cat err.txt)"
for _ in 1 2 3 4 5 6 7 8 9 10; do
    pgrep -f "$EMU_PATTERNS pingpong" > /dev/null || break
    sleep 1
done
! pgrep -f "$EMU_PATTERNS pingpong" > /dev/null || fail "emu SIGINT: the program's ranks are left"

# 7b. emu sweep: the sweep stops at the point the signal stopped (it once
# went on to every other point, each "interrupted" at once, then printed a
# table of failures and a saturation point); one line, no table
run_signalled INT 3 "$TENBIN" emu sweep --platform hosts=3,L=10us --ranks 2,3 -- \
    "$EMU_PATTERNS" pingpong 100000000 8
[ "$st" = 130 ] || fail "emu sweep SIGINT: exit $st, want 130: $(cat err.txt)"
[ "$(grep -c '^tenbin emu sweep: ' err.txt)" = 1 ] &&
    grep -q '^tenbin emu sweep: interrupted by SIGINT at P = 2, after 0 of 2 points: the sweep stopped, nothing is reported$' err.txt ||
    fail "emu sweep SIGINT: not one line: $(cat err.txt)"
[ ! -s out.txt ] || fail "emu sweep SIGINT: a table after the interruption: $(cat out.txt)"
none_left "emu sweep SIGINT" "$EMU_PATTERNS pingpong"

# 8. a simulation: one line, 128 + the signal
run_signalled INT 1 "$TENBIN" sim mw --platform hosts=64 --ranks 64 --tasks 100000000 --chunk 1
[ "$st" = 130 ] || fail "sim SIGINT: exit $st, want 130: $(cat err.txt)"
[ "$(grep -c 'the simulation of the master-worker run interrupted by SIGINT at [0-9.e-]* s of virtual time' err.txt)" = 1 ] ||
    fail "sim SIGINT: no single line: $(cat err.txt)"

# 9. Ctrl-C typed on a terminal: the whole foreground group (mpiexec and,
# through it, the ranks) gets SIGINT
if command -v script > /dev/null; then
    (sleep 3; printf '\003'; sleep 5) |
        script -qec "\"$MPIEXEC\" $NP 3 \"$TENBIN\" bnb knapsack \"$D/hard.txt\"" /dev/null > tty.txt 2>&1 || true
    grep -aq 'not proven: stopped by SIG' tty.txt || fail "Ctrl-C on a terminal: $(cat tty.txt)"
    none_left "Ctrl-C"
fi
# 10. probe, SIGUSR1 to the launcher it started itself (it forwards it):
# every rank stops between two timed calls; one line; no platform file, not
# even the one a write in progress would have left (p.json.tmp)
rm -f p.json p.json.tmp
run_signalled USR1 3 "$TENBIN" probe --out "$D/p.json" --ranks 2,3 --reps 1000000 --json --mpiexec "$MPIEXEC"
[ "$st" = 138 ] || fail "probe SIGUSR1: exit $st, want 138: $(cat err.txt)"
[ "$(grep -c "^tenbin probe: interrupted by SIGUSR1 .*: [0-9]* of 21 message sizes and [0-9] of 2 run sizes were measured; nothing is kept, $D/p.json is not written$" err.txt)" = 1 ] ||
    fail "probe SIGUSR1: no single line: $(cat err.txt)"
[ ! -s out.txt ] || fail "probe SIGUSR1: a result on stdout: $(cat out.txt)"
[ ! -e p.json ] && [ ! -e p.json.tmp ] || fail "probe SIGUSR1: a platform file was written"
none_left "probe SIGUSR1" " --out $D/p.json"

# 11. probe under mpiexec, SIGTERM to every rank (as scancel sends it): the
# ranks that sleep while others measure end too
"$MPIEXEC" $NP 3 "$TENBIN" probe --out "$D/p.json" --ranks 2,3 --reps 1000000 > out.txt 2> err.txt &
pid=$!
sleep 3
kill_ranks TERM " --out $D/p.json"
set +e
wait "$pid"
st=$?
set -e
[ "$st" = 143 ] || fail "probe SIGTERM: exit $st, want 143: $(cat err.txt)"
[ "$(grep -c "^tenbin probe: interrupted by SIGTERM .*; nothing is kept, $D/p.json is not written$" err.txt)" = 1 ] ||
    fail "probe SIGTERM: no single line: $(cat err.txt)"
[ ! -e p.json ] && [ ! -e p.json.tmp ] || fail "probe SIGTERM: a platform file was written"
none_left "probe SIGTERM" " --out $D/p.json"

# bnb serve's processes are found by the name they are started under, a
# link in D; its scratch directories are made in D/stmp.
command -v curl > /dev/null || fail "curl is not installed (scripts/bootstrap installs it)"
ln -sf "$TENBIN" "$D/tenbin"
mkdir -p stmp
# the scratch directories bnb serve has in D/stmp
scratch() { set -- stmp/tenbin-serve-*; [ -e "$1" ] && echo $# || echo 0; }
# serve_up: start 3 ranks of bnb serve (stderr serve.err); its address in
# $url, its token in $tok, mpiexec's pid in $pid
serve_up() {
    rm -f serve.err
    TMPDIR="$D/stmp" "$MPIEXEC" $NP 3 "$D/tenbin" bnb serve --web 127.0.0.1:0 > out.txt 2> serve.err &
    pid=$!
    i=0
    while ! grep -q "web view at" serve.err && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
    url=$(sed -n 's/.* at \(http[^ ]*\) .*/\1/p' serve.err)
    tok=$(sed -n 's/.*(token \([0-9a-f]*\))$/\1/p' serve.err)
    [ -n "$url" ] || { kill "$pid"; fail "serve: no web view line: $(cat serve.err)"; }
    i=0 # the other ranks make theirs after rank 0 has said where the page is
    while [ "$(scratch)" != 3 ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
    [ "$(scratch)" = 3 ] || { kill "$pid"; fail "serve: scratch directories: $(ls stmp)"; }
}
# serve_gone WHAT: no process, no page, no scratch directory left
serve_gone() {
    none_left "$1" "$D/tenbin bnb serve"
    ! curl -s -o /dev/null "${url}api/state" || fail "$1: the page outlived the serve"
    [ "$(scratch)" = 0 ] || fail "$1: scratch left: $(ls -R stmp)"
}

# 12. bnb serve with a run going on, SIGUSR1 to mpiexec: the run stops as
# the page's stop stops it (the search's line at once), then one line
serve_up
code=$(curl -s -o body.txt -w "%{http_code}" -X POST -H "Authorization: Bearer $tok" \
    --data-binary @hard.txt "${url}api/start?problem=knapsack&name=hard.txt") || true
[ "$code" = 202 ] || { kill "$pid"; fail "serve: start: HTTP $code: $(cat body.txt)"; }
i=0
until curl -s "${url}api/state" | grep -q '"running": true, "problem": "knapsack", .*"upper": ' ||
      [ $i -ge 100 ]; do
    sleep 0.1; i=$((i + 1))
done
sleep 1
kill -USR1 "$pid"
set +e
wait "$pid"
st=$?
set -e
[ "$st" = 138 ] || fail "serve SIGUSR1: exit $st, want 138: $(cat serve.err)"
[ "$(grep -c 'bnb: SIGUSR1: stopping the search; so far incumbent' serve.err)" = 1 ] ||
    fail "serve SIGUSR1: the search's line: $(cat serve.err)"
[ "$(grep -c '^tenbin bnb: serve: interrupted by SIGUSR1: the run of knapsack hard.txt stopped at [0-9]* (not proven); the web view is closed and the scratch directories removed$' serve.err)" = 1 ] ||
    fail "serve SIGUSR1: no single line: $(cat serve.err)"
serve_gone "serve SIGUSR1"

# 13. bnb serve between runs, SIGTERM to every rank
serve_up
kill_ranks TERM "$D/tenbin bnb serve"
set +e
wait "$pid"
st=$?
set -e
[ "$st" = 143 ] || fail "serve SIGTERM: exit $st, want 143: $(cat serve.err)"
[ "$(grep -c '^tenbin bnb: serve: interrupted by SIGTERM between runs; the web view is closed and the scratch directories removed$' serve.err)" = 1 ] ||
    fail "serve SIGTERM: no single line: $(cat serve.err)"
serve_gone "serve SIGTERM"

# 14. bnb serve, SIGTERM to mpiexec (it passes SIGTERM on, its own status)
serve_up
kill -TERM "$pid"
set +e
wait "$pid"
st=$?
set -e
[ "$st" != 0 ] || fail "serve SIGTERM to mpiexec: exit 0"
[ "$(grep -c '^tenbin bnb: serve: interrupted by SIGTERM between runs; ' serve.err)" = 1 ] ||
    fail "serve SIGTERM to mpiexec: no single line: $(cat serve.err)"
serve_gone "serve SIGTERM to mpiexec"
echo "ok signals"
