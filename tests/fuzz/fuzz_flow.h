/*
 * fuzz_flow.h - the body of the workflow harnesses (fuzz_flow_text.c,
 * fuzz_flow_wfjson.c, fuzz_flow_dax.c): tb_flow_parse in one format, then
 * what a reader promises of the workflow it returns, a round trip through
 * the WfFormat writer (and the text writer for per-host costs), and, for a
 * small workflow, a HEFT schedule that tb_flow_schedule_check accepts.
 *
 * The includer defines FUZZ_FLOW_FORMAT (a tb_flow_format).
 */
#ifndef TB_FUZZ_FLOW_H
#define TB_FUZZ_FLOW_H

#include <math.h>

#include "flow/flow_internal.h"
#include "fuzz_common.h"
#include "tenbin/flow.h"
#include "tenbin/model.h"

static tb_platform *fuzz_plat;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fuzz_quiet();
    char err[256];
    if (tb_platform_parse_spec("hosts=3,speed=1-4,L=1ms,G=1e-8", 1, &fuzz_plat, err,
                               sizeof err) != TB_OK)
        abort();
    return 0;
}

/* Relative difference within 1e-9 (sums of file sizes may round). */
static int close_to(double a, double b)
{
    double m = fmax(fabs(a), fabs(b));
    return a == b || fabs(a - b) <= 1e-9 * m;
}

/* What every finalized workflow satisfies; returns 1 if its numbers are
 * moderate (a schedule's arithmetic stays exact enough to check). */
static int check_flow(const tb_flow *f)
{
    size_t n = tb_flow_ntasks(f), q = tb_flow_cost_hosts(f), m = 0;
    int moderate = 1;
    const size_t *off;
    const uint32_t *succ;
    const double *data;
    tb_flow_succ(f, &off, &succ, &data);
    for (size_t t = 0; t < n; t++) {
        size_t ix;
        const char *id = tb_flow_task_id(f, t);
        if (id == NULL || id[0] == '\0' || tb_flow_find(f, id, &ix) != TB_OK || ix != t)
            abort();
        double w = tb_flow_task_work(f, t);
        if (q == 0 && (!isfinite(w) || w < 0))
            abort(); /* tb_flow_add_task's promise: work >= 0 and finite */
        moderate &= q > 0 || w <= 1e9;
        for (size_t h = 0; h < q; h++) {
            double c = f->cost[t * q + h];
            if (!isfinite(c) || c < 0)
                abort();
            moderate &= c <= 1e9;
        }
        if (off[t + 1] < off[t])
            abort();
        for (size_t e = off[t]; e < off[t + 1]; e++) {
            if (succ[e] >= n || succ[e] == t || !(data[e] >= 0) || !isfinite(data[e]))
                abort();
            moderate &= data[e] <= 1e12;
            m++;
        }
        for (int out = 0; out < 2; out++) {
            const uint32_t *files;
            size_t k = tb_flow_task_files(f, t, out, &files);
            for (size_t i = 0; i < k; i++)
                if (files[i] >= tb_flow_nfiles(f) || (i > 0 && files[i] <= files[i - 1]))
                    abort();
        }
        const char *prog = tb_flow_task_program(f, t);
        size_t nargs = tb_flow_task_nargs(f, t);
        if (prog == NULL ? nargs != 0 : prog[0] == '\0')
            abort();
        for (size_t i = 0; i < nargs; i++)
            if (tb_flow_task_arg(f, t, i) == NULL)
                abort();
        if (tb_flow_task_arg(f, t, nargs) != NULL)
            abort();
        long its = tb_flow_its_of(f, t);
        if (its >= (long)tb_flow_nits(f) || (its >= 0 && tb_flow_its_size(f, (size_t)its) < 2))
            abort();
    }
    if (m != tb_flow_nedges(f))
        abort();
    for (size_t i = 0; i < tb_flow_nfiles(f); i++) {
        double s = tb_flow_file_size(f, i);
        if (tb_flow_file_name(f, i) == NULL || !isfinite(s) || s < 0)
            abort();
    }
    return moderate;
}

