/*
 * ckpt.c - checkpoints of a distribution (tb_redist_checkpoint,
 * tb_redist_restore): one file that every rank writes its own blocks into,
 * at offsets that follow from the layout, in the one checkpoint format
 * (src/core/ckpt.h), through the run layer's MPI-IO (src/run/file.h).
 *
 * The file: the header (kind "redist-arrays", the run's identity); a meta record
 * (key 0: the iteration, the layout, the arrays' shapes, the balancer's
 * state, and how many data records and bytes follow); then the data records,
 * rank by rank of the layout at the checkpoint, array by array, outer row by
 * row, the units of the block in pieces of at most CHUNK bytes.  The first
 * rank's pieces begin with the low global halo planes and the last rank's end
 * with the high ones (they may hold a boundary condition); the halos between
 * ranks are not kept (a halo exchange refills them).  Each piece names its
 * array, row and first unit in its key, and carries its checksum.  Every
 * offset follows from the meta record, so a reader on any number of ranks
 * reads only the pieces its own block overlaps, and a file cut short or
 * changed is found before anything is used.
 *
 * Written as a snapshot: PATH.tmp by every rank, synced, then renamed over
 * PATH by rank 0.  A kill at any moment leaves the previous checkpoint.
 */
#include "internal.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "core/ckpt.h"
#include "core/strset.h"
#include "run/agree.h"
#include "run/coll.h"
#include "run/file.h"

static const char kind[] = "redist-arrays";
enum { CHUNK = 64 << 20, HEAD = TB__CKPT_REC_HEAD, TAIL = TB__CKPT_REC_TAIL };

int tb_redist_set_identity(tb_redist *r, const char *what)
{
    if (!r)
        return TB_ERR_INVALID;
    return tb__strset(&r->identity, what);
}

static const char *identity_of(const tb_redist *r) { return r->identity ? r->identity : ""; }

/* ---- the pieces ----------------------------------------------------------- */

/* The layout a file was written on, and the arrays' shapes (the current
 * arrays': a restore refuses a file whose arrays differ). */
typedef struct ck_layout {
    int P;
    const uint64_t *counts;
    uint64_t units;
    const rd_array *arrays;
    size_t narrays;
    const uint64_t *chunk; /* [narrays] units per piece */
} ck_layout;

typedef struct ck_piece {
    int rank; /* the rank that wrote it */
    size_t array;
    uint64_t row;
    int64_t first; /* global unit (the low halo's planes are below 0) */
    uint64_t n;    /* units */
    uint64_t off;  /* where its record begins in the file */
    size_t bytes;  /* its data */
} ck_piece;

static uint64_t piece_key(const ck_piece *p, const rd_array *a)
{
    return (uint64_t)p->array << 56 | p->row << 40 | (uint64_t)(p->first + (int64_t)a->hlo);
}

/* The global units a rank's block keeps in a file: its own, with the global
 * edges' halos on the first and last ranks. */
static void kept_range(const ck_layout *L, const rd_array *a, int q, int64_t *lo, int64_t *hi)
{
    int64_t s = (int64_t)tb__rd_start_of(L->counts, q);
    *lo = q == 0 ? -(int64_t)a->hlo : s;
    *hi = s + (int64_t)L->counts[q] + (q == L->P - 1 ? (int64_t)a->hhi : 0);
}

typedef int (*piece_fn)(const ck_piece *p, void *ctx);

/* Every piece of a file in order, from byte `base` on; *end: past the last.
 * Stops at the first fn that does not return TB_OK. */
static int each_piece(const ck_layout *L, uint64_t base, piece_fn fn, void *ctx, uint64_t *end,
                      uint64_t *count)
{
    uint64_t off = base, n = 0;
    for (int q = 0; q < L->P; q++)
        for (size_t i = 0; i < L->narrays; i++) {
            const rd_array *a = &L->arrays[i];
            if (a->not_kept)
                continue;
            int64_t lo, hi;
            kept_range(L, a, q, &lo, &hi);
            for (uint64_t o = 0; o < a->outer; o++)
                for (int64_t g = lo; g < hi; g += (int64_t)L->chunk[i]) {
                    ck_piece p = {q, i, o, g, 0, off, 0};
                    p.n = (uint64_t)(hi - g) < L->chunk[i] ? (uint64_t)(hi - g) : L->chunk[i];
                    p.bytes = p.n * a->inner;
                    if (fn) {
                        int rc = fn(&p, ctx);
                        if (rc != TB_OK)
                            return rc;
                    }
                    off += HEAD + p.bytes + TAIL;
                    n++;
                }
        }
    if (end)
        *end = off;
    if (count)
        *count = n;
    return TB_OK;
}

