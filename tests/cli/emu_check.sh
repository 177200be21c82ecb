#!/bin/sh
# tenbin emu --check PROGRAM: the MPI functions a program (and the libraries
# it loads; a script's interpreter; python: mpi4py's module) imports, by what
# the emulator does with them, before any run.  Known answers: the test
# patterns import MPI_Comm_spawn (not emulated); Debian's hpcc imports only
# what is modelled or local; every function Open MPI's and MPICH's libraries
# define is known to the emulator (modelled, local or not emulated: none
# unknown, which would run unseen by the virtual clocks).
# Environment (set by CTest): TENBIN, EMU_PATTERNS, TB_TEST_TMP.
set -eu
cd "$TB_TEST_TMP"
. "$TB_SOURCE_DIR/tests/cli/expect.inc"

# A program that imports a function the emulator stops at: exit 1, named.
set +e
"$TENBIN" emu --check "$EMU_PATTERNS" > pat.out 2> pat.err
st=$?
set -e
[ "$st" = 1 ] || fail "--check patterns: exit $st: $(cat pat.out pat.err)"
grep -q '^  [0-9]* MPI functions imported: [1-9][0-9]* modelled, [0-9]* local .*, 1 not emulated, 0 unknown' pat.out ||
    fail "--check patterns: $(cat pat.out)"
grep -qx '      MPI_Comm_spawn' pat.out || fail "--check patterns: spawn not named: $(cat pat.out)"
"$TENBIN" emu --check --json -- "$EMU_PATTERNS" spawn > pat.json && fail "--check --json patterns: exit 0"
/usr/bin/python3 - pat.json << 'PY' || fail "--check --json patterns: $(cat pat.json)"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["emulable"] is False and d["not_emulated"] == ["MPI_Comm_spawn"], d
assert "MPI_Send" in d["modelled"] and "MPI_Comm_rank" in d["local"] and d["unknown"] == [], d
assert d["bindings"] is None and d["objects"][0].endswith("emu_patterns"), d
PY

# Debian's hpcc: every MPI function it imports is modelled or local.
HPCC=$(command -v hpcc) || fail "hpcc is not installed (scripts/bootstrap installs it)"
"$TENBIN" emu --check "$HPCC" > hpcc.out || fail "--check hpcc: $(cat hpcc.out)"
tail -n 1 hpcc.out | grep -q '^can be emulated' || fail "--check hpcc: $(cat hpcc.out)"

# Every function each MPI library defines, referenced by one program: none
# unknown to the emulator.
for cc in mpicc mpicc.mpich; do
    command -v "$cc" > /dev/null || fail "$cc is not installed (scripts/bootstrap installs it)"
    printf '#include <mpi.h>\nint main(int c, char **v) { MPI_Init(&c, &v); return MPI_Finalize(); }\n' > init.c
    "$cc" init.c -o init.$cc
    lib=$(ldd ./init.$cc | awk '/lib(mpi|mpich)\.so/ { print $3; exit }')
    [ -n "$lib" ] || fail "$cc: no MPI library in $(ldd ./init.$cc)"
    nm -D --defined-only "$lib" | awk '($2 == "T" || $2 == "W" || $2 == "i") && $3 ~ /^MPI_[A-Z][a-z_]/ { print $3 }' |
        sort -u > names.$cc
    n=$(wc -l < names.$cc)
    [ "$n" -gt 300 ] || fail "$cc: only $n functions in $lib"
    { awk '{ print "extern void " $1 "(void);" }' names.$cc
      echo 'void *const tb_all[] = {'
      awk '{ print "(void *)" $1 "," }' names.$cc
      echo '};'
      echo 'int main(void) { return tb_all[0] == 0; }'; } > all.c
    "$cc" -w all.c -o all.$cc
    set +e
    "$TENBIN" emu --check ./all.$cc > all.$cc.out
    set -e
    grep -q "^  $n MPI functions imported: .*, 0 unknown to the emulator" all.$cc.out ||
        fail "--check every function of $lib: $(cat all.$cc.out)"
done

# A Python script (its interpreter, and mpi4py's module found without
# starting MPI).
printf '#!/usr/bin/python3\nfrom mpi4py import MPI\nprint(MPI.COMM_WORLD.Get_rank())\n' > script.py
chmod +x script.py
"$TENBIN" emu --check --json ./script.py > py.json && fail "--check script.py: exit 0 (mpi4py binds MPI_Comm_spawn)"
/usr/bin/python3 - py.json << 'PY' || fail "--check --json script.py: $(cat py.json)"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["program"] == "./script.py" and d["bindings"] == "mpi4py", d
assert "MPI_Comm_spawn" in d["not_emulated"] and d["unknown"] == [] and len(d["modelled"]) > 40, d
PY

# Programs it cannot say anything good of: one line, exit 1 (2: usage).
printf 'int main(void) { return 0; }\n' > static.c
gcc -static static.c -o static
expect 1 'tenbin emu --check: ./static: statically linked' emu --check ./static
printf 'not a program\n' > data && chmod +x data
expect 1 'tenbin emu --check: ./data: not an ELF executable or a script' emu --check ./data
printf '#!/bin/sh\necho hi\n' > plain.sh && chmod +x plain.sh
set +e
"$TENBIN" emu --check ./plain.sh > plain.out 2>&1
st=$?
set -e
[ "$st" = 1 ] && grep -q '^no MPI function imported' plain.out || fail "--check plain.sh: exit $st: $(cat plain.out)"
expect 2 'tenbin emu --check: ./nosuch: no such program' emu --check ./nosuch
expect 2 'no program given' emu --check
echo "emu --check: ok"
