/*
 * bench/memory.c - the root master's memory per pending task.
 *
 *   mpiexec -n 1 bench_memory --variant add|reserve|malloc [--tasks N] [--bytes B]
 *
 * Measures this process's resident set size (Linux: /proc/self/statm) before
 * and after storing N tasks of B bytes (default 1,000,000 x 16):
 *   add      tb_mw_add_task N times on a fresh tb_mw handle;
 *   reserve  the same after tb_mw_reserve(mw, N, N * B);
 *   malloc   a plain malloc'd array of N B-byte structs, every byte written
 *            (the bound: it shows what the method reports for ~0 overhead).
 * Adding copies each payload into the queue, so the memory is touched and
 * resident; overhead per task = (rss_after - rss_before) / N - B.
 * peak_overhead_per_task uses VmHWM (the process's resident high-water mark)
 * instead of rss_after, so a transient copy during regrowth would show there.
 *
 * One variant per process, so that memory freed by one measurement (and
 * glibc's adaptive mmap threshold) cannot flatter the next.  Prints one JSON
 * line.  A benchmark: it judges nothing.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mpi.h>

#include "tenbin/core.h"
#include "tenbin/mw.h"

/* Resident set size in bytes, or -1. */
static long long rss_bytes(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f)
        return -1;
    long long size = 0, resident = -1;
    if (fscanf(f, "%lld %lld", &size, &resident) != 2)
        resident = -1;
    fclose(f);
    return resident < 0 ? -1 : resident * (long long)sysconf(_SC_PAGESIZE);
}

/* VmHWM (peak resident set size) in bytes, or -1. */
static long long hwm_bytes(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (!f)
        return -1;
    char line[256];
    long long kb = -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "VmHWM: %lld kB", &kb) == 1)
            break;
    fclose(f);
    return kb < 0 ? -1 : kb * 1024;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    const char *variant = NULL;
    long ntasks = 1000000, bytes = 16;
    int bad = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--variant") == 0 && i + 1 < argc)
            variant = argv[++i];
        else if (strcmp(argv[i], "--tasks") == 0 && i + 1 < argc)
            bad |= tb_parse_long(argv[++i], 1, 1L << 32, &ntasks) != TB_OK;
        else if (strcmp(argv[i], "--bytes") == 0 && i + 1 < argc)
            bad |= tb_parse_long(argv[++i], 1, 1L << 20, &bytes) != TB_OK;
        else
            bad = 1;
    }
    int v = !variant                         ? -1
            : strcmp(variant, "add") == 0     ? 0
            : strcmp(variant, "reserve") == 0 ? 1
            : strcmp(variant, "malloc") == 0  ? 2
                                              : -1;
    if (bad || v < 0) {
        fprintf(stderr, "usage: bench_memory --variant add|reserve|malloc [--tasks N] "
                        "[--bytes B]\n");
        MPI_Finalize();
        return 2;
    }

    unsigned char *payload = malloc((size_t)bytes);
    if (!payload) {
        MPI_Finalize();
        return 1;
    }
    tb_mw *mw = NULL;
    int rc = TB_OK;
    if (v != 2)
        rc = tb_mw_create(&mw, MPI_COMM_SELF);
    long long before = rss_bytes();
    unsigned char *arr = NULL;
    if (rc == TB_OK && v == 1)
        rc = tb_mw_reserve(mw, (uint64_t)ntasks, (size_t)ntasks * (size_t)bytes);
    if (rc == TB_OK && v == 2) {
        arr = malloc((size_t)ntasks * (size_t)bytes);
        if (!arr)
            rc = TB_ERR_NOMEM;
    }
    for (long i = 0; rc == TB_OK && i < ntasks; i++) {
        memset(payload, (int)(i & 0xff), (size_t)bytes);
        memcpy(payload, &i, sizeof i < (size_t)bytes ? sizeof i : (size_t)bytes);
        if (v == 2)
            memcpy(arr + (size_t)i * (size_t)bytes, payload, (size_t)bytes);
        else
            rc = tb_mw_add_task(mw, payload, (size_t)bytes);
    }
#if defined(__GNUC__)
    /* The array is only written: keep the compiler from eliding it. */
    __asm__ volatile("" : : "r"(arr) : "memory");
#endif
    long long after = rss_bytes();
    long long peak = hwm_bytes();
    int status = 0;
    if (rc != TB_OK || before < 0 || after < 0) {
        fprintf(stderr, "bench_memory: %s\n",
                rc != TB_OK ? tb_strerror(rc) : "cannot read /proc/self/statm");
        status = 1;
    } else {
        double per = (double)(after - before) / (double)ntasks - (double)bytes;
        double peak_per = peak >= 0 ? (double)(peak - before) / (double)ntasks - (double)bytes
                                    : -1.0;
        printf("{\"variant\": \"%s\", \"tasks\": %ld, \"payload_bytes\": %ld, "
               "\"rss_before\": %lld, \"rss_after\": %lld, \"vm_hwm\": %lld, "
               "\"overhead_per_task\": %.2f, \"peak_overhead_per_task\": %.2f}\n",
               variant, ntasks, bytes, before, after, peak, per, peak_per);
    }
    free(arr);
    free(payload);
    if (mw)
        tb_mw_destroy(&mw);
    MPI_Finalize();
    return status;
}