static uint64_t chunk_of(const rd_array *a)
{
    uint64_t c = CHUNK / (a->inner ? a->inner : 1);
    return c ? c : 1;
}

/* ---- the meta record ------------------------------------------------------ */

static int pack_f64s(tb_buf *b, const double *v, size_t n)
{
    int rc = TB_OK;
    for (size_t i = 0; i < n; i++)
        rc |= tb_buf_pack_f64(b, v[i]);
    return rc;
}

static int pack_cost(tb_buf *b, const tb_redist_cost *c)
{
    return tb_buf_pack_f64(b, c->a) | tb_buf_pack_f64(b, c->b) | tb_buf_pack_u64(b, c->n) |
           tb_buf_pack_f64(b, c->sx) | tb_buf_pack_f64(b, c->sy) | tb_buf_pack_f64(b, c->sxx) |
           tb_buf_pack_f64(b, c->sxy);
}

static int pack_meta(const tb_redist *r, uint64_t iteration, const uint64_t *chunk,
                     uint64_t records, uint64_t data_bytes, tb_buf *b)
{
    int P = r->size;
    int rc = tb_buf_pack_u64(b, iteration) | tb_buf_pack_u32(b, (uint32_t)P) |
             tb_buf_pack_u64(b, r->cfg.units);
    for (int q = 0; q < P; q++)
        rc |= tb_buf_pack_u64(b, r->counts[q]);
    rc |= tb_buf_pack_u32(b, (uint32_t)r->narrays);
    for (size_t i = 0; i < r->narrays; i++) {
        const rd_array *a = &r->arrays[i];
        rc |= tb_buf_pack_bytes(b, a->name, (uint32_t)strlen(a->name));
        rc |= tb_buf_pack_u32(b, (uint32_t)a->ndims) | tb_buf_pack_u32(b, (uint32_t)a->split);
        for (int d = 0; d < RD_MAX_DIMS; d++)
            rc |= tb_buf_pack_u64(b, d < a->ndims ? a->dims[d] : 0);
        rc |= tb_buf_pack_u64(b, a->elem) | tb_buf_pack_u64(b, a->hlo) |
              tb_buf_pack_u64(b, a->hhi) | tb_buf_pack_u64(b, chunk[i]) |
              tb_buf_pack_u32(b, a->not_kept);
    }
    /* the balancer (every rank holds the same: it is computed from an
     * allgather) and the counters */
    rc |= tb_buf_pack_u32(b, (uint32_t)r->probed);
    rc |= pack_f64s(b, r->rb.unit_time, (size_t)P) | pack_f64s(b, r->rb.last_u, 2 * (size_t)P) |
          pack_f64s(b, r->rb.se_u, (size_t)P);
    rc |= tb_buf_pack_u64(b, r->rb.moves) | tb_buf_pack_f64(b, r->rb.factor_sum);
    const tb_redist_stats *st = &r->st;
    rc |= tb_buf_pack_u64(b, st->points) | tb_buf_pack_u64(b, st->moves) |
          tb_buf_pack_u64(b, st->skipped) | tb_buf_pack_u64(b, st->bytes_moved) |
          tb_buf_pack_f64(b, st->move_s) | tb_buf_pack_f64(b, st->probe_s) |
          tb_buf_pack_f64(b, st->move_factor) | pack_cost(b, &st->cost);
    rc |= tb_buf_pack_u64(b, records) | tb_buf_pack_u64(b, data_bytes);
    return rc ? TB_ERR_NOMEM : TB_OK;
}

