/*
 * keep.c - the checkpoint of a search's open subproblems (kind "bnb-open",
 * the one format of src/core/ckpt.h, written as a snapshot): written by
 * the supervisor of a parallel run (supervisor.c, with its masters' KEEP
 * messages) and by the sequential search (bnb.c), read by either at
 * --resume.  One writer and one reader for both is what lets a checkpoint
 * of one rank resume on many and back.
 *
 * Records: CKPT_SUB per open subproblem (its wire form, tb__bnb_pack_sub:
 * f64 bound in minimisation sense, u32 depth, bytes), then CKPT_META (f64
 * incumbent in minimisation sense, +inf if none; u64 nodes expanded by the
 * runs so far) and, with an incumbent, CKPT_SOLUTION (its bytes).
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>

#include "bnb/roles.h"

enum { CKPT_META = 0, CKPT_SOLUTION = 1, CKPT_SUB = 2 };

int tb__bnb_keep_open(tb_bnb *b, tb__bnb_keep *k)
{
    char err[TB__ERR_LINE];
    k->kept = 0;
    int rc = tb__ckpt_snapshot_open(&k->w, b->ckpt_path, "bnb-open", b->ckpt_identity, err,
                                    sizeof err);
    if (rc != TB_OK) {
        TB__ERR_H(b, "%s", err);
        return rc;
    }
    k->open = 1;
    return TB_OK;
}

int tb__bnb_keep_sub(tb__bnb_keep *k, double bound, uint32_t depth, const void *data, size_t len)
{
    tb_buf r = TB_BUF_INIT;
    int rc = tb__bnb_pack_sub(&r, bound, depth, data, len);
    if (rc == TB_OK)
        rc = tb__ckpt_add(&k->w, CKPT_SUB, r.data, r.len);
    tb_buf_free(&r);
    k->kept += rc == TB_OK;
    return rc;
}

int tb__bnb_keep_heap(tb__bnb_keep *k, const tb__bnb_heap *h, double cutoff)
{
    for (size_t i = 0; i < h->n; i++) {
        const tb__bnb_sub *s = &h->a[i];
        if (s->bound < cutoff)
            TB_CHECK(tb__bnb_keep_sub(k, s->bound, s->depth, s->data, s->len));
    }
    return TB_OK;
}

int tb__bnb_keep_close(tb_bnb *b, tb__bnb_keep *k, const tb__bnb_engine *e, uint64_t nodes,
                       uint64_t round)
{
    tb_buf m = TB_BUF_INIT;
    int rc = tb_buf_pack_f64(&m, e->inc);
    rc |= tb_buf_pack_u64(&m, nodes);
    if (rc == TB_OK)
        rc = tb__ckpt_add(&k->w, CKPT_META, m.data, m.len);
    if (rc == TB_OK && isfinite(e->inc))
        rc = tb__ckpt_add(&k->w, CKPT_SOLUTION, e->sol.data, e->sol.len);
    tb_buf_free(&m);
    char err[TB__ERR_LINE];
    k->open = 0;
    int crc = tb__ckpt_close(&k->w, rc == TB_OK, err, sizeof err);
    if (rc != TB_OK || crc != TB_OK) {
        TB__ERR_H(b, "%s", crc != TB_OK ? err : "cannot build the checkpoint");
        return rc != TB_OK ? rc : crc;
    }
    const char *path = b->ckpt_path;
    if (round)
        TB_LOG_INFO("bnb: checkpoint %" PRIu64 ": %" PRIu64 " open subproblems in %s (%" PRIu64
                    " nodes so far)", round, k->kept, path, nodes);
    else if (k->kept)
        TB_LOG_WARN("bnb: %" PRIu64 " open subproblems kept in %s: --resume %s continues the "
                    "search (%" PRIu64 " nodes so far)", k->kept, path, path, nodes);
    else
        TB_LOG_INFO("bnb: %s holds the finished search (%" PRIu64 " nodes)", path, nodes);
    return TB_OK;
}

void tb__bnb_keep_drop(tb__bnb_keep *k)
{
    if (k->open) /* a run that failed: the old checkpoint stays as it was */
        tb__ckpt_close(&k->w, 0, NULL, 0);
    k->open = 0;
}

int tb__bnb_keep_load(tb_bnb *b, tb__bnb_heap *h, double *inc, const void **sol, size_t *sol_len,
                      uint64_t *nodes_before)
{
    tb__ckpt_reader *r = &b->resume;
    uint64_t key;
    const void *d;
    size_t n;
    int rc = TB_OK;
    *inc = INFINITY;
    *sol = NULL;
    *sol_len = 0;
    *nodes_before = 0;
    r->at = b->resume_first;
    /* read whole and checked before the run: no damaged record here */
    while (rc == TB_OK && tb__ckpt_next(r, &key, &d, &n, NULL, 0) == 1) {
        tb_buf in;
        tb_buf_view(&in, d, n);
        if (key == CKPT_SUB) {
            tb__bnb_sub sub;
            rc = tb__bnb_unpack_sub(&in, &sub);
            if (rc == TB_OK && (rc = tb__bnb_heap_push(h, sub)) != TB_OK)
                free(sub.data);
        } else if (key == CKPT_META) {
            rc = tb_buf_unpack_f64(&in, inc);
            if (rc == TB_OK)
                rc = tb_buf_unpack_u64(&in, nodes_before);
        } else if (key == CKPT_SOLUTION) {
            *sol = d;
            *sol_len = n;
        }
    }
    if (rc != TB_OK)
        TB__ERR_H(b, "%s: cannot take its subproblems back: %s", r->path, tb_strerror(rc));
    else
        TB_LOG_INFO("bnb: resumed %zu open subproblems (incumbent %.10g, %" PRIu64
                    " nodes before)", h->n, tb__bnb_outward(b, *inc), *nodes_before);
    return rc;
}
