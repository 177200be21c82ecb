#!/bin/sh
# tests/install/run.sh MODE WORKDIR - install tests, run by ctest.
#
#   consume  install the build tree into WORKDIR/prefix, then build and run
#            the consumer project (this directory) with CMake (in its build
#            tree and installed) and with pkg-config, the installed examples
#            with their Makefile and with their CMakeLists.txt, and the
#            README's program; all with no LD_LIBRARY_PATH: each program must
#            find the library through its run path.
#   refuse   install, then configure the consumer with the *other* MPI
#            implementation's compiler wrapper and expect find_package(tenbin)
#            to fail with the flavour message.  Exit 77 (skip) when there is
#            no other implementation to try.
#
# Environment (set by tests/CMakeLists.txt): CMAKE, TB_GENERATOR, CC,
# TB_BUILD_DIR, TB_CONSUMER_SRC, TB_LIBDIR, TB_DATADIR, TB_MPI_C_COMPILER,
# TB_MPI_FLAVOUR, TB_MPIEXEC, TB_MPIEXEC_NUMPROC_FLAG, TB_SOURCE_DIR,
# optionally PKG_CONFIG, MAKE.
set -eu

mode=${1:?usage: run.sh consume|refuse WORKDIR}
work=${2:?usage: run.sh consume|refuse WORKDIR}
: "${CMAKE:=cmake}" "${PKG_CONFIG:=pkg-config}" "${CC:=cc}"
: "${TB_GENERATOR:=Unix Makefiles}"
: "${TB_BUILD_DIR:?}" "${TB_CONSUMER_SRC:?}" "${TB_LIBDIR:=lib}"
: "${TB_MPI_C_COMPILER:=mpicc}" "${TB_MPI_FLAVOUR:=other}" "${TB_DATADIR:=share}"
: "${TB_MPIEXEC:=mpiexec}" "${TB_MPIEXEC_NUMPROC_FLAG:=-n}" "${MAKE:=make}"
here=$(cd "$(dirname "$0")" && pwd)

prefix=$work/prefix

install_tree() {
    rm -rf "$work"
    mkdir -p "$work"
    echo "== cmake --install $TB_BUILD_DIR --prefix $prefix"
    "$CMAKE" --install "$TB_BUILD_DIR" --prefix "$prefix" >"$work/install.log" 2>&1 || {
        cat "$work/install.log"
        echo "FAIL: install failed" >&2
        exit 1
    }
}

# The run path of program $1 must lead to the installed library directory.
check_runpath() {
    want=$(cd "$prefix/$TB_LIBDIR" && pwd -P)
    rp=$(readelf -d "$1" | sed -n 's/.*(R[UN]*PATH).*\[\(.*\)\]$/\1/p')
    old_ifs=$IFS
    IFS=:
    for d in $rp; do
        if [ -d "$d" ] && [ "$(cd "$d" && pwd -P)" = "$want" ]; then
            IFS=$old_ifs
            echo "run path of $(basename "$1"): $rp"
            return 0
        fi
    done
    IFS=$old_ifs
    echo "FAIL: the run path of $1 ('$rp') does not lead to $want" >&2
    exit 1
}

# Run example program $1 on 1 to 3 ranks; it checks its own answer.
run_example() {
    for np in 1 2 3; do
        sh "$here/../examples/run.sh" "$np" "$1" "$TB_MPIEXEC" "$TB_MPIEXEC_NUMPROC_FLAG"
    done
}

configure_consumer() { # BUILD_DIR MPI_C_COMPILER
    "$CMAKE" -S "$TB_CONSUMER_SRC" -B "$1" -G "$TB_GENERATOR" \
        -DCMAKE_C_COMPILER="$CC" \
        -DCMAKE_PREFIX_PATH="$prefix" \
        -DMPI_C_COMPILER="$2"
}