/* The meta record read back. */
typedef struct ck_meta {
    uint64_t iteration, units, records, data_bytes;
    int P;
    uint64_t *counts;
    size_t narrays;
    rd_array *arrays; /* name, ndims, split, dims, elem, hlo, hhi */
    uint64_t *chunk;
    int probed;
    double *unit_time, *last_u, *se_u;
    uint64_t moves;
    double factor_sum;
    tb_redist_stats st;
} ck_meta;

static void meta_free(ck_meta *m)
{
    free(m->counts);
    free(m->arrays);
    free(m->chunk);
    free(m->unit_time);
    free(m->last_u);
    free(m->se_u);
    memset(m, 0, sizeof *m);
}

static int unpack_f64s(tb_buf *b, double **v, size_t n)
{
    *v = malloc((n ? n : 1) * sizeof **v);
    if (!*v)
        return TB_ERR_NOMEM;
    int rc = TB_OK;
    for (size_t i = 0; i < n && rc == TB_OK; i++)
        rc = tb_buf_unpack_f64(b, &(*v)[i]);
    return rc;
}

static int unpack_cost(tb_buf *b, tb_redist_cost *c)
{
    int rc = tb_buf_unpack_f64(b, &c->a);
    rc = rc ? rc : tb_buf_unpack_f64(b, &c->b);
    rc = rc ? rc : tb_buf_unpack_u64(b, &c->n);
    rc = rc ? rc : tb_buf_unpack_f64(b, &c->sx);
    rc = rc ? rc : tb_buf_unpack_f64(b, &c->sy);
    rc = rc ? rc : tb_buf_unpack_f64(b, &c->sxx);
    return rc ? rc : tb_buf_unpack_f64(b, &c->sxy);
}

static int unpack_array(tb_buf *b, rd_array *a, uint64_t *chunk)
{
    const void *name;
    uint32_t nl, nd, sp;
    int rc = tb_buf_unpack_bytes(b, &name, &nl);
    if (rc == TB_OK) {
        size_t k = nl < sizeof a->name - 1 ? nl : sizeof a->name - 1;
        memcpy(a->name, name, k);
        a->name[k] = '\0';
    }
    rc = rc ? rc : tb_buf_unpack_u32(b, &nd);
    rc = rc ? rc : tb_buf_unpack_u32(b, &sp);
    for (int d = 0; d < RD_MAX_DIMS && rc == TB_OK; d++)
        rc = tb_buf_unpack_u64(b, &a->dims[d]);
    uint64_t elem = 0;
    rc = rc ? rc : tb_buf_unpack_u64(b, &elem);
    rc = rc ? rc : tb_buf_unpack_u64(b, &a->hlo);
    rc = rc ? rc : tb_buf_unpack_u64(b, &a->hhi);
    rc = rc ? rc : tb_buf_unpack_u64(b, chunk);
    rc = rc ? rc : tb_buf_unpack_u32(b, &a->not_kept);
    a->ndims = (int)nd;
    a->split = (int)sp;
    a->elem = (size_t)elem;
    return rc == TB_OK && *chunk > 0 ? TB_OK : TB_ERR_PARSE;
}

