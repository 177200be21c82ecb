/*
 * fuzz_common.h - what every libFuzzer harness in tests/fuzz shares.
 *
 *  - FUZZ_MAX: inputs above 1 MiB are skipped (the readers are linear or
 *    close to it; larger inputs only slow the search down).
 *  - fuzz_quiet(): the library's log lines (TB_CHECK failures at debug
 *    level, warnings) go nowhere.
 *  - fuzz_cstr(): the input as a NUL-terminated string (freed by the caller).
 *  - fuzz_file(): the input as a file for the readers that take a path.  It
 *    is a memfd (memfd_create), never on disk, named /proc/self/fd/N; each
 *    input replaces its content.  fuzz_aux_file() keeps a second one at the
 *    fixed descriptor FUZZ_AUX_FD (/proc/self/fd/999), for readers whose
 *    input names another file (a platform's netgauge table).
 *  - UBSan stops at its first report, as ASan does, except for the reports
 *    listed in tests/fuzz/ubsan.supp (bugs outside the readers, reported
 *    and awaiting their owners' fix; tests/fuzz/known/README.md).
 *  - fuzz_guards(): 0 with FUZZ_NO_GUARDS=1 in the environment.  A harness
 *    skips the inputs that reach a known bug outside the readers only while
 *    guards are on; turn them off to reproduce one (tests/fuzz/known/).
 *  - fuzz_report(): with FUZZ_VERBOSE=1 in the environment, the reader's
 *    result and message on stderr (to see what a seed or a corpus input
 *    reaches: `FUZZ_VERBOSE=1 fuzz_x FILE`).
 *
 * Harness files define _GNU_SOURCE before any include.  Harnesses never
 * call MPI_Init: no reader needs it.
 */
#ifndef TB_FUZZ_COMMON_H
#define TB_FUZZ_COMMON_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memfd_create */
#endif

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tenbin/core.h"

#define FUZZ_MAX ((size_t)1 << 20)
#define FUZZ_AUX_FD 999
#define FUZZ_AUX_PATH "/proc/self/fd/999"

#ifndef TB_FUZZ_UBSAN_SUPP
#define TB_FUZZ_UBSAN_SUPP "ubsan.supp"
#endif

/* UBSAN_OPTIONS in the environment override these. */
const char *__ubsan_default_options(void);
const char *__ubsan_default_options(void)
{
    return "halt_on_error=1:print_stacktrace=1:suppressions=" TB_FUZZ_UBSAN_SUPP;
}

static inline int fuzz_env_flag(const char *name)
{
    const char *v = getenv(name);
    return v != NULL && v[0] != '\0' && strcmp(v, "0") != 0;
}

static inline int fuzz_guards(void)
{
    static int guards = -1;
    if (guards < 0)
        guards = !fuzz_env_flag("FUZZ_NO_GUARDS");
    return guards;
}

static void fuzz_sink(void *ctx, tb_log_level level, int rank, const char *line)
{
    (void)ctx;
    (void)level;
    (void)rank;
    (void)line;
}

static inline void fuzz_quiet(void) { tb_log_set_sink(fuzz_sink, NULL); }

/* The initializer of a harness that needs nothing but a quiet library. */
#define FUZZ_QUIET_INIT                                                      \
    int LLVMFuzzerInitialize(int *argc, char ***argv)                        \
    {                                                                        \
        (void)argc;                                                          \
        (void)argv;                                                          \
        fuzz_quiet();                                                        \
        return 0;                                                            \
    }

static inline void fuzz_report(int rc, const char *err)
{
    static int verbose = -1;
    if (verbose < 0)
        verbose = fuzz_env_flag("FUZZ_VERBOSE");
    if (verbose)
        fprintf(stderr, "fuzz: %s%s%s\n", tb_strerror(rc), rc != TB_OK ? ": " : "",
                rc != TB_OK ? err : "");
}

static inline char *fuzz_cstr(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (s == NULL)
        abort();
    if (size)
        memcpy(s, data, size);
    s[size] = '\0';
    return s;
}

/* Replace the content of memfd fd with data; abort on failure (the harness,
 * not the reader, would be broken). */
static inline void fuzz_fill(int fd, const void *data, size_t size)
{
    const char *p = data;
    if (ftruncate(fd, 0) != 0)
        abort();
    for (size_t off = 0; off < size;) {
        ssize_t w = pwrite(fd, p + off, size - off, (off_t)off);
        if (w <= 0)
            abort();
        off += (size_t)w;
    }
}

/* The input as a file; returns its path (valid until the next call). */
static inline const char *fuzz_file(const uint8_t *data, size_t size)
{
    static int fd = -1;
    static char path[64];
    if (fd < 0) {
        fd = memfd_create("tenbin-fuzz", MFD_CLOEXEC);
        if (fd < 0) {
            perror("memfd_create");
            abort();
        }
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    }
    fuzz_fill(fd, data, size);
    return path;
}

/* A second file with fixed content at FUZZ_AUX_PATH (set up once). */
static inline void fuzz_aux_file(const char *text)
{
    int fd = memfd_create("tenbin-fuzz-aux", MFD_CLOEXEC);
    if (fd < 0 || (fd != FUZZ_AUX_FD && dup2(fd, FUZZ_AUX_FD) != FUZZ_AUX_FD)) {
        perror("tenbin fuzz: auxiliary file");
        abort();
    }
    if (fd != FUZZ_AUX_FD)
        close(fd);
    fuzz_fill(FUZZ_AUX_FD, text, strlen(text));
}

/* A small Netgauge LogGP table, the content of FUZZ_AUX_PATH where a
 * harness names one. */
static const char fuzz_netgauge_table[] =
    "# size n PRTT(1,0,s) PRTT(n,0,s) PRTT(n,PRTT(1,0,s),s) L o_s o_r g G lsqu(g,G)\n"
    "1 20 100.0 300.0 1200.0 40.0 5.0 6.0 10.0 0.0 0.0\n"
    "1024 20 120.0 420.0 1400.0 40.0 5.5 6.5 15.0 0.01 0.0\n"
    "65536 20 1200.0 11000.0 13000.0 40.0 30.0 32.0 500.0 0.0085 0.0\n";

/* The initializer of a harness whose inputs may name the Netgauge table at
 * FUZZ_AUX_PATH. */
#define FUZZ_NETGAUGE_INIT                                                   \
    int LLVMFuzzerInitialize(int *argc, char ***argv)                        \
    {                                                                        \
        (void)argc;                                                          \
        (void)argv;                                                          \
        fuzz_quiet();                                                        \
        fuzz_aux_file(fuzz_netgauge_table);                                  \
        return 0;                                                            \
    }

#endif /* TB_FUZZ_COMMON_H */
