/*
 * test_trace_mpi.c - tb_trace_write_merged across ranks.
 *
 * Usage: mpiexec -n N test_trace_mpi N [test-name]
 * The first argument must equal the communicator size (so a launch with the
 * wrong rank count fails instead of silently testing less).
 */
#define _POSIX_C_SOURCE 200809L

#include "tenbin/core.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tb_test_mpi.h"

static int rank, nranks;
/* Scratch directory made by rank 0 and broadcast, so all ranks pass the
 * same path. */
static char dir[512];

static int make_dir(void)
{
    int ok = 1;
    if (rank == 0) {
        const char *tmp = getenv("TMPDIR");
        snprintf(dir, sizeof dir, "%s/tb_mpi_XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
        ok = mkdtemp(dir) != NULL;
    }
    MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Bcast(dir, sizeof dir, MPI_CHAR, 0, MPI_COMM_WORLD);
    return ok;
}

static char *read_all(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    rewind(f);
    char *s = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (s != NULL && fread(s, 1, (size_t)n, f) != (size_t)n) {
        free(s);
        s = NULL;
    }
    if (s != NULL)
        s[n] = '\0';
    fclose(f);
    return s;
}

/* Structural sanity: brackets balance outside strings, strings close, no
 * raw control characters inside strings, no ",]" or "[," and no ",,". */
static int json_sane(const char *s)
{
    char stack[64];
    int depth = 0, in_str = 0;
    char prev = 0; /* previous non-blank character outside strings */
    for (const char *p = s; *p; p++) {
        if (in_str) {
            if ((unsigned char)*p < 0x20)
                return 0;
            if (*p == '\\' && p[1] != '\0')
                p++;
            else if (*p == '"')
                in_str = 0;
            continue;
        }
        if (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r')
            continue;
        if (*p == '"')
            in_str = 1;
        else if (*p == '[' || *p == '{') {
            if (depth == 64)
                return 0;
            stack[depth++] = *p == '[' ? ']' : '}';
        } else if (*p == ']' || *p == '}') {
            if (depth == 0 || stack[--depth] != *p || prev == ',')
                return 0;
        } else if (*p == ',' && (prev == ',' || prev == '[' || prev == '{')) {
            return 0;
        }
        prev = *p;
    }
    return depth == 0 && !in_str;
}

/* Count of occurrences of needle in s. */
static int count_of(const char *s, const char *needle)
{
    int n = 0;
    for (const char *p = s; (p = strstr(p, needle)) != NULL; p++)
        n++;
    return n;
}

/* Each rank: a process name, a compute slice, and a message arrow to the
 * next rank (flow begin here, flow end on the receiver). */
static int fill(tb_trace *tr, double t0)
{
    char name[64];
    snprintf(name, sizeof name, "rank %d \"r\"", rank);
    int rc = tb_trace_set_process_name(tr, name);
    if (rc == TB_OK)
        rc = tb_trace_complete_arg(tr, 0, "mw", "compute", t0, t0 + 0.001 * (rank + 1),
                                   "rank", rank);
    if (rc == TB_OK)
        rc = tb_trace_flow_begin(tr, 0, "msg", (uint64_t)rank, t0 + 0.002);
    if (rc == TB_OK)
        rc = tb_trace_flow_end(tr, 0, "msg", (uint64_t)((rank + nranks - 1) % nranks),
                               t0 + 0.003);
    return rc;
}

/* Return codes agree on every rank. */
static int same_everywhere(int rc)
{
    int lo, hi;
    MPI_Allreduce(&rc, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&rc, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    return lo == hi;
}

/* The root's checks of a merged file: valid-looking JSON holding the events
 * of exactly the ranks r with has_events[r]. */
static int check_file(const char *path, const int *has_events)
{
    char *text = read_all(path);
    int ok = text != NULL && json_sane(text) && strncmp(text, "{\"traceEvents\":[", 16) == 0;
    for (int r = 0; ok && r < nranks; r++) {
        char pid[32];
        snprintf(pid, sizeof pid, "\"pid\":%d,", r);
        ok = (count_of(text, pid) > 0) == has_events[r];
        if (ok && has_events[r]) {
            /* metadata + compute + 2 flow events */
            ok = count_of(text, pid) == 4;
            snprintf(pid, sizeof pid, "\"name\":\"rank %d \\\"r\\\"\"", r);
            ok = ok && count_of(text, pid) == 1;
        }
    }
    if (!ok && text != NULL)
        printf("    merged file:\n%s\n", text);
    free(text);
    return ok;
}

static void test_merged_all(void)
{
    char path[600], tmp[640];
    tb_trace *tr = NULL;
    int made = make_dir();
    TB_ASSERT(made);
    snprintf(path, sizeof path, "%s/merged.json", dir);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    int rc = tb_trace_create(&tr, rank, 0.0);
    if (rc == TB_OK)
        rc = fill(tr, 1.0);
    int rc_write = tb_trace_write_merged(tr, MPI_COMM_WORLD, 0, path);
    int agree = same_everywhere(rc_write);
    tb_trace_destroy(&tr);
    int file_ok = 1, tmp_left = 0;
    if (rank == 0) {
        int *has = malloc((size_t)nranks * sizeof *has);
        for (int r = 0; has != NULL && r < nranks; r++)
            has[r] = 1;
        file_ok = has != NULL && check_file(path, has);
        free(has);
        tmp_left = access(tmp, F_OK) == 0;
        remove(path);
        rmdir(dir);
    }
    TB_ASSERT_OK(rc);
    TB_ASSERT_OK(rc_write);
    TB_ASSERT(agree);
    TB_ASSERT(file_ok);
    TB_ASSERT(!tmp_left);
}

/* Root is the last rank; rank 1 passes no trace and the root an empty one. */
static void test_merged_partial(void)
{
    char path[600];
    tb_trace *tr = NULL;
    int made = make_dir();
    TB_ASSERT(made);
    snprintf(path, sizeof path, "%s/partial.json", dir);
    int root = nranks - 1, rc = TB_OK;
    if (rank != 1)
        rc = tb_trace_create(&tr, rank, 0.0);
    if (rc == TB_OK && rank != 1 && rank != root)
        rc = fill(tr, 2.0);
    int rc_write = tb_trace_write_merged(tr, MPI_COMM_WORLD, root, path);
    int agree = same_everywhere(rc_write);
    tb_trace_destroy(&tr);
    int file_ok = 1;
    if (rank == root) {
        int *has = malloc((size_t)nranks * sizeof *has);
        for (int r = 0; has != NULL && r < nranks; r++)
            has[r] = r != 1 && r != root;
        file_ok = has != NULL && check_file(path, has);
        free(has);
        remove(path);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        rmdir(dir);
    TB_ASSERT_OK(rc);
    TB_ASSERT_OK(rc_write);
    TB_ASSERT(agree);
    TB_ASSERT(file_ok);
}

/* The root cannot write: every rank gets TB_ERR_IO, nothing is left. */
static void test_merged_io_error(void)
{
    char path[600];
    tb_trace *tr = NULL;
    int made = make_dir();
    TB_ASSERT(made);
    snprintf(path, sizeof path, "%s/no/such/dir.json", dir);
    int rc = tb_trace_create(&tr, rank, 0.0);
    if (rc == TB_OK)
        rc = fill(tr, 0.5);
    int rc_write = tb_trace_write_merged(tr, MPI_COMM_WORLD, 0, path);
    int agree = same_everywhere(rc_write);
    tb_trace_destroy(&tr);
    if (rank == 0)
        rmdir(dir); /* fails if anything was left inside */
    int left = rank == 0 && access(dir, F_OK) == 0;
    TB_ASSERT_OK(rc);
    TB_ASSERT_EQ_INT(rc_write, TB_ERR_IO);
    TB_ASSERT(agree);
    TB_ASSERT(!left);
}

/* A bad root is refused the same way on every rank, without communicating. */
static void test_merged_bad_root(void)
{
    int rc = tb_trace_write_merged(NULL, MPI_COMM_WORLD, nranks, "x.json");
    TB_ASSERT_EQ_INT(rc, TB_ERR_INVALID);
    rc = tb_trace_write_merged(NULL, MPI_COMM_WORLD, -1, "x.json");
    TB_ASSERT_EQ_INT(rc, TB_ERR_INVALID);
}

static const tb_test tests[] = {
    {"merged_all", test_merged_all},
    {"merged_partial", test_merged_partial},
    {"merged_io_error", test_merged_io_error},
    {"merged_bad_root", test_merged_bad_root},
    {NULL, NULL},
};

TB_TEST_MPI_MAIN(tests, 2, rank, nranks)
