/*
 * fuzz_bnb.h - the body of the branch-and-bound instance harnesses
 * (fuzz_bnb_knapsack.c, fuzz_bnb_tsp.c, fuzz_bnb_bmi.c): the problem's
 * load() on the input as a file, then, for an instance small enough
 * (fuzz_bnb_small, defined by the includer), the root's bound and a short
 * sequential search, whose incumbent check() must accept.
 *
 * The includer defines FUZZ_BNB_PROBLEM (a tb_bnb_problem) and
 * fuzz_bnb_small(ctx, data, size), and may define FUZZ_BNB_SKIP(data, size)
 * (non-zero: the input is not loaded at all).
 */
#ifndef TB_FUZZ_BNB_H
#define TB_FUZZ_BNB_H

#include <math.h>

#include "../../apps/bnb/problems.h"
#include "bnb/bnb_internal.h"
#include "fuzz_common.h"

static int fuzz_bnb_small(void *ctx, const uint8_t *data, size_t size);
#ifndef FUZZ_BNB_SKIP
#define FUZZ_BNB_SKIP(data, size) 0
#endif

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fuzz_quiet();
    return 0;
}

/* The root's bound, then up to 30 nodes of the sequential search. */
static void search(const tb_bnb_problem *pb, void *ctx)
{
    int rc;
    tb__bnb_engine e;
    tb__bnb_engine_init(&e, pb->ops, ctx, pb->default_gap);
    double left;
    int proven;
    rc = tb__bnb_serial(&e, 30, 0, &left, &proven);
    if (rc == TB_OK && e.sol.len > 0) {
        double value = e.max ? -e.inc : e.inc;
        if (pb->check(ctx, e.sol.data, e.sol.len, value) != TB_OK) {
            fprintf(stderr, "%s: the search's incumbent (%.17g) does not check\n", pb->name,
                    value);
            abort();
        }
        tb_buf json = TB_BUF_INIT;
        if (pb->solution_json(ctx, e.sol.data, e.sol.len, &json) != TB_OK)
            abort();
        tb_buf_free(&json);
    }
    tb__bnb_engine_free(&e);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > FUZZ_MAX || FUZZ_BNB_SKIP(data, size))
        return 0;
    const tb_bnb_problem *pb = &FUZZ_BNB_PROBLEM;
    const char *path = fuzz_file(data, size);
    void *ctx = NULL;
    char err[512] = "";
    int rc = pb->load(path, &ctx, err, sizeof err);
    fuzz_report(rc, err);
    if (rc != TB_OK) {
        if (err[0] == '\0')
            abort(); /* an error says why */
        return 0;
    }
    if (pb->view_json) {
        tb_buf v = TB_BUF_INIT;
        if (pb->view_json(ctx, &v) != TB_OK)
            abort();
        tb_buf_free(&v);
    }
    if (fuzz_bnb_small(ctx, data, size))
        search(pb, ctx);
    pb->destroy(ctx);
    return 0;
}

#endif /* TB_FUZZ_BNB_H */