/* b read back from a's writer: the same tasks, works and edges. */
static void same_flow(const tb_flow *a, const tb_flow *b)
{
    size_t n = tb_flow_ntasks(a);
    if (tb_flow_ntasks(b) != n || tb_flow_nedges(b) != tb_flow_nedges(a))
        abort();
    const size_t *aoff, *boff;
    const uint32_t *asucc, *bsucc;
    const double *adata, *bdata;
    tb_flow_succ(a, &aoff, &asucc, &adata);
    tb_flow_succ(b, &boff, &bsucc, &bdata);
    for (size_t t = 0; t < n; t++) {
        if (strcmp(tb_flow_task_id(a, t), tb_flow_task_id(b, t)) != 0)
            abort();
        if (!close_to(tb__flow_mean_work(a, t), tb__flow_mean_work(b, t)))
            abort();
        if (aoff[t + 1] - aoff[t] != boff[t + 1] - boff[t])
            abort();
        for (size_t e = aoff[t]; e < aoff[t + 1]; e++) {
            size_t k = boff[t];
            while (k < boff[t + 1] && bsucc[k] != asucc[e])
                k++;
            if (k == boff[t + 1] || !close_to(adata[e], bdata[k]))
                abort();
        }
    }
}

static void round_trip(const tb_flow *f)
{
    tb_buf b = TB_BUF_INIT;
    char err[512];
    tb_flow *g = NULL;
    if (tb__flow_write_wfjson(f, &b) != TB_OK)
        abort();
    if (tb_flow_parse((const char *)b.data, b.len, "round-trip.json", TB_FLOW_FORMAT_WFJSON, &g,
                      err, sizeof err) != TB_OK) {
        fprintf(stderr, "round trip through WfFormat: %s\n", err);
        abort();
    }
    same_flow(f, g);
    tb_flow_destroy(&g);
    tb_buf_free(&b);
    if (tb_flow_cost_hosts(f) == 0)
        return;
    if (tb__flow_write_text(f, &b, err, sizeof err) != TB_OK)
        abort();
    if (tb_flow_parse((const char *)b.data, b.len, "round-trip.txt", TB_FLOW_FORMAT_TEXT, &g, err,
                      sizeof err) != TB_OK) {
        fprintf(stderr, "round trip through the text format: %s\n", err);
        abort();
    }
    same_flow(f, g);
    tb_flow_destroy(&g);
    tb_buf_free(&b);
}

static void schedule(const tb_flow *f)
{
    tb_flow_hosts h;
    tb_flow_schedule s;
    char err[512];
    const tb_platform *plat = tb_flow_cost_hosts(f) ? NULL : fuzz_plat;
    if (tb_flow_hosts_init(&h, f, plat) != TB_OK)
        abort();
    if (tb_flow_schedule_init(&s, tb_flow_ntasks(f), h.nhosts) != TB_OK)
        abort();
    const tb_flow_sched_ops *heft = tb_flow_sched_find("heft");
    if (heft->schedule(f, &h, NULL, 1, &s) != TB_OK)
        abort();
    if (tb_flow_schedule_check(f, &h, &s, err, sizeof err) != TB_OK) {
        fprintf(stderr, "HEFT schedule rejected: %s\n", err);
        abort();
    }
    tb_flow_schedule_free(&s);
    tb_flow_hosts_free(&h);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > FUZZ_MAX)
        return 0;
    tb_flow *f = NULL;
    char err[512] = "";
    int rc = tb_flow_parse((const char *)data, size, "fuzz", FUZZ_FLOW_FORMAT, &f, err,
                           sizeof err);
    fuzz_report(rc, err);
    if (rc != TB_OK) {
        if (f != NULL || err[0] == '\0')
            abort(); /* an error leaves *out NULL and says why */
        return 0;
    }
    int moderate = check_flow(f);
    round_trip(f);
    if (moderate && tb_flow_ntasks(f) > 0 && tb_flow_ntasks(f) <= 64 &&
        tb_flow_cost_hosts(f) <= 64)
        schedule(f);
    tb_flow_destroy(&f);
    return 0;
}

#endif /* TB_FUZZ_FLOW_H */
