/*
 * fuzz_sim_work_dist.c - the task times of `tenbin sim mw --work-dist`
 * (tools/work_dist.c).  An input is a trace file's text for
 * tb_work_dist_read_trace, unless it starts with "spec:": then the rest is
 * a --work-dist value for tb_work_dist_parse (trace:FILE excepted: it
 * names a file).  A trace read is written back with %.17g and read again,
 * and must give the same times; every distribution's first task times must
 * be finite and >= 0.
 */
#define _GNU_SOURCE /* memfd_create (fuzz_common.h) */
#include <math.h>

#include "fuzz_common.h"
#include "work_dist.h"

FUZZ_QUIET_INIT

static void check_times(const tb_work_dist *d)
{
    for (uint64_t id = 0; id < 16; id++) {
        double t = tb_work_dist_time(d, id);
        if (!(t >= 0) || !isfinite(t))
            abort();
        if (d->kind == TB_WORK_TRACE && t != d->times[id % d->ntimes])
            abort();
    }
}

static void round_trip(const tb_work_dist *d)
{
    tb_buf b = TB_BUF_INIT;
    for (size_t i = 0; i < d->ntimes; i++)
        if (tb_buf_printf(&b, "%.17g\n", d->times[i]) != TB_OK)
            abort();
    if (tb_buf_append(&b, "", 1) != TB_OK)
        abort();
    tb_work_dist again = {0};
    char err[256] = "";
    if (tb_work_dist_read_trace((const char *)b.data, b.len - 1, "again", &again, err,
                                sizeof err) != TB_OK ||
        again.ntimes != d->ntimes ||
        memcmp(again.times, d->times, d->ntimes * sizeof *d->times) != 0) {
        fprintf(stderr, "fuzz: the trace written back reads differently: %s\n", err);
        abort();
    }
    tb_work_dist_free(&again);
    tb_buf_free(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > FUZZ_MAX)
        return 0;
    char *text = fuzz_cstr(data, size);
    tb_work_dist d = {0};
    d.mean = 1e-3;
    d.seed = 7;
    char err[512] = "";
    int rc;
    if (size >= 5 && memcmp(text, "spec:", 5) == 0) {
        if (strncmp(text + 5, "trace:", 6) == 0) {
            free(text);
            return 0;
        }
        rc = tb_work_dist_parse(text + 5, &d, err, sizeof err);
    } else {
        rc = tb_work_dist_read_trace(text, size, "trace", &d, err, sizeof err);
        if (rc == TB_OK && (d.kind != TB_WORK_TRACE || d.ntimes == 0 || d.ntimes > size))
            abort();
    }
    fuzz_report(rc, err);
    if (rc == TB_OK) {
        check_times(&d);
        if (d.kind == TB_WORK_TRACE)
            round_trip(&d);
    } else if (err[0] == '\0' || d.times != NULL) {
        abort(); /* an error says why, and leaves nothing behind */
    }
    tb_work_dist_free(&d);
    free(text);
    return 0;
}