static int unpack_meta(const void *data, size_t len, ck_meta *m)
{
    memset(m, 0, sizeof *m);
    tb_buf b = {(unsigned char *)data, len, len, 0};
    uint32_t P = 0, na = 0, probed = 0;
    int rc = tb_buf_unpack_u64(&b, &m->iteration);
    rc = rc ? rc : tb_buf_unpack_u32(&b, &P);
    rc = rc ? rc : tb_buf_unpack_u64(&b, &m->units);
    if (rc != TB_OK || P == 0 || P > len / 8)
        return TB_ERR_PARSE;
    m->P = (int)P;
    m->counts = calloc(P, sizeof *m->counts);
    if (!m->counts)
        return TB_ERR_NOMEM;
    for (uint32_t q = 0; q < P && rc == TB_OK; q++)
        rc = tb_buf_unpack_u64(&b, &m->counts[q]);
    rc = rc ? rc : tb_buf_unpack_u32(&b, &na);
    if (rc != TB_OK || na == 0 || na > len / 8)
        return TB_ERR_PARSE;
    m->narrays = na;
    m->arrays = calloc(na, sizeof *m->arrays);
    m->chunk = calloc(na, sizeof *m->chunk);
    if (!m->arrays || !m->chunk)
        return TB_ERR_NOMEM;
    for (uint32_t i = 0; i < na && rc == TB_OK; i++)
        rc = unpack_array(&b, &m->arrays[i], &m->chunk[i]);
    rc = rc ? rc : tb_buf_unpack_u32(&b, &probed);
    m->probed = (int)probed;
    rc = rc ? rc : unpack_f64s(&b, &m->unit_time, P);
    rc = rc ? rc : unpack_f64s(&b, &m->last_u, 2 * (size_t)P);
    rc = rc ? rc : unpack_f64s(&b, &m->se_u, P);
    rc = rc ? rc : tb_buf_unpack_u64(&b, &m->moves);
    rc = rc ? rc : tb_buf_unpack_f64(&b, &m->factor_sum);
    tb_redist_stats *st = &m->st;
    rc = rc ? rc : tb_buf_unpack_u64(&b, &st->points);
    rc = rc ? rc : tb_buf_unpack_u64(&b, &st->moves);
    rc = rc ? rc : tb_buf_unpack_u64(&b, &st->skipped);
    rc = rc ? rc : tb_buf_unpack_u64(&b, &st->bytes_moved);
    rc = rc ? rc : tb_buf_unpack_f64(&b, &st->move_s);
    rc = rc ? rc : tb_buf_unpack_f64(&b, &st->probe_s);
    rc = rc ? rc : tb_buf_unpack_f64(&b, &st->move_factor);
    rc = rc ? rc : unpack_cost(&b, &st->cost);
    rc = rc ? rc : tb_buf_unpack_u64(&b, &m->records);
    rc = rc ? rc : tb_buf_unpack_u64(&b, &m->data_bytes);
    if (rc == TB_OK && b.pos != len)
        rc = TB_ERR_PARSE;
    return rc == TB_ERR_NOMEM ? rc : rc ? TB_ERR_PARSE : TB_OK;
}

/* ---- writing -------------------------------------------------------------- */

typedef struct ck_write {
    tb_redist *r;
    MPI_File fh;
} ck_write;

/* This rank's pieces, from its blocks. */
static int write_piece(const ck_piece *p, void *ctx)
{
    ck_write *w = ctx;
    tb_redist *r = w->r;
    if (p->rank != r->rank)
        return TB_OK;
    const rd_array *a = &r->arrays[p->array];
    uint64_t s = tb__rd_start_of(r->counts, r->rank);
    size_t ext = tb__rd_extent(a, r->counts[r->rank]);
    const unsigned char *data =
        a->buf + (p->row * ext + (size_t)(p->first - (int64_t)s + (int64_t)a->hlo)) * a->inner;
    unsigned char head[HEAD], tail[TAIL];
    tb__ckpt_record_head(head, piece_key(p, a), (uint32_t)p->bytes);
    tb__ckpt_record_tail(tail, head, data, p->bytes);
    int rc = tb__run_file_write_at(w->fh, p->off, head, HEAD);
    rc = rc ? rc : tb__run_file_write_at(w->fh, p->off + HEAD, data, p->bytes);
    return rc ? rc : tb__run_file_write_at(w->fh, p->off + HEAD + p->bytes, tail, TAIL);
}

/* Rank 0: the header and the meta record, in b. */
static int head_bytes(tb_redist *r, uint64_t iteration, const ck_layout *L, tb_buf *b)
{
    uint64_t records = 0, end = 0;
    each_piece(L, 0, NULL, NULL, &end, &records);
    tb_buf meta;
    tb_buf_init(&meta);
    int rc = tb__ckpt_header(b, kind, identity_of(r));
    rc = rc ? rc : pack_meta(r, iteration, L->chunk, records, end, &meta);
    if (rc == TB_OK && meta.len > UINT32_MAX)
        rc = TB_ERR_RANGE;
    size_t at = b->len;
    if (rc == TB_OK && tb_buf_reserve(b, HEAD + meta.len + TAIL) != TB_OK)
        rc = TB_ERR_NOMEM;
    if (rc == TB_OK) {
        unsigned char *h = b->data + at;
        tb__ckpt_record_head(h, 0, (uint32_t)meta.len);
        memcpy(h + HEAD, meta.data, meta.len);
        tb__ckpt_record_tail(h + HEAD + meta.len, h, meta.data, meta.len);
        b->len = at + HEAD + meta.len + TAIL;
    }
    tb_buf_free(&meta);
    return rc;
}

