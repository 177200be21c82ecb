#!/bin/sh
# Every command's and subcommand's --help prints its own usage (a first line
# "usage: ... tenbin COMMAND [SUBCOMMAND] ...") on stdout and exits 0;
# `tenbin help COMMAND [SUBCOMMAND]` prints the same, `tenbin help` the same as
# `tenbin --help`; and every option a --help lists (on its usage lines, or
# first on a line of the option list) appears in the man page's entry for that
# command (docs/man/tenbin.1; bnb's subcommands are in bnb's entry, and
# --help once in DESCRIPTION for all).
# Environment (set by CTest): TENBIN, TB_SOURCE_DIR, TB_TEST_TMP.
set -eu
cd "$TB_TEST_TMP"
. "$(dirname "$0")/expect.inc"
MAN="$TB_SOURCE_DIR/docs/man/tenbin.1"

"$TENBIN" --help > top.txt
"$TENBIN" help > help.txt || fail "tenbin help: exit $?"
cmp -s top.txt help.txt || fail "tenbin help differs from tenbin --help: $(diff top.txt help.txt)"
expect 2 "^tenbin: help takes a command" help --bogus
expect 2 "^tenbin: unknown command 'bogus'" help bogus

# The commands tenbin --help lists, and the subcommands of those that have them.
cmds=$(sed -n 's/^  \([a-z][a-z]*\)  .*/\1/p' top.txt)
[ -n "$cmds" ] || fail "tenbin --help lists no commands: $(cat top.txt)"
"$TENBIN" flow --help > flow.txt
flow_subs="schedule simulate run experiment convert generate info"
for s in $(sed -n 's/^  \([a-z][a-z]*\)  .*/\1/p' flow.txt); do
    case " $flow_subs " in *" $s "*) ;; *) fail "tenbin flow --help lists '$s', which this test does not check" ;; esac
done
list=$(for c in $cmds; do
    echo "$c"
    case $c in
    bnb) printf '%s\n' "bnb generate" "bnb replay" "bnb serve" ;;
    emu) echo "emu sweep" ;;
    sim) echo "sim mw" ;;
    flow) for s in $flow_subs; do echo "flow $s"; done ;;
    esac
done)

# section NAME: the man page's entry for command NAME as plain text (from its
# ".B NAME ..." heading to the next command's heading or section).
section() {
    sed -e 's/\\-/-/g' -e 's/\\f[BIRP]//g' "$MAN" | awk -v want="$1" '
        /^\.SH/ { on = 0 }
        /^\.B / {
            h = $0
            sub(/^\.B (mpiexec -n P tenbin )?/, "", h)
            if (h ~ /^(bnb|emu|probe|info|himeno|mandel|flow [a-z]+|sim [a-z]+)( |$)/) {
                split(h, w, " ")
                name = w[1]
                if (w[1] == "flow" || w[1] == "sim" || (w[1] == "emu" && w[2] == "sweep"))
                    name = w[1] " " w[2]
                on = (name == want)
            }
        }
        on { print }'
}
sed -e 's/\\-/-/g' -e 's/\\f[BIRP]//g' "$MAN" | sed -n '/^\.SH DESCRIPTION/,/^\.SH/p' > desc.txt
grep -q -- "--help" desc.txt || fail "the man page's DESCRIPTION does not mention --help"
grep -q "tenbin help" desc.txt || fail "the man page's DESCRIPTION does not mention tenbin help"

echo "$list" | while read -r c; do
    set +e
    # shellcheck disable=SC2086 # c is "COMMAND [SUBCOMMAND]"
    "$TENBIN" $c --help > h.txt 2> h.err
    st=$?
    # shellcheck disable=SC2086
    "$TENBIN" help $c > h2.txt 2> /dev/null
    st2=$?
    set -e
    [ "$st" = 0 ] || fail "tenbin $c --help: exit $st: $(cat h.err)"
    [ "$st2" = 0 ] || fail "tenbin help $c: exit $st2"
    cmp -s h.txt h2.txt || fail "tenbin help $c differs from tenbin $c --help"
    head -n 1 h.txt | grep -q "^usage: .*tenbin $c\( \|$\)" ||
        fail "tenbin $c --help does not print its own usage: $(head -n 3 h.txt)"
    # The options: every --xxx on the usage lines (up to the first blank
    # line), and the first --xxx of each option line ("  --xxx" or "  -x, --xxx").
    opts=$({
        sed '/^$/q' h.txt | grep -o -- '--[a-z][a-z0-9-]*' || true
        grep -o -- '^ *\(-[a-zA-Z], \)\?--[a-z][a-z0-9-]*' h.txt | grep -o -- '--[a-z][a-z0-9-]*' || true
    } | grep -v -x -- --help | sort -u || true)
    case $c in bnb*) s=bnb ;; *) s=$c ;; esac
    [ -z "$opts" ] && continue
    section "$s" > sec.txt
    [ -s sec.txt ] || fail "the man page has no entry for '$s' (tenbin $c --help lists $opts)"
    missing=""
    for o in $opts; do
        grep -q -- "$o\([^a-z0-9-]\|$\)" sec.txt || missing="$missing $o"
    done
    [ -z "$missing" ] || fail "the man page's entry for '$s' lacks what tenbin $c --help lists:$missing"
done
echo "ok help"
