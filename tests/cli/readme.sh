#!/bin/sh
# README.md's "The tool" section runs as written: every command of its ```sh
# blocks (backslash continuations joined, trailing "# ..." comments dropped)
# runs in a directory that looks like the source tree's top after `make demo`
# (every top-level entry of the source tree linked, build/ linked to the built
# tree), and must exit 0; a failure names the command.
#
# The long ones are scaled down unless TB_README_FULL=1 (then they run as
# written: flow experiment's minutes and about a minute more); each rule must
# still match a command, so a README edit that drops one is noticed here:
#   mandel --width 2048 --height 2048   ->  --width 512 --height 512
#   flow experiment                     ->  + --instances 1 --tasks 200
#   emu sweep --ranks 4:32:4            ->  --ranks 4:8:4
#   bnb tsp kroA100 (without --web)     ->  bays29 (29 cities, 1 s)
# A command with --web is started in the background; it must print its URL,
# serve its page, and exit 0 once stopped through its token (POST /api/stop,
# as tests/cli/bnb_web.sh does).
# Environment (set by CTest): TB_SOURCE_DIR, TB_BUILD_DIR, MPIEXEC, TB_TEST_TMP;
# TB_README_FULL=1 to run the commands unscaled (past CTest's 300 s:
# TB_README_FULL=1 ctest -R cli_readme --timeout 900).
set -eu
. "$(dirname "$0")/expect.inc"
cd "$TB_TEST_TMP"
README="$TB_SOURCE_DIR/README.md"
FULL=${TB_README_FULL:-0}

top="$TB_TEST_TMP/top"
mkdir -p "$top"
for f in "$TB_SOURCE_DIR"/*; do
    [ "$(basename "$f")" = build ] || ln -s "$f" "$top/$(basename "$f")"
done
ln -s "$TB_BUILD_DIR" "$top/build"

# The commands, one a line.
awk '
    /^## / { tool = ($0 == "## The tool") }
    tool && /^```sh$/ { code = 1; next }
    tool && /^```/ { code = 0; next }
    tool && code {
        line = $0
        if (sub(/\\$/, "", line)) { acc = acc line; next }
        line = acc line
        acc = ""
        sub(/[ \t]+#.*$/, "", line)
        sub(/^[ \t]*#.*$/, "", line)
        gsub(/[ \t]+/, " ", line)
        sub(/^ /, "", line)
        if (line != "")
            print line
    }' "$README" > commands.txt
n=$(wc -l < commands.txt)
[ "$n" -ge 10 ] || fail "found $n commands in README.md's \"The tool\" section: $(cat commands.txt)"

# Scaling rules: "SED-EXPRESSION" lines, each applied to every command.
cat > rules.txt << 'EOF'
s/--width 2048 --height 2048/--width 512 --height 512/
/ flow experiment /s/$/ --instances 1 --tasks 200/
s/--ranks 4:32:4/--ranks 4:8:4/
/--web/!s|tests/data/tsplib/kroA100.tsp|tests/data/tsplib/bays29.tsp|
EOF
if [ "$FULL" != 1 ]; then
    while read -r rule; do
        sed "$rule" commands.txt | cmp -s - commands.txt &&
            fail "scaling rule '$rule' matches no README command (update tests/cli/readme.sh)"
        sed -i "$rule" commands.txt
    done < rules.txt
fi

# mpiexec as the build was configured (CTest's MPIEXEC).
cd "$top"
i=0
while IFS= read -r cmd; do
    i=$((i + 1))
    run=$(echo "$cmd" | sed 's/^mpiexec /"$MPIEXEC" /')
    start=$(date +%s)
    case $cmd in
    *--web*)
        command -v curl > /dev/null || fail "curl is not installed (scripts/bootstrap installs it)"
        eval "$run > '$TB_TEST_TMP/out.$i' 2> '$TB_TEST_TMP/err.$i' < /dev/null &"
        pid=$!
        k=0
        while ! grep -q "web view at" "$TB_TEST_TMP/err.$i" && [ $k -lt 300 ] && kill -0 $pid 2> /dev/null; do
            sleep 0.1
            k=$((k + 1))
        done
        line=$(grep "web view at http" "$TB_TEST_TMP/err.$i") ||
            { kill $pid 2> /dev/null || true; fail "$cmd: no URL: $(tail -n 5 "$TB_TEST_TMP/err.$i")"; }
        url=$(echo "$line" | sed 's/.* at \(http[^ ]*\) .*/\1/')
        tok=$(echo "$line" | sed 's/.*(token \([0-9a-f]*\))$/\1/')
        code=$(curl -s -o page.html -w "%{http_code}" "$url") || true
        rm -f page.html
        [ "$code" = 200 ] || { kill $pid 2> /dev/null || true; fail "$cmd: the page at $url: HTTP $code"; }
        curl -s -o /dev/null -X POST -H "Authorization: Bearer $tok" "${url}api/stop" || true
        set +e
        wait $pid
        st=$?
        set -e
        ;;
    *)
        set +e
        eval "$run" > "$TB_TEST_TMP/out.$i" 2> "$TB_TEST_TMP/err.$i" < /dev/null
        st=$?
        set -e
        ;;
    esac
    [ "$st" = 0 ] || fail "README command failed (exit $st): $cmd
$(tail -n 5 "$TB_TEST_TMP/err.$i")"
    echo "ok $(($(date +%s) - start)) s: $cmd"
done < "$TB_TEST_TMP/commands.txt"
echo "ok readme: $n commands"