/* Every rank's line of the first rank that failed; rank 0 logs it. */
static int agreed(tb_redist *r, int rc, char *err, size_t errlen)
{
    rc = tb__run_first_error(r->comm, rc, err, errlen);
    if (rc != TB_OK) {
        if (r->rank == 0)
            TB__ERR_H(r, "%s", err);
        else
            snprintf(r->err, sizeof r->err, "%s", err);
    }
    return rc;
}

static int checkpoint(tb_redist *r, const char *path, uint64_t iteration, char *err, size_t errlen)
{
    uint64_t *chunk = malloc(r->narrays * sizeof *chunk);
    int rc = chunk ? TB_OK : TB_ERR_NOMEM;
    for (size_t i = 0; chunk && i < r->narrays; i++)
        chunk[i] = chunk_of(&r->arrays[i]);
    ck_layout L = {r->size, r->counts, r->cfg.units, r->arrays, r->narrays, chunk};
    tb_buf h;
    tb_buf_init(&h);
    if (rc == TB_OK && r->rank == 0)
        rc = head_bytes(r, iteration, &L, &h);
    if (rc != TB_OK)
        tb__errf(err, errlen, rc, "%s: cannot write: %s", path, tb_strerror(rc));
    rc = agreed(r, rc, err, errlen);
    uint64_t base = h.len;
    char *tmp = NULL;
    if (rc == TB_OK) {
        tb__run_bcast(r->comm, &base, sizeof base);
        size_t n = strlen(path);
        tmp = malloc(n + 5);
        rc = tmp ? TB_OK : TB_ERR_NOMEM;
        if (tmp)
            snprintf(tmp, n + 5, "%s.tmp", path);
        rc = agreed(r, rc, err, errlen);
    }
    MPI_File fh = MPI_FILE_NULL;
    if (rc == TB_OK)
        rc = agreed(r, tb__run_file_create(r->comm, tmp, &fh, err, errlen), err, errlen);
    if (rc == TB_OK) {
        ck_write w = {r, fh};
        int wr = r->rank == 0 ? tb__run_file_write_at(fh, 0, h.data, h.len) : TB_OK;
        wr = wr ? wr : each_piece(&L, base, write_piece, &w, NULL, NULL);
        int cl = tb__run_file_close(r->comm, &fh, 1);
        if (wr != TB_OK || cl != TB_OK)
            tb__errf(err, errlen, TB_ERR_IO, "%s: cannot write%s", tmp,
                     wr != TB_OK ? "" : " (sync or close failed)");
        rc = agreed(r, wr != TB_OK ? wr : cl, err, errlen);
    }
    if (rc == TB_OK) {
        int mv = r->rank == 0 ? tb__ckpt_rename(tmp, path, err, errlen) : TB_OK;
        rc = agreed(r, mv, err, errlen);
    }
    if (rc != TB_OK && tmp)
        tb__run_file_remove(r->comm, tmp);
    free(tmp);
    free(chunk);
    tb_buf_free(&h);
    return rc;
}

int tb_redist_checkpoint(tb_redist *r, const char *path, uint64_t iteration)
{
    if (!r || !path || !path[0])
        return TB_ERR_INVALID;
    tb__rd_enter(r);
    tb__rd_follow_pointers(r);
    char err[TB__ERR_LINE] = "";
    double t0 = tb_wtime();
    int rc = checkpoint(r, path, iteration, err, sizeof err);
    r->st.checkpoints++;
    r->st.checkpoint_s += tb_wtime() - t0;
    if (rc == TB_OK)
        TB_LOG_DEBUG("redist: checkpoint of iteration %" PRIu64 " to %s in %.3f s", iteration, path,
                     tb_wtime() - t0);
    tb__rd_leave(r);
    return rc;
}

/* ---- reading -------------------------------------------------------------- */

