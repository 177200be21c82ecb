#!/bin/sh
# Debian's HPC Challenge (hpcc: HPL, DGEMM, STREAM, PTRANS, RandomAccess, FFT,
# latency and bandwidth), a program nobody here wrote, runs every benchmark to
# its end under tenbin emu on 4 ranks: its own checks pass (Success=1, HPL's
# residuals PASSED), every section it begins ends, and the emulator predicts
# a makespan.  (It stopped at its first benchmark when MPI_Cancel was not
# emulated.)  The input is hpcc's example with small sizes, one 2 x 2 grid.
# Environment (set by CTest): TENBIN, TB_TEST_TMP.
set -eu
cd "$TB_TEST_TMP"
. "$TB_SOURCE_DIR/tests/cli/expect.inc"
HPCC=$(command -v hpcc) || fail "hpcc is not installed (scripts/bootstrap installs it)"
cat > hpccinf.txt <<'INF'
HPLinpack benchmark input file
Innovative Computing Laboratory, University of Tennessee
HPL.out      output file name (if any)
8            device out (6=stdout,7=stderr,file)
1            # of problems sizes (N)
400          Ns
1            # of NBs
80           NBs
0            PMAP process mapping (0=Row-,1=Column-major)
1            # of process grids (P x Q)
2            Ps
2            Qs
16.0         threshold
1            # of panel fact
2            PFACTs (0=left, 1=Crout, 2=Right)
1            # of recursive stopping criterium
4            NBMINs (>= 1)
1            # of panels in recursion
2            NDIVs
1            # of recursive panel fact.
1            RFACTs (0=left, 1=Crout, 2=Right)
1            # of broadcast
1            BCASTs (0=1rg,1=1rM,2=2rg,3=2rM,4=Lng,5=LnM)
1            # of lookahead depth
1            DEPTHs (>=0)
2            SWAP (0=bin-exch,1=long,2=mix)
64           swapping threshold
0            L1 in (0=transposed,1=no-transposed) form
0            U  in (0=transposed,1=no-transposed) form
1            Equilibration (0=no,1=yes)
8            memory alignment in double (> 0)
##### This line (no. 32) is ignored (it serves as a separator). ######
0                               Number of additional problem sizes for PTRANS
1200 10000 30000                values of N
0                               number of additional blocking sizes for PTRANS
40 9 8 13 13 20 16 32 64        values of NB
INF
rm -f hpccoutf.txt
"$TENBIN" emu --timeout 600 --platform hosts=4,L=50us,o=12us,G=10ns -n 4 -- "$HPCC" > out.txt 2> err.txt ||
    fail "hpcc under tenbin emu: exit $?: $(tail -5 err.txt)"
grep -q '^Success=1$' hpccoutf.txt || fail "hpcc's own checks: $(grep -E '^(Success|Failure)' hpccoutf.txt)"
! grep -q 'FAILED' hpccoutf.txt || fail "hpcc: $(grep FAILED hpccoutf.txt | head -3)"
begun=$(grep -c '^Begin of .* section\.$' hpccoutf.txt)
ended=$(grep -c '^End of .* section\.$' hpccoutf.txt)
[ "$begun" -ge 17 ] && [ "$begun" = "$ended" ] || fail "hpcc: $begun sections begun, $ended ended"
grep -q '^End of HPC Challenge tests\.$' hpccoutf.txt || fail "hpcc did not reach its end"
grep -q 'tenbin emu: predicted makespan [0-9.]* s of virtual time for 4 ranks' out.txt ||
    fail "no prediction: $(tail -5 out.txt)"
echo "ok emu_hpcc: $begun sections, $(grep -o 'predicted makespan [0-9.]* s' out.txt)"
