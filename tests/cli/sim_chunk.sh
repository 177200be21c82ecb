#!/bin/sh
# tenbin sim mw --chunk RULE --work-dist D: every chunk rule under single,
# multi:K and the dynamic masters delivers each task once in simulation;
# auto is deterministic; irregular task times from exp, uniform and a trace;
# clear errors for bad rules and distributions.
# Environment (set by CTest): TENBIN, TB_TEST_TMP.
set -eu
cd "$TB_TEST_TMP"
fail() { echo "FAIL: $*" >&2; exit 1; }
num() { grep -o "\"$1\": [0-9.e+-]*" "$2" | head -n 1 | sed 's/.*: //'; }
plat="hosts=32,speed=0.5-1.5,L=5us,o=1us"

for rule in 3 gss tss fac wf awf af auto; do
    for policy in single multi:4 dynamic dynamic:wait; do
        "$TENBIN" sim mw --platform "$plat" --tasks 5000 --work 1e-4 --work-dist exp \
            --policy $policy --chunk $rule --json > r.json
        [ "$(num results r.json)" = 5000 ] || fail "$rule under $policy: $(num results r.json) results"
        grep -q "\"chunking\": \"$( [ $rule = 3 ] && echo fixed || echo $rule)\"" r.json ||
            fail "$rule under $policy: $(cat r.json)"
    done
done

# The rule can ride in the policy string, as in TENBIN_MW_POLICY.
"$TENBIN" sim mw --platform "$plat" --tasks 2000 --work 1e-4 --policy multi:2,chunk=tss --json > p.json
grep -q '"policy": "multi:2"' p.json && grep -q '"chunking": "tss"' p.json || fail "policy string: $(cat p.json)"
[ "$(num results p.json)" = 2000 ] || fail "policy string: $(num results p.json) results"

# TENBIN_MW_CHUNK takes a count or a rule; a rule in the policy string wins;
# a bad value is ignored with a warning.
TENBIN_MW_CHUNK=fac "$TENBIN" sim mw --platform "$plat" --tasks 500 --policy single --json > e.json
grep -q '"chunking": "fac"' e.json || fail "TENBIN_MW_CHUNK=fac: $(cat e.json)"
TENBIN_MW_CHUNK=fac "$TENBIN" sim mw --platform "$plat" --tasks 500 --policy single,chunk=gss \
    --json > e.json
grep -q '"chunking": "gss"' e.json || fail "policy's chunk rule under TENBIN_MW_CHUNK: $(cat e.json)"
TENBIN_MW_CHUNK=7 "$TENBIN" sim mw --platform "$plat" --tasks 500 --policy single --json > e.json
grep -q '"chunk": 7, "chunking": "fixed"' e.json || fail "TENBIN_MW_CHUNK=7: $(cat e.json)"
TENBIN_MW_CHUNK=lots "$TENBIN" sim mw --platform "$plat" --tasks 500 --policy single --json \
    > e.json 2> e.err || fail "TENBIN_MW_CHUNK=lots stopped the run"
grep -q "TENBIN_MW_CHUNK=lots" e.err || fail "no warning for TENBIN_MW_CHUNK=lots: $(cat e.err)"
grep -q '"chunking": "auto"' e.json || fail "TENBIN_MW_CHUNK=lots: $(cat e.json)"
# auto is the default rule.
"$TENBIN" sim mw --platform "$plat" --tasks 500 --policy single --json > e.json
grep -q '"chunking": "auto"' e.json || fail "default rule: $(cat e.json)"

# auto is deterministic: the same run twice gives the same summary.
for i in 1 2; do
    "$TENBIN" sim mw --platform "$plat" --tasks 20000 --work 5e-5 --work-dist uniform:0.1-3 \
        --policy dynamic --chunk auto --json | sed 's/"wall_s": [^,]*,//' > auto$i.json
done
cmp -s auto1.json auto2.json || fail "auto differs between two identical runs"

# Speeds 10x apart (0.2-2) under one master, exponential task times: auto
# within 5 % of the best of the fixed chunks 4-32 and of awf (simulated, so
# exact on every machine: 0.0853 s against awf's 0.0852; auto's speeds shrunk
# towards their mean until a worker's second chunk came back made 0.1107 s).
best=
for rule in 4 8 16 32 awf; do
    "$TENBIN" sim mw --platform hosts=32,speed=0.2-2,L=5us,o=1us,G=0 --tasks 30000 --work 1e-4 \
        --work-dist exp --policy single --chunk $rule --json > u.json
    m=$(num makespan_s u.json)
    best=$(awk -v a="$m" -v b="$best" 'BEGIN { print (b == "" || a < b) ? a : b }')
done
"$TENBIN" sim mw --platform hosts=32,speed=0.2-2,L=5us,o=1us,G=0 --tasks 30000 --work 1e-4 \
    --work-dist exp --policy single --chunk auto --json > u.json
awk -v a="$(num makespan_s u.json)" -v b="$best" 'BEGIN { exit !(a <= 1.05 * b) }' ||
    fail "speeds 10x apart: auto's makespan $(num makespan_s u.json) s, the best other $best s"