/* Rank 0: the header and the meta record; *base: where the pieces begin. */
static int read_head(MPI_File fh, const char *path, const char *identity, tb_buf *meta,
                     uint64_t *base, uint64_t *size, char *err, size_t errlen)
{
    if (tb__run_file_size(fh, size) != TB_OK)
        return tb__errf(err, errlen, TB_ERR_IO, "%s: cannot read its size", path);
    size_t want = *size < (1u << 20) ? (size_t)*size : (1u << 20), got = 0, end = 0;
    unsigned char *pre = malloc(want ? want : 1);
    if (!pre)
        return TB_ERR_NOMEM;
    int rc = tb__run_file_read_at(fh, 0, pre, want, &got);
    if (rc != TB_OK)
        rc = tb__errf(err, errlen, TB_ERR_IO, "%s: cannot read", path);
    rc = rc ? rc : tb__ckpt_header_check(path, pre, got, kind, identity, &end, err, errlen);
    free(pre);
    unsigned char hd[HEAD];
    if (rc == TB_OK && (tb__run_file_read_at(fh, end, hd, HEAD, &got) != TB_OK || got != HEAD))
        rc = tb__errf(err, errlen, TB_ERR_PARSE, "%s: truncated after its header", path);
    size_t n = rc == TB_OK ? tb__ckpt_record_len(hd) : 0;
    if (rc == TB_OK && n > *size)
        rc = tb__errf(err, errlen, TB_ERR_PARSE, "%s: its first record is damaged", path);
    if (rc == TB_OK && tb_buf_reserve(meta, HEAD + n + TAIL) != TB_OK)
        rc = TB_ERR_NOMEM;
    uint64_t key = 1;
    size_t len = 0;
    if (rc == TB_OK && (tb__run_file_read_at(fh, end, meta->data, HEAD + n + TAIL, &got) != TB_OK ||
                        !tb__ckpt_record_check(meta->data, got, &key, &len) || key != 0))
        rc = tb__errf(err, errlen, TB_ERR_PARSE, "%s: its first record is damaged or cut short",
                      path);
    if (rc == TB_OK) {
        memmove(meta->data, meta->data + HEAD, len);
        meta->len = len;
        *base = end + HEAD + len + TAIL;
    }
    return rc;
}

/* The file's arrays must be these, and its size what its records say. */
static int check_meta(const tb_redist *r, const ck_meta *m, const char *path, uint64_t base,
                      uint64_t size, char *err, size_t errlen)
{
    if (m->units != r->cfg.units || m->narrays != r->narrays)
        return tb__errf(err, errlen, TB_ERR_INVALID,
                        "%s: a checkpoint of %zu array(s) of %" PRIu64
                        " units, not of these %zu of %" PRIu64,
                        path, m->narrays, m->units, r->narrays, r->cfg.units);
    for (size_t i = 0; i < r->narrays; i++) {
        const rd_array *a = &r->arrays[i], *b = &m->arrays[i];
        int same = strcmp(a->name, b->name) == 0 && a->ndims == b->ndims && a->split == b->split &&
                   a->elem == b->elem && a->hlo == b->hlo && a->hhi == b->hhi &&
                   a->not_kept == b->not_kept;
        for (int d = 0; same && d < a->ndims; d++)
            same = a->dims[d] == b->dims[d];
        if (!same)
            return tb__errf(err, errlen, TB_ERR_INVALID,
                            "%s: its array %zu (%s) differs from this run's (%s): shape, "
                            "element size, halos, or whether it is kept",
                            path, i + 1, b->name, a->name);
    }
    uint64_t sum = 0;
    for (int q = 0; q < m->P; q++) {
        if (m->counts[q] == 0)
            return tb__errf(err, errlen, TB_ERR_PARSE, "%s: its layout is damaged", path);
        sum += m->counts[q];
    }
    if (sum != m->units)
        return tb__errf(err, errlen, TB_ERR_PARSE, "%s: its layout is damaged", path);
    ck_layout L = {m->P, m->counts, m->units, r->arrays, r->narrays, m->chunk};
    uint64_t end = 0, records = 0;
    each_piece(&L, base, NULL, NULL, &end, &records);
    if (records != m->records || end - base != m->data_bytes)
        return tb__errf(err, errlen, TB_ERR_PARSE, "%s: its first record is damaged", path);
    if (size != end)
        return tb__errf(err, errlen, TB_ERR_PARSE,
                        "%s: %s (%" PRIu64 " bytes where its records make %" PRIu64 ")", path,
                        size < end ? "truncated" : "has bytes after its last record", size, end);
    return TB_OK;
}