case $mode in
consume)
    # What a user's shell has: the installed library is found by run paths.
    unset LD_LIBRARY_PATH
    install_tree
    for f in "$prefix/include/tenbin.h" "$prefix/include/tenbin/config.h" \
        "$prefix/$TB_LIBDIR/cmake/tenbin/tenbinConfig.cmake" \
        "$prefix/$TB_LIBDIR/cmake/tenbin/tenbinConfigVersion.cmake" \
        "$prefix/$TB_LIBDIR/pkgconfig/tenbin.pc"; do
        [ -f "$f" ] || { echo "FAIL: not installed: $f" >&2; exit 1; }
    done
    # <tenbin.h> declares every public module (not experiment.h, the knobs
    # for experiments that are no part of the API, included by name).
    for h in "$prefix"/include/tenbin/*.h; do
        h=tenbin/$(basename "$h")
        case $h in tenbin/export.h | tenbin/experiment.h) continue ;; esac
        grep -q "^#include \"$h\"" "$prefix/include/tenbin.h" ||
            { echo "FAIL: tenbin.h does not include $h" >&2; exit 1; }
    done

    echo "== consumer via find_package(tenbin)"
    configure_consumer "$work/cmake-build" "$TB_MPI_C_COMPILER"
    "$CMAKE" --build "$work/cmake-build"
    check_runpath "$work/cmake-build/consumer"
    "$work/cmake-build/consumer"
    # Installed, CMake drops its own run path: the package's must remain.
    "$CMAKE" --install "$work/cmake-build" --prefix "$work/consumer-prefix" >/dev/null
    check_runpath "$work/consumer-prefix/bin/consumer"
    "$work/consumer-prefix/bin/consumer"

    echo "== consumer via pkg-config"
    PKG_CONFIG_PATH="$prefix/$TB_LIBDIR/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
    export PKG_CONFIG_PATH
    cflags=$("$PKG_CONFIG" --cflags tenbin)
    libs=$("$PKG_CONFIG" --libs tenbin)
    echo "cflags: $cflags"
    echo "libs:   $libs"
    # shellcheck disable=SC2086 # flags are meant to be split
    "$CC" -std=c11 -Wall -Wextra -Werror $cflags "$TB_CONSUMER_SRC/main.c" \
        -o "$work/consumer-pc" $libs
    check_runpath "$work/consumer-pc"
    "$work/consumer-pc"

    examples=$prefix/$TB_DATADIR/tenbin/examples
    for f in Makefile CMakeLists.txt task_farm.c knapsack.c jacobi.c; do
        [ -f "$examples/$f" ] || { echo "FAIL: not installed: $examples/$f" >&2; exit 1; }
    done
    echo "== installed examples via their Makefile (pkg-config)"
    cp -R "$examples" "$work/examples-make"
    "$MAKE" -C "$work/examples-make" MPICC="$TB_MPI_C_COMPILER" PKG_CONFIG="$PKG_CONFIG"
    for src in "$work"/examples-make/*.c; do
        prog=${src%.c}
        check_runpath "$prog"
        run_example "$prog"
    done

    echo "== installed examples via their CMakeLists.txt (find_package)"
    "$CMAKE" -S "$examples" -B "$work/examples-cmake" -G "$TB_GENERATOR" \
        -DCMAKE_C_COMPILER="$CC" -DCMAKE_PREFIX_PATH="$prefix" \
        -DMPI_C_COMPILER="$TB_MPI_C_COMPILER"
    "$CMAKE" --build "$work/examples-cmake"
    for src in "$examples"/*.c; do
        prog=$work/examples-cmake/$(basename "${src%.c}")
        check_runpath "$prog"
        run_example "$prog"
    done

    echo "== the README's program (section 'The library')"
    # The first C code block after the heading, built as the README says.
    awk '/^## The library/ { sec = 1; next }
         sec && /^## / { exit }
         sec && /^```c$/ { code = 1; next }
         code && /^```$/ { exit }
         code { print }' "$TB_SOURCE_DIR/README.md" >"$work/readme.c"
    [ -s "$work/readme.c" ] || { echo "FAIL: no c block in README's 'The library'" >&2; exit 1; }
    # shellcheck disable=SC2086 # flags are meant to be split
    "$TB_MPI_C_COMPILER" -std=c11 -Wall -Wextra -Werror $cflags "$work/readme.c" \
        -o "$work/readme" $libs
    out=$("$TB_MPIEXEC" "$TB_MPIEXEC_NUMPROC_FLAG" 2 "$work/readme")
    echo "$out"
    case $out in
    *"on 2 ranks: 332833500 (success)"*) ;;
    *) echo "FAIL: the README's program did not print its sum on 2 ranks" >&2; exit 1 ;;
    esac
    echo "PASS"
    ;;
refuse)
    case $TB_MPI_FLAVOUR in
    openmpi) other=mpich; other_cc=mpicc.mpich ;;
    mpich) other=openmpi; other_cc=mpicc.openmpi ;;
    *) echo "SKIP: built with MPI flavour '$TB_MPI_FLAVOUR'"; exit 77 ;;
    esac
    if ! command -v "$other_cc" >/dev/null 2>&1; then
        echo "SKIP: $other_cc not installed"
        exit 77
    fi
    install_tree
    log=$work/configure.log
    if configure_consumer "$work/cmake-build" "$other_cc" >"$log" 2>&1; then
        cat "$log"
        echo "FAIL: configuring against $other succeeded; expected a refusal" >&2
        exit 1
    fi
    # CMake wraps long messages: compare with whitespace squeezed.
    flat=$(tr -s ' \t\n' '   ' <"$log")
    case $flat in
    *"tenbin was built with $TB_MPI_FLAVOUR but this project found $other"*)
        grep -A3 "tenbin was built" "$log" || true
        echo "PASS: refused"
        ;;
    *)
        cat "$log"
        echo "FAIL: configure failed, but not with the MPI flavour message" >&2
        exit 1
        ;;
    esac
    ;;
*)
    echo "run.sh: unknown mode '$mode'" >&2
    exit 2
    ;;
esac
