# Tenbin top-level Makefile (GNU make).  The two everyday commands:
#   make demo    build, then render the Mandelbrot demo on 4 ranks
#   make test    build and test: Open MPI build, sanitizer builds (ASan+UBSan,
#                ThreadSanitizer), MPICH smoke test, a single-node Slurm
#   make test-full   make test, then every reader fuzzed 30 s (make fuzz)
# Other targets: build, bench, fuzz FUZZ_SECONDS=N, test-slurm, install PREFIX=..., clean.

BUILD ?= build
PREFIX ?= /usr/local
CMAKE ?= cmake
CTEST ?= ctest
JOBS ?= $(shell nproc 2>/dev/null || echo 2)

# Fail loudly: bash with errexit/pipefail, print commands, stop on the first error.
SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c
.DELETE_ON_ERROR:
# The steps run one after another (each cmake --build is parallel itself).
.NOTPARALLEL:

CONFIG_FLAGS := -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTENBIN_WERROR=ON
ASAN_FLAGS := -DCMAKE_BUILD_TYPE=Debug -DTENBIN_SANITIZE=ON -DTENBIN_WERROR=ON
TSAN_FLAGS := -DCMAKE_BUILD_TYPE=Debug -DTENBIN_TSAN=ON -DTENBIN_WERROR=ON
MPICH_FLAGS := -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTENBIN_WERROR=ON -DTENBIN_BUILD_BENCH=OFF

.PHONY: all build bootstrap demo test test-full test-main test-asan test-tsan \
	test-mpich test-slurm \
	bench fuzz install clean

all: build

bootstrap:
	scripts/bootstrap

build: bootstrap
	$(CMAKE) -S . -B $(BUILD) $(CONFIG_FLAGS)
	$(CMAKE) --build $(BUILD) -j$(JOBS)

demo: build
	scripts/demo $(BUILD)

test: test-main test-asan test-tsan test-mpich test-slurm
	@echo "make test: all test suites passed"

# What needs clang and more time (scripts/bootstrap --full installs it).
test-full: test fuzz
	@echo "make test-full: all test suites passed"

# A single-node Slurm on this machine: sbatch and srun of tenbin (exit 77:
# the daemons cannot start here, reported as skipped).
test-slurm: build
	rc=0; tests/slurm/run $(BUILD) || rc=$$?; \
	if [ $$rc = 77 ]; then echo "make test-slurm: skipped"; else exit $$rc; fi

test-main: build
	cd $(BUILD) && $(CTEST) --output-on-failure -j2 --timeout 300

test-asan: bootstrap
	$(CMAKE) -S . -B $(BUILD)-asan $(ASAN_FLAGS)
	$(CMAKE) --build $(BUILD)-asan -j$(JOBS)
	cd $(BUILD)-asan && $(CTEST) --output-on-failure -j2 --timeout 300

# ThreadSanitizer: only the tests whose code runs threads (label "threads").
test-tsan: bootstrap
	$(CMAKE) -S . -B $(BUILD)-tsan $(TSAN_FLAGS)
	$(CMAKE) --build $(BUILD)-tsan -j$(JOBS) --target test_core tenbin_cli
	cd $(BUILD)-tsan && $(CTEST) --output-on-failure --timeout 300 --no-tests=error -L threads

# MPICH smoke test: a separate tree configured from scratch (--fresh drops the
# cache) so nothing from Open MPI's configuration is reused.
test-mpich: bootstrap
	mpiexec_mpich=$$(command -v mpiexec.mpich) || { echo "mpiexec.mpich not found" >&2; exit 1; }; \
	$(CMAKE) --fresh -S . -B $(BUILD)-mpich $(MPICH_FLAGS) \
	    -DMPI_C_COMPILER=mpicc.mpich -DMPIEXEC_EXECUTABLE="$$mpiexec_mpich"
	grep -q '^TENBIN_MPI_FLAVOUR:INTERNAL=mpich$$' $(BUILD)-mpich/CMakeCache.txt || \
	    { echo "$(BUILD)-mpich is not configured with MPICH" >&2; exit 1; }
	$(CMAKE) --build $(BUILD)-mpich -j$(JOBS) --target test_mw test_bnb test_transport_mpi test_redist_mpi tenbin_cli tenbin_emu emu_patterns
	cd $(BUILD)-mpich && $(CTEST) --output-on-failure --timeout 300 --no-tests=error \
	    -R '^(test_mw_np2|test_bnb_np2|test_transport_mpi_np2|test_redist_mpi_np2|emu_smoke|cli_flow_smoke)$$'

bench: build
	scripts/bootstrap --bench
	bench/run $(BUILD)
	bench/dispatch-instr $(BUILD)
	bench/sim $(BUILD)
	bench/s1-sweep $(BUILD)
	bench/s1-chunk $(BUILD)
	bench/s4-himeno $(BUILD)
	bench/s4-sim $(BUILD)
	bench/s2-flow $(BUILD)
	bench/s2-run $(BUILD)
	@if [ -x bench/simgrid/run ]; then bench/simgrid/run $(BUILD); fi
	bench/s3-emu $(BUILD)
	bench/s3-probe $(BUILD)
	bench/s3-real $(BUILD)
	bench/s3-seed $(BUILD)
	bench/s5-bnb $(BUILD)
	bench/s5-grid $(BUILD)
	bench/s5-web $(BUILD)
	bench/s5-bmi $(BUILD)

# libFuzzer harnesses of every input reader (tests/fuzz), in a clang tree
# $(BUILD)-fuzz, FUZZ_SECONDS (default 30) each.
fuzz:
	scripts/bootstrap --full && scripts/fuzz $(BUILD)-fuzz $${FUZZ_SECONDS:-30}

install: build
	$(CMAKE) --install $(BUILD) --prefix "$(PREFIX)"

clean:
	rm -rf $(BUILD) $(BUILD)-asan $(BUILD)-tsan $(BUILD)-mpich