typedef struct ck_read {
    tb_redist *r;
    MPI_File fh;
    const char *path;
    unsigned char *tmp;
    size_t cap;
    char *err;
    size_t errlen;
} ck_read;

/* The part of a piece this rank's new block keeps. */
static int read_piece(const ck_piece *p, void *ctx)
{
    ck_read *c = ctx;
    tb_redist *r = c->r;
    const rd_array *a = &r->arrays[p->array];
    ck_layout me = {r->size, r->counts, r->cfg.units, NULL, 0, NULL};
    int64_t lo, hi;
    kept_range(&me, a, r->rank, &lo, &hi);
    int64_t from = p->first > lo ? p->first : lo;
    int64_t to = p->first + (int64_t)p->n < hi ? p->first + (int64_t)p->n : hi;
    if (from >= to)
        return TB_OK;
    size_t size = HEAD + p->bytes + TAIL, got = 0, len = 0;
    if (size > c->cap) {
        unsigned char *t = realloc(c->tmp, size);
        if (!t)
            return TB_ERR_NOMEM;
        c->tmp = t;
        c->cap = size;
    }
    uint64_t key = 0;
    if (tb__run_file_read_at(c->fh, p->off, c->tmp, size, &got) != TB_OK ||
        !tb__ckpt_record_check(c->tmp, got, &key, &len) || key != piece_key(p, a) ||
        len != p->bytes)
        return tb__errf(c->err, c->errlen, TB_ERR_PARSE,
                        "%s: the record at byte %" PRIu64 " (array %s) is damaged: the file "
                        "was changed or its disk failed",
                        c->path, p->off, a->name);
    uint64_t s = tb__rd_start_of(r->counts, r->rank);
    size_t ext = tb__rd_extent(a, r->counts[r->rank]);
    unsigned char *dst =
        a->buf + (p->row * ext + (size_t)(from - (int64_t)s + (int64_t)a->hlo)) * a->inner;
    memcpy(dst, c->tmp + HEAD + (size_t)(from - p->first) * a->inner,
           (size_t)(to - from) * a->inner);
    return TB_OK;
}

/* Rank 0 reads and checks the header and meta record; every rank gets it. */
static int load_meta(tb_redist *r, MPI_File fh, const char *path, ck_meta *m, uint64_t *base,
                     char *err, size_t errlen)
{
    tb_buf meta;
    tb_buf_init(&meta);
    uint64_t size = 0;
    int rc = TB_OK;
    if (r->rank == 0) {
        rc = read_head(fh, path, identity_of(r), &meta, base, &size, err, errlen);
        if (rc == TB_OK && (rc = unpack_meta(meta.data, meta.len, m)) != TB_OK)
            tb__errf(err, errlen, rc, "%s: its first record is damaged", path);
        if (rc == TB_OK)
            rc = check_meta(r, m, path, *base, size, err, errlen);
        meta_free(m);
    }
    rc = agreed(r, rc, err, errlen);
    uint64_t hdr[2] = {*base, meta.len};
    if (rc == TB_OK) {
        tb__run_bcast(r->comm, hdr, sizeof hdr);
        if (r->rank != 0 && tb_buf_reserve(&meta, (size_t)hdr[1]) != TB_OK)
            rc = TB_ERR_NOMEM;
        rc = agreed(r, rc, err, errlen);
    }
    if (rc == TB_OK) {
        tb__run_bcast(r->comm, meta.data, (size_t)hdr[1]);
        *base = hdr[0];
        rc = unpack_meta(meta.data, (size_t)hdr[1], m);
        rc = agreed(r, rc, err, errlen);
    }
    tb_buf_free(&meta);
    return rc;
}

/* The layout of the file when it has as many ranks, else the one now; every
 * block fresh (the file fills it). */