# bench/s1-chunk's scenario H: speeds 10x apart under a load process that
# comes and goes, four masters.  auto within 5 % of the best fixed chunk
# (1-64) and of awf and af, from three seeds (simulated, exact on every
# machine: 0.972, 0.975, 0.963 of the best; 1.146, 1.132, 1.304 before
# auto's chunks were capped at 8 times its floor and a first chunk at 16
# tasks: a slow host handed a large chunk just before a load arrived set the
# makespan).
for seed in 1 2 3; do
    best=
    for rule in 1 2 4 8 16 32 64 awf af auto; do
        "$TENBIN" sim mw --platform hosts=64,speed=0.2-2,load=50ms,L=5us,o=1us,G=0 --seed $seed \
            --tasks 100000 --work 1e-4 --work-dist exp --policy multi:4 --chunk $rule --json > h.json
        m=$(num makespan_s h.json)
        [ "$(num results h.json)" = 100000 ] || fail "H, seed $seed, $rule: $(num results h.json) results"
        [ $rule = auto ] ||
            best=$(awk -v a="$m" -v b="$best" 'BEGIN { print (b == "" || a < b) ? a : b }')
    done
    awk -v a="$m" -v b="$best" 'BEGIN { exit !(a <= 1.05 * b) }' ||
        fail "H, seed $seed: auto's makespan $m s, the best other $best s"
done

# A trace of task times: task i takes line i mod n.
printf '# task times, seconds\n1e-4\n\n  3e-4\t\r\n  # a note\n2e-4' > times.txt
"$TENBIN" sim mw --platform hosts=1 --tasks 6 --work-dist trace:times.txt --policy single \
    --json > tr.json
# one rank computes 1+3+2+1+3+2 = 12e-4 s of work, plus messages to itself
awk -v m="$(num makespan_s tr.json)" 'BEGIN { exit !(m >= 12e-4 && m < 13e-4) }' ||
    fail "trace: makespan $(num makespan_s tr.json), expected 1.2 ms"
# A line longer than any buffer is one task time, not two: 1e-4 written
# with 400 digits, then 3e-4 (3 tasks: 1+3+1 = 5e-4 s of work).
awk 'BEGIN { s = "0.0001"; for (i = 0; i < 400; i++) s = s "0"; print s; print "3e-4" }' > long.txt
"$TENBIN" sim mw --platform hosts=1 --tasks 3 --work-dist trace:long.txt --policy single \
    --json > long.json
awk -v m="$(num makespan_s long.json)" 'BEGIN { exit !(m >= 5e-4 && m < 5.5e-4) }' ||
    fail "trace with a long line: makespan $(num makespan_s long.json), expected 0.5 ms"

# --results masters: results folded where they arrive, reduced on rank 0:
# the count and the sum of task ids are exact (0 + 1 + ... + 2999), and the
# root receives far fewer bytes than when every 1 KiB result comes to it.
for policy in single multi:4 dynamic dynamic:wait; do
    "$TENBIN" sim mw --platform "$plat" --tasks 3000 --work 1e-4 --result-bytes 1024 \
        --policy $policy --results masters --json > red.json
    grep -q '"reduced": {"count": 3000, "id_sum": 4498500}' red.json ||
        fail "--results masters under $policy: $(cat red.json)"
    grep -q '"results_where": "masters"' red.json || fail "results_where: $(cat red.json)"
done

expect_usage() {
    if "$@" > err.out 2> err.txt; then fail "accepted: $*"; else rc=$?; fi
    [ "$rc" -eq 2 ] || fail "exit status $rc for: $* ($(cat err.txt))"
    [ "$(wc -l < err.txt)" -eq 1 ] || fail "not one line for: $* ($(cat err.txt))"
    grep -q "^tenbin sim mw: " err.txt || fail "no error line for: $* ($(cat err.txt))"
}
expect_usage "$TENBIN" sim mw --platform hosts=4 --chunk guided
expect_usage "$TENBIN" sim mw --platform hosts=4 --policy single,chunk=guided
expect_usage "$TENBIN" sim mw --platform hosts=4 --chunk 0
expect_usage "$TENBIN" sim mw --platform hosts=4 --work-dist uniform:3-1
expect_usage "$TENBIN" sim mw --platform hosts=4 --work-dist gamma
expect_usage "$TENBIN" sim mw --platform hosts=4 --results everywhere
expect_usage "$TENBIN" sim mw --platform hosts=4 --work-dist trace:no-such-file
printf '1e-4\nfast\n' > bad.txt
expect_usage "$TENBIN" sim mw --platform hosts=4 --work-dist trace:bad.txt
grep -q "bad.txt:2:" err.txt || fail "bad trace line not named: $(cat err.txt)"
# Each bad trace is named with its line: a word, nan, inf, a negative time,
# a number with text after it, a 0 byte inside a line; and a trace of
# comments only has no task times.
for bad in 'fast' 'nan' 'inf' '-1e-4' '1e-4 s' '1e-4\0009'; do
    printf "# a comment\n\n1e-4\n${bad}\n2e-4\n" > bad.txt
    expect_usage "$TENBIN" sim mw --platform hosts=4 --work-dist trace:bad.txt
    grep -q "^tenbin sim mw: --work-dist: bad.txt:4: expected seconds >= 0$" err.txt ||
        fail "bad trace line '$bad' not named on one line: $(cat err.txt)"
done
printf '# only a comment\n\n' > empty.txt
expect_usage "$TENBIN" sim mw --platform hosts=4 --work-dist trace:empty.txt
grep -q "empty.txt: no task times" err.txt || fail "empty trace: $(cat err.txt)"
echo "ok"
