#!/bin/sh
# tenbin bnb --web in a real browser: Debian's headless Chromium, driven by
# tests/web/browser.py (python3-selenium, chromium-driver), opens the page
# during a real mpiexec run, sees the bounds change, clicks stop and
# confirms; the run then ends with exit 0 and an unproven result.  The
# instance is pr76, which takes minutes on 3 ranks, so that the run is still
# going whenever Chromium opens the page, however slowly it starts (kroA100,
# about 15 s, once ended first on a busy host).  The
# screenshot is saved in the test's directory under build/.  Skipped (77)
# with one line only where Chromium or its driver is not installed.
# Environment (set by CTest): TENBIN, MPIEXEC, MPIEXEC_NUMPROC_FLAG, TB_TEST_TMP.
set -eu
TSP=$(cd "$(dirname "$0")/../data/tsplib" && pwd)
BROWSER=$(cd "$(dirname "$0")/../web" && pwd)/browser.py
cd "$TB_TEST_TMP"
NP=${MPIEXEC_NUMPROC_FLAG:--n}
. "$(dirname "$0")/expect.inc"
if [ ! -x /usr/bin/python3 ] || [ ! -x /usr/bin/chromium ] || [ ! -x /usr/bin/chromedriver ]; then
    echo "SKIP: chromium, chromium-driver or python3 is not installed (scripts/bootstrap installs them)"
    exit 77
fi

"$MPIEXEC" $NP 3 "$TENBIN" bnb tsp "$TSP/pr76.tsp" --web 127.0.0.1:0 --json > run.out 2> run.err &
run=$!
i=0
while ! grep -q "web view at" run.err && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
line=$(grep "^tenbin: web view at http://127.0.0.1:[0-9]*/ (token [0-9a-f]\{32\})$" run.err) ||
    { kill $run; fail "no web view line: $(cat run.err)"; }
url=$(echo "$line" | sed 's/.* at \(http[^ ]*\) .*/\1/')
tok=$(echo "$line" | sed 's/.*(token \([0-9a-f]*\))$/\1/')
set +e
/usr/bin/python3 "$BROWSER" "$url" "$tok" "$TB_TEST_TMP/bnb_web.png" 76
b=$?
set -e
if [ "$b" != 0 ]; then
    kill $run 2> /dev/null || true
    wait $run 2> /dev/null || true
    [ "$b" = 77 ] && exit 77
    fail "the browser test failed (exit $b); the run said: $(tail -n 3 run.err)"
fi
set +e
wait $run
got=$?
set -e
[ "$got" = 0 ] || fail "the run stopped from the page: exit $got: $(tail -n 3 run.err)"
json=$(tail -n 1 run.out)
echo "$json" | grep -q '"proven": false' || fail "the run stopped from the page: $json"
[ -s "$TB_TEST_TMP/bnb_web.png" ] || fail "no screenshot"
echo "bnb browser: ok ($TB_TEST_TMP/bnb_web.png)"