static int take_layout(tb_redist *r, const ck_meta *m)
{
    const uint64_t *want = m->P == r->size ? m->counts : r->counts;
    uint64_t c = want[r->rank];
    int ok = 1;
    for (size_t i = 0; i < r->narrays; i++) {
        rd_array *a = &r->arrays[i];
        size_t n = tb__rd_block_bytes(a, c);
        unsigned char *p = tb__rd_blk_alloc(n);
        if (!p) {
            ok = 0;
            continue;
        }
        tb__rd_blk_free(a->buf, a->bytes);
        a->buf = p;
        a->bytes = n;
        *a->data = p;
    }
    tb__run_min_int(r->comm, &ok, 1);
    if (!ok)
        return TB_ERR_NOMEM;
    memcpy(r->counts, want, (size_t)r->size * sizeof *want);
    tb__rd_sync_vars(r);
    return TB_OK;
}

/* The counters go on; the balancer as it was when the ranks are as many
 * (its speeds are per rank), else a new probe. */
static int take_balancer(tb_redist *r, const ck_meta *m)
{
    size_t P = (size_t)r->size;
    tb_redist_stats st = m->st;
    st.peak_extra_bytes = r->st.peak_extra_bytes; /* this rank's, of this run */
    st.checkpoints = r->st.checkpoints;
    st.checkpoint_s = r->st.checkpoint_s;
    st.probe_s += r->st.probe_s;
    if (m->P != r->size || !m->probed) {
        st.cost = r->st.cost;
        st.move_factor = r->st.move_factor;
        r->st = st;
        int rc = r->cfg.mode != TB_REDIST_OFF || r->probed ? tb__rd_probe(r) : TB_OK;
        tb__rd_start_measure(r, m->iteration);
        return rc;
    }
    r->st = st;
    memcpy(r->rb.unit_time, m->unit_time, P * sizeof *m->unit_time);
    memcpy(r->rb.last_u, m->last_u, 2 * P * sizeof *m->last_u);
    memcpy(r->rb.se_u, m->se_u, P * sizeof *m->se_u);
    for (size_t q = 0; q < P; q++)
        r->rb.speeds[q] = m->unit_time[q] > 0 ? 1 / m->unit_time[q] : 0;
    r->rb.moves = m->moves;
    r->rb.factor_sum = m->factor_sum;
    r->probed = 1;
    tb__rb_window_clear(&r->win);
    r->last_iter = m->iteration;
    r->mark_call = 1;
    return TB_OK;
}

static int restore(tb_redist *r, const char *path, uint64_t *iteration, char *err, size_t errlen)
{
    MPI_File fh = MPI_FILE_NULL;
    int rc = agreed(r, tb__run_file_open(r->comm, path, &fh, err, errlen), err, errlen);
    if (rc != TB_OK)
        return rc;
    ck_meta m;
    memset(&m, 0, sizeof m);
    uint64_t base = 0;
    rc = load_meta(r, fh, path, &m, &base, err, errlen);
    if (rc == TB_OK)
        rc = agreed(r, take_layout(r, &m), err, errlen);
    if (rc == TB_OK) {
        ck_read c = {r, fh, path, NULL, 0, err, errlen};
        ck_layout L = {m.P, m.counts, m.units, r->arrays, r->narrays, m.chunk};
        rc = each_piece(&L, base, read_piece, &c, NULL, NULL);
        if (rc == TB_ERR_NOMEM)
            tb__errf(err, errlen, rc, "%s: no memory to read it", path);
        free(c.tmp);
        rc = agreed(r, rc, err, errlen);
    }
    tb__run_file_close(r->comm, &fh, 0);
    if (rc == TB_OK)
        rc = take_balancer(r, &m);
    if (rc == TB_OK)
        rc = tb__rd_halo_exchange(r);
    if (rc == TB_OK) {
        *iteration = m.iteration;
        TB_LOG_INFO("redist: resumed from %s at iteration %" PRIu64 " (%d ranks then, %d now)",
                    path, m.iteration, m.P, r->size);
    }
    meta_free(&m);
    return rc;
}

int tb_redist_restore(tb_redist *r, const char *path, uint64_t *iteration)
{
    if (!r || !path || !path[0] || !iteration)
        return TB_ERR_INVALID;
    tb__rd_enter(r);
    tb__rd_follow_pointers(r);
    char err[TB__ERR_LINE] = "";
    int rc = restore(r, path, iteration, err, sizeof err);
    tb__rd_leave(r);
    return rc;
}
