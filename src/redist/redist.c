#if defined(__linux__)
#define _GNU_SOURCE /* mremap */
#else
#define _POSIX_C_SOURCE 200809L
#endif
/*
 * redist.c - S4's distributed side: arrays on one block distribution, the
 * speed measure, the transfer-cost probe, balancing points, the move and
 * halo exchange.  The arithmetic of a plan is in plan.c.
 *
 * Memory during a move: units leave from where they are (MPI vector types,
 * no packing), arrive in a buffer of their own size, then each rank re-lays
 * its block in place (realloc, then memmove of the kept rows in an order
 * that never overwrites a row still to be moved) and copies the arrivals in.
 * The paper's implementation needed three times the array.
 *
 * Blocks are mapped pages on Linux and grow or shrink with mremap: the
 * kernel moves page tables, so a block grows without a copy and without
 * touching its existing pages (realloc would copy blocks below glibc's mmap
 * threshold, up to 32 MiB, and fault in every new page: a 2-rank Himeno M
 * move spent 90 ms there).  Elsewhere calloc/realloc.
 */
#include "tenbin/redist.h"

#include "internal.h"
#include "core/refuse.h"
#include "run/coll.h"
#include "run/xfer.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif

/* ---- block storage ------------------------------------------------------- */

#if defined(__linux__)
static size_t page_round(size_t n)
{
    size_t ps = (size_t)sysconf(_SC_PAGESIZE);
    return ((n ? n : 1) + ps - 1) / ps * ps;
}

/* Zero-filled, its pages mapped at once: one call instead of a page fault
 * per 4 KiB on first touch (on virtual machines a fault can cost 10 us, and
 * a move that received into fresh memory spent most of its time there). */
void *tb__rd_blk_alloc(size_t n)
{
    void *p = mmap(NULL, page_round(n), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

static void *blk_resize(void *p, size_t old, size_t n)
{
    size_t po = page_round(old), pn = page_round(n);
    if (po == pn)
        return p;
    unsigned char *q = mremap(p, po, pn, MREMAP_MAYMOVE);
    if (q == MAP_FAILED || !q) { /* NULL: a hook's failure (fixed_remap_works) */
        /* A block re-laid by moving pages is several mappings, which one
         * mremap cannot resize: copy instead. */
        q = tb__rd_blk_alloc(n);
        if (!q)
            return NULL;
        memcpy(q, p, (po < pn ? po : pn));
        munmap(p, po);
        return q;
    }
#ifdef MADV_POPULATE_WRITE
    if (pn > po) /* best effort: older kernels fault the pages in on use */
        madvise(q + po, pn - po, MADV_POPULATE_WRITE);
#endif
    return q;
}

void tb__rd_blk_free(void *p, size_t n)
{
    if (p)
        munmap(p, page_round(n));
}

/* Move the pages [src, src + len) to dst.  A block re-laid before is made of
 * several mappings, and one mremap cannot span two: split the range until
 * each piece lies in one.  Each page moves once, so a failure leaves every
 * page either at its old or at its new place. */
static int move_pages(unsigned char *src, unsigned char *dst, size_t len, size_t ps)
{
    if (mremap(src, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, dst) == (void *)dst)
        return 0;
    if (len <= ps) {
        TB_LOG_DEBUG("redist: mremap of a page %p -> %p failed: %s", (void *)src, (void *)dst,
                     strerror(errno));
        return -1;
    }
    size_t half = len / ps / 2 * ps;
    return move_pages(src, dst, half, ps) ? -1 : move_pages(src + half, dst + half, len - half, ps);
}

/* Whether mremap(MREMAP_FIXED) moves pages in this process.  An MPI
 * library may hook mremap and lose the fixed address: UCX's memory events
 * (MPICH's ch4:ucx on Debian 12) return NULL and move nothing, which a
 * check against MAP_FAILED takes for success -- a move then left zeros
 * where the data was.  Tried once on scratch pages; if it does not work,
 * blocks are re-laid by copying. */
static int fixed_remap_works(void)
{
    static int works = -1;
    if (works >= 0)
        return works;
    size_t ps = (size_t)sysconf(_SC_PAGESIZE);
    unsigned char *a = mmap(NULL, 3 * ps, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                            -1, 0);
    if (a == MAP_FAILED)
        return 0; /* not known: not now */
    a[0] = 42;
    void *q = mremap(a, ps, ps, MREMAP_MAYMOVE | MREMAP_FIXED, a + 2 * ps);
    works = q == (void *)(a + 2 * ps) && a[2 * ps] == 42;
    munmap(a, 3 * ps);
    if (!works)
        TB_LOG_DEBUG("redist: mremap cannot move pages to a fixed address here (a hook of the "
                     "MPI library?): blocks are re-laid by copying");
    return works;
}

/* Re-lay by moving pages instead of bytes when rows and offsets are whole
 * pages (Himeno's planes are: 8 KiB at XS to 512 KiB at L): each kept row is
 * remapped into a new mapping at its new offset, nothing is copied.
 * Returns 1 if done, 0 if not applicable, -1 on failure (data may have
 * moved: fatal). */
static int blk_relayout_pages(unsigned char **buf, size_t *bytes, size_t nbytes, size_t rows,
                              size_t ostride, size_t nstride, size_t so, size_t sn, size_t len)
{
    size_t ps = (size_t)sysconf(_SC_PAGESIZE);
    if (ostride % ps || nstride % ps || so % ps || sn % ps || len % ps || len == 0 ||
        !fixed_remap_works())
        return 0;
    unsigned char *nb = mmap(NULL, page_round(nbytes), PROT_READ | PROT_WRITE,
                             MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (nb == MAP_FAILED)
        return 0;
    for (size_t o = 0; o < rows; o++)
        if (move_pages(*buf + o * ostride + so, nb + o * nstride + sn, len, ps))
            return -1;
    munmap(*buf, page_round(*bytes));
#ifdef MADV_POPULATE_WRITE
    madvise(nb, page_round(nbytes), MADV_POPULATE_WRITE); /* the pages not moved in */
#endif
    *buf = nb;
    *bytes = nbytes;
    return 1;
}
#else
void *tb__rd_blk_alloc(size_t n) { return calloc(1, n ? n : 1); }
static void *blk_resize(void *p, size_t old, size_t n)
{
    (void)old;
    return realloc(p, n ? n : 1);
}
void tb__rd_blk_free(void *p, size_t n)
{
    (void)n;
    free(p);
}

static int blk_relayout_pages(unsigned char **buf, size_t *bytes, size_t nbytes, size_t rows,
                              size_t ostride, size_t nstride, size_t so, size_t sn, size_t len)
{
    (void)buf, (void)bytes, (void)nbytes, (void)rows, (void)ostride, (void)nstride, (void)so;
    (void)sn, (void)len;
    return 0;
}
#endif

/* ---- time accounting ---------------------------------------------------- */

void tb__rd_enter(tb_redist *r)
{
    if (r->depth++ == 0)
        r->t_enter = tb_wtime();
}

void tb__rd_leave(tb_redist *r)
{
    if (--r->depth > 0)
        return;
    double now = tb_wtime();
    r->t_excluded += now - r->t_enter;
    if (r->mark_call) {
        r->t_call = now;
        r->x_call = r->t_excluded;
        r->mark_call = 0;
    }
}

void tb_redist_pause(tb_redist *r)
{
    if (r && r->t_pause < 0)
        r->t_pause = tb_wtime();
}

void tb_redist_resume(tb_redist *r)
{
    if (r && r->t_pause >= 0) {
        r->t_excluded += tb_wtime() - r->t_pause;
        r->t_pause = -1;
    }
}

/* ---- creation ------------------------------------------------------------ */

void tb_redist_opts_init(tb_redist_opts *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->size = sizeof *cfg;
    cfg->threshold = 1.05;
    cfg->interval = 10;
    cfg->mode = TB_REDIST_PREDICT;
    cfg->probe_repeats = 5;
    cfg->smoothing = 0.5;
    cfg->guards = TB_REDIST_GUARD_NOISE | TB_REDIST_GUARD_CHANGE;
}

static int config_ok(const tb_redist_opts *c, int size)
{
    const char *bad = c->units == 0                              ? "units must be > 0"
                      : !(c->threshold >= 1)                     ? "threshold must be >= 1"
                      : c->interval == 0                         ? "interval must be >= 1"
                      : !(c->smoothing > 0) || c->smoothing > 1 ? "smoothing must be in (0, 1]"
                      : c->probe_repeats < 1                     ? "probe_repeats must be >= 1"
                      : (c->guards & ~(unsigned)(TB_REDIST_GUARD_NOISE | TB_REDIST_GUARD_CHANGE))
                          ? "guards holds an unknown TB_REDIST_GUARD_* bit"
                      : (c->mode != TB_REDIST_PREDICT && c->mode != TB_REDIST_NO_PREDICT &&
                         c->mode != TB_REDIST_OFF)
                          ? "mode must be TB_REDIST_PREDICT, TB_REDIST_NO_PREDICT or TB_REDIST_OFF"
                      : !(c->probe_bytes[0] >= 0 && c->probe_bytes[1] >= 0 &&
                          c->probe_bytes[2] >= 0)
                          ? "probe_bytes must be >= 0"
                          : NULL;
    if (bad) {
        TB_LOG_ERR("redist: invalid configuration: %s (units %" PRIu64 ", threshold %g, interval "
                   "%" PRIu64 ", smoothing %g, mode %d)", bad, c->units, c->threshold,
                   c->interval, c->smoothing, c->mode);
        return TB_ERR_INVALID;
    }
    if ((uint64_t)size > c->units) {
        TB_LOG_ERR("redist: %" PRIu64 " units cannot give %d ranks one each", c->units, size);
        return TB_ERR_SIZE;
    }
    if (c->initial_counts) {
        uint64_t sum = 0;
        for (int i = 0; i < size; i++) {
            if (c->initial_counts[i] == 0) {
                TB_LOG_ERR("redist: initial count of rank %d is 0 (every rank needs a unit)", i);
                return TB_ERR_INVALID;
            }
            sum += c->initial_counts[i];
        }
        if (sum != c->units) {
            TB_LOG_ERR("redist: initial counts sum to %" PRIu64 ", not the %" PRIu64 " units",
                       sum, c->units);
            return TB_ERR_INVALID;
        }
    }
    return TB_OK;
}

int tb_redist_create(tb_redist **out, MPI_Comm comm, const tb_redist_opts *cfg)
{
    if (!cfg || !out)
        return TB_ERR_INVALID;
    *out = NULL;
    if (cfg->size < sizeof *cfg) {
        TB_LOG_ERR("redist: options not set up by tb_redist_opts_init");
        return TB_ERR_INVALID;
    }
    int size, rank;
    tb__run_comm_info(comm, &rank, &size);
    int rc = config_ok(cfg, size);
    if (rc != TB_OK)
        return rc;
    tb_redist *r = calloc(1, sizeof *r);
    if (!r)
        return TB_ERR_NOMEM;
    r->cfg = *cfg;
    r->cfg.initial_counts = NULL;
    r->cfg.record = NULL;
    if (rank == 0 && cfg->record && !(r->record_path = strdup(cfg->record))) {
        tb_redist_destroy(&r);
        return TB_ERR_NOMEM;
    }
    r->rank = rank;
    r->size = size;
    r->counts = calloc((size_t)size, sizeof *r->counts);
    r->next = calloc((size_t)size, sizeof *r->next);
    r->gather = calloc((size_t)size * TB__RB_PACK, sizeof *r->gather);
    if (!r->counts || !r->next || !r->gather || tb__rb_init(&r->rb, size, cfg, 1, 0) != TB_OK) {
        tb_redist_destroy(&r);
        return TB_ERR_NOMEM;
    }
    for (int i = 0; i < size; i++)
        r->counts[i] = cfg->initial_counts ? cfg->initial_counts[i]
                                           : cfg->units / (uint64_t)size +
                                                 ((uint64_t)i < cfg->units % (uint64_t)size);
    r->floor_units = 1;
    r->t_pause = -1;
    r->t_call = tb_wtime();
    if (tb__run_comm_dup(comm, &r->comm, &rank, &size) != TB_OK) {
        tb_redist_destroy(&r);
        return TB_ERR_MPI;
    }
    *out = r;
    return TB_OK;
}

const char *tb_redist_error(const tb_redist *h) { return h ? h->err : ""; }

void tb_redist_destroy(tb_redist **rp)
{
    if (!rp || !*rp)
        return;
    tb_redist *r = *rp;
    for (size_t i = 0; i < r->narrays; i++) {
        tb__rd_blk_free(r->arrays[i].buf, r->arrays[i].bytes);
        if (r->arrays[i].data)
            *r->arrays[i].data = NULL;
    }
    free(r->arrays);
    free(r->vars);
    free(r->counts);
    free(r->next);
    free(r->gather);
    tb__rb_free(&r->rb);
    tb__rb_window_free(&r->win);
    if (r->rec)
        fclose(r->rec);
    free(r->record_path);
    free(r->identity);
    tb__run_comm_free(&r->comm);
    free(r);
    *rp = NULL;
}

/* ---- layout helpers ------------------------------------------------------ */

uint64_t tb__rd_start_of(const uint64_t *counts, int rank)
{
    uint64_t s = 0;
    for (int i = 0; i < rank; i++)
        s += counts[i];
    return s;
}

size_t tb__rd_extent(const rd_array *a, uint64_t count) { return a->hlo + count + a->hhi; }

size_t tb__rd_block_bytes(const rd_array *a, uint64_t count)
{
    return a->outer * tb__rd_extent(a, count) * a->inner;
}

/* Bytes of one unit over all arrays. */
static double unit_bytes(const tb_redist *r)
{
    double b = 0;
    for (size_t i = 0; i < r->narrays; i++)
        b += (double)r->arrays[i].outer * (double)r->arrays[i].inner;
    return b;
}

void tb__rd_sync_vars(tb_redist *r)
{
    uint64_t start = tb__rd_start_of(r->counts, r->rank), count = r->counts[r->rank];
    for (size_t i = 0; i < r->nvars; i++) {
        rd_var *v = &r->vars[i];
        int64_t val = (int64_t)(v->what == TB_REDIST_VAR_COUNT   ? count
                                : v->what == TB_REDIST_VAR_START ? start
                                                                 : start + count) +
                      v->offset;
        if (v->is64)
            *(int64_t *)v->p = val;
        else
            *(int *)v->p = (int)val;
    }
}

void tb_redist_block(const tb_redist *r, uint64_t *start, uint64_t *count)
{
    if (start)
        *start = tb__rd_start_of(r->counts, r->rank);
    if (count)
        *count = r->counts[r->rank];
}

int tb_redist_nparts(const tb_redist *r) { return r->size; }

void tb_redist_counts(const tb_redist *r, uint64_t *counts)
{
    memcpy(counts, r->counts, (size_t)r->size * sizeof *counts);
}

void tb_redist_get_stats(const tb_redist *r, tb_redist_stats *st) { *st = r->st; }

/* ---- registration -------------------------------------------------------- */

static int check_desc(tb_redist *r, const tb_redist_array_desc *d, rd_array *a)
{
    const char *nm = d->name ? d->name : "(unnamed)";
    if (!d->data) {
        TB__ERR_H(r, "redist: array %s: no data pointer to write the block's address to", nm);
        return TB_ERR_INVALID;
    }
    if (d->ndims < 1 || d->ndims > RD_MAX_DIMS) {
        TB__ERR_H(r, "redist: array %s: %d dimensions (1 to %d are supported)", nm, d->ndims,
                  RD_MAX_DIMS);
        return TB_ERR_INVALID;
    }
    if (d->split < 0 || d->split >= d->ndims) {
        TB__ERR_H(r, "redist: array %s: split dimension %d out of range 0..%d", nm, d->split,
                  d->ndims - 1);
        return TB_ERR_INVALID;
    }
    for (int i = 0; i < d->ndims; i++)
        if (d->dims[i] == 0) {
            TB__ERR_H(r, "redist: array %s: dimension %d has extent 0", nm, i);
            return TB_ERR_INVALID;
        }
    if (d->dims[d->split] != r->cfg.units) {
        TB__ERR_H(r,
                  "redist: array %s: split dimension %d has extent %" PRIu64
                  ", the distribution has %" PRIu64 " units",
                  nm, d->split, d->dims[d->split], r->cfg.units);
        return TB_ERR_INVALID;
    }
    size_t elem = d->elem_size;
    if (d->type != MPI_DATATYPE_NULL) {
        size_t sz;
        long lb, ext;
        if (tb__run_type_size(d->type, &sz, &lb, &ext) != TB_OK)
            return TB_ERR_MPI;
        if (lb != 0 || ext != (long)sz || sz == 0 || (elem && elem != sz)) {
            TB__ERR_H(r,
                      "redist: array %s: the MPI datatype must be contiguous (size %zu, extent "
                      "%ld) and match elem_size %zu",
                      nm, sz, ext, elem);
            return TB_ERR_INVALID;
        }
        elem = sz;
    }
    if (elem == 0) {
        TB__ERR_H(r, "redist: array %s: no element size (elem_size 0 and no MPI datatype)", nm);
        return TB_ERR_INVALID;
    }
    uint64_t minc = UINT64_MAX;
    for (int i = 0; i < r->size; i++)
        minc = r->counts[i] < minc ? r->counts[i] : minc;
    if (d->halo_lo > minc || d->halo_hi > minc) {
        TB__ERR_H(r,
                  "redist: array %s: halo %" PRIu64 "/%" PRIu64 " is wider than the smallest "
                  "block (%" PRIu64 " units)",
                  nm, d->halo_lo, d->halo_hi, minc);
        return TB_ERR_RANGE;
    }
    memset(a, 0, sizeof *a);
    snprintf(a->name, sizeof a->name, "%s", nm);
    a->ndims = d->ndims;
    a->split = d->split;
    memcpy(a->dims, d->dims, sizeof a->dims);
    a->elem = elem;
    a->hlo = d->halo_lo;
    a->hhi = d->halo_hi;
    a->not_kept = 0;
    a->data = d->data;
    /* MPI counts are ints: a unit row, the rows, and a block must fit. */
    double outer = 1, inner = (double)elem;
    for (int i = 0; i < d->split; i++)
        outer *= (double)d->dims[i];
    for (int i = d->split + 1; i < d->ndims; i++)
        inner *= (double)d->dims[i];
    double ext = (double)(r->cfg.units + a->hlo + a->hhi);
    if (inner > INT_MAX || outer > INT_MAX || ext > INT_MAX || outer * ext > INT_MAX ||
        outer * ext * inner > (double)(SIZE_MAX / 2)) {
        TB__ERR_H(r,
                  "redist: array %s: too large (a unit row must be < 2 GiB and rows x units "
                  "< 2^31)",
                  nm);
        return TB_ERR_RANGE;
    }
    a->outer = (size_t)outer;
    a->inner = (size_t)inner;
    return TB_OK;
}

/* A digest of what must be the same on every rank. */
static uint64_t desc_hash(const rd_array *a)
{
    uint64_t h = 1469598103934665603ull;
    uint64_t v[] = {(uint64_t)a->ndims, (uint64_t)a->split, a->dims[0], a->dims[1], a->dims[2],
                    a->dims[3], a->elem, a->hlo, a->hhi};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        h = (h ^ v[i]) * 1099511628211ull;
    return h;
}

/* Collective agreement: the lowest return code, and whether every rank
 * passed the same digest. */
static int agree(tb_redist *r, int rc, uint64_t digest, const char *what)
{
    int64_t v[3] = {-(int64_t)rc, (int64_t)(digest >> 1), -(int64_t)(digest >> 1)};
    TB_CHECK(tb__run_max_i64(r->comm, v, 3));
    if (v[0] > 0)
        return (int)-v[0];
    if (v[1] != -v[2]) {
        TB__ERR_H(r, "redist: %s differs between ranks; every rank must make the same call", what);
        tb__run_abort(r->comm);
    }
    return TB_OK;
}

int tb_redist_add_array(tb_redist *r, const tb_redist_array_desc *desc, int *index_out)
{
    if (!r || !desc)
        return TB_ERR_INVALID;
    rd_array a;
    int rc = check_desc(r, desc, &a);
    if (rc == TB_OK && tb_grow(&r->arrays, &r->arrays_cap, r->narrays, sizeof a, 4) != TB_OK)
        rc = TB_ERR_NOMEM;
    if (rc == TB_OK) {
        a.bytes = tb__rd_block_bytes(&a, r->counts[r->rank]);
        a.buf = tb__rd_blk_alloc(a.bytes);
        if (!a.buf)
            rc = TB_ERR_NOMEM;
    }
    int arc = agree(r, rc, rc == TB_OK ? desc_hash(&a) : 0, "an array registration");
    if (arc != TB_OK) {
        if (rc == TB_OK)
            tb__rd_blk_free(a.buf, a.bytes);
        return arc;
    }
    *a.data = a.buf;
    r->arrays[r->narrays] = a;
    if (index_out)
        *index_out = (int)r->narrays;
    r->narrays++;
    uint64_t w = a.hlo > a.hhi ? a.hlo : a.hhi;
    r->floor_units = w > r->floor_units ? w : r->floor_units;
    return TB_OK;
}

int tb_redist_set_kept(tb_redist *r, int index, int kept)
{
    if (!r)
        return TB_ERR_INVALID;
    int rc = index >= 0 && (size_t)index < r->narrays ? TB_OK : TB_ERR_RANGE;
    uint64_t digest = (uint64_t)index * 2 + (kept != 0);
    TB_CHECK(agree(r, rc, digest, "tb_redist_set_kept"));
    r->arrays[index].not_kept = !kept;
    return TB_OK;
}

static int bind(tb_redist *r, tb_redist_var what, void *var, int is64, int64_t offset)
{
    if (!r || !var || (what != TB_REDIST_VAR_COUNT && what != TB_REDIST_VAR_START &&
                       what != TB_REDIST_VAR_END))
        return TB_ERR_INVALID;
    if (!is64 && ((double)r->cfg.units + (double)offset > INT_MAX || offset < INT_MIN ||
                  offset > INT_MAX))
        return TB_ERR_RANGE;
    if (tb_grow(&r->vars, &r->vars_cap, r->nvars, sizeof *r->vars, 4) != TB_OK)
        return TB_ERR_NOMEM;
    r->vars[r->nvars++] = (rd_var){what, is64, var, offset};
    tb__rd_sync_vars(r);
    return TB_OK;
}

int tb_redist_bind_int(tb_redist *r, tb_redist_var what, int *var, long offset)
{
    return bind(r, what, var, 0, offset);
}

int tb_redist_bind_i64(tb_redist *r, tb_redist_var what, int64_t *var, int64_t offset)
{
    return bind(r, what, var, 1, offset);
}

/* ---- views of a block ---------------------------------------------------- */

/* `count` units from local index `at` of a block of local extent `ext`: one
 * run in each of the outer rows. */
static tb__run_view units_view(const rd_array *a, unsigned char *buf, size_t ext, uint64_t at,
                               uint64_t count)
{
    return (tb__run_view){buf + at * a->inner, a->outer, (size_t)count, a->inner, ext};
}

/* ---- pointers the caller exchanged ------------------------------------- */

static int same_shape(const rd_array *a, const rd_array *b)
{
    return a->ndims == b->ndims && a->split == b->split && a->elem == b->elem &&
           a->hlo == b->hlo && a->hhi == b->hhi &&
           memcmp(a->dims, b->dims, sizeof a->dims) == 0;
}

/*
 * A stencil code swaps its two arrays after each sweep (t = u; u = v; v = t),
 * so the pointer registered for u holds v's block.  Before the library
 * touches the blocks (halo exchange, move), each array takes the block its
 * pointer holds now: a move then carries each name's data, and writes each
 * name's new address back to it.  Only an exchange among registered arrays
 * of the same shape can be followed; anything else (memory the library does
 * not own, two names on one block) would be overwritten or lost at the next
 * move, so it stops the job with one line naming the array.
 */
void tb__rd_follow_pointers(tb_redist *r)
{
    size_t n = r->narrays, i;
    for (i = 0; i < n; i++)
        if (*r->arrays[i].data != r->arrays[i].buf)
            break;
    if (i == n)
        return;
    unsigned char **bufs = malloc(n * sizeof *bufs);
    size_t *bytes = malloc(n * sizeof *bytes);
    size_t *used = calloc(n, sizeof *used); /* 1 + the array that took block j */
    char why[256] = "";
    if (!bufs || !bytes || !used)
        snprintf(why, sizeof why, "out of memory following an exchange of data pointers");
    for (i = 0; i < n && !why[0]; i++) {
        const rd_array *a = &r->arrays[i];
        size_t j = 0;
        while (j < n && r->arrays[j].buf != *a->data)
            j++;
        if (j == n)
            snprintf(why, sizeof why, "array %s: its data pointer %s", a->name,
                     *a->data ? "now points at memory that is not a block of this distribution"
                              : "is NULL");
        else if (used[j])
            snprintf(why, sizeof why, "arrays %s and %s: their data pointers hold the same block",
                     r->arrays[used[j] - 1].name, a->name);
        else if (!same_shape(a, &r->arrays[j]))
            snprintf(why, sizeof why,
                     "array %s: its data pointer holds the block of array %s, of another shape",
                     a->name, r->arrays[j].name);
        else {
            used[j] = i + 1;
            bufs[i] = r->arrays[j].buf;
            bytes[i] = r->arrays[j].bytes;
        }
    }
    if (why[0]) {
        TB__ERR_H(r,
                  "redist: rank %d: %s (only an exchange of pointers among registered arrays "
                  "of the same shape can be followed)",
                  r->rank, why);
        tb__run_abort(r->comm);
    }
    for (i = 0; i < n; i++) {
        r->arrays[i].buf = bufs[i];
        r->arrays[i].bytes = bytes[i];
    }
    free(bufs);
    free(bytes);
    free(used);
}

/* ---- halo exchange ------------------------------------------------------- */

int tb__rd_halo_exchange(tb_redist *r)
{
    if (r->size == 1)
        return TB_OK;
    tb__run_xfer *x = malloc(r->narrays * 4 * sizeof *x);
    if (!x)
        return TB_ERR_NOMEM;
    size_t n = 0;
    uint64_t c = r->counts[r->rank];
    for (size_t i = 0; i < r->narrays; i++) {
        rd_array *a = &r->arrays[i];
        size_t ext = tb__rd_extent(a, c);
        int tag = RD_TAG_HALO + 2 * (int)i;
        struct {
            int peer, recv, tag;
            uint64_t at, n;
        } ops[4] = {
            {r->rank - 1, 1, tag, 0, a->hlo},              /* my low halo */
            {r->rank - 1, 0, tag + 1, a->hlo, a->hhi},     /* its high halo */
            {r->rank + 1, 1, tag + 1, a->hlo + c, a->hhi}, /* my high halo */
            {r->rank + 1, 0, tag, a->hlo + c - a->hlo, a->hlo}, /* its low halo */
        };
        for (int k = 0; k < 4; k++)
            if (ops[k].n > 0 && ops[k].peer >= 0 && ops[k].peer < r->size)
                x[n++] = (tb__run_xfer){ops[k].peer, ops[k].tag, ops[k].recv,
                                        units_view(a, a->buf, ext, ops[k].at, ops[k].n)};
    }
    int rc = tb__run_exchange(r->comm, x, n);
    free(x);
    return rc;
}

int tb_redist_halo_exchange(tb_redist *r)
{
    if (!r)
        return TB_ERR_INVALID;
    tb__rd_enter(r);
    tb__rd_follow_pointers(r);
    int rc = tb__rd_halo_exchange(r);
    tb__rd_leave(r);
    return rc;
}

/* ---- the probe ----------------------------------------------------------- */

/* Median one-way time of `reps` ping-pongs of `bytes` with `peer`. */
static double pingpong(tb_redist *r, int peer, unsigned char *buf, size_t bytes, int reps)
{
    double t[64];
    int n = reps < 64 ? reps : 64;
    tb_stats st;
    if (tb__run_pingpong(r->comm, peer, RD_TAG_PROBE, r->rank < peer, buf, bytes, n, t) != TB_OK ||
        tb_stats_compute(t, (size_t)n, &st) != TB_OK) {
        TB__ERR_H(r, "redist: rank %d: the probe's ping-pong with rank %d failed", r->rank, peer);
        tb__run_abort(r->comm); /* the peer is waiting for this rank */
    }
    return st.median;
}

static void probe_sizes(const tb_redist *r, double sizes[3])
{
    double ub = unit_bytes(r);
    uint64_t minc = UINT64_MAX;
    for (int i = 0; i < r->size; i++)
        minc = r->counts[i] < minc ? r->counts[i] : minc;
    static const double units[3] = {1, 8, 64};
    for (int i = 0; i < 3; i++) {
        if (r->cfg.probe_bytes[i] > 0)
            sizes[i] = r->cfg.probe_bytes[i];
        else if (ub > 0)
            sizes[i] = ub * (units[i] < (double)minc ? units[i] : (double)minc);
        else
            sizes[i] = (double)(1u << (6 * i + 10)); /* 1 KiB, 64 KiB, 4 MiB */
        if (sizes[i] > (double)(INT_MAX / 2))
            sizes[i] = (double)(INT_MAX / 2);
    }
    /* Clamped sizes may coincide; the fit needs two distinct ones. */
    if (sizes[1] <= sizes[0])
        sizes[1] = sizes[0] * 2;
    if (sizes[2] <= sizes[1])
        sizes[2] = sizes[1] * 2;
}

int tb__rd_probe(tb_redist *r)
{
    double t0 = tb_wtime();
    double sizes[3], secs[3] = {0, 0, 0};
    probe_sizes(r, sizes);
    unsigned char *buf = calloc(1, (size_t)sizes[2] + 1);
    int rc = buf ? TB_OK : TB_ERR_NOMEM;
    int ok = rc == TB_OK;
    tb__run_min_int(r->comm, &ok, 1);
    if (!ok) {
        free(buf);
        return TB_ERR_NOMEM;
    }
    for (int phase = 0; phase < 2 && r->size > 1; phase++) {
        /* phase 0 pairs 0-1, 2-3, ...; phase 1 pairs 1-2, 3-4, ... */
        int peer = ((r->rank + phase) % 2 == 0) ? r->rank + 1 : r->rank - 1;
        if (peer < 0 || peer >= r->size)
            continue;
        for (int i = 0; i < 3; i++) {
            double t = pingpong(r, peer, buf, (size_t)sizes[i], r->cfg.probe_repeats);
            secs[i] = t > secs[i] ? t : secs[i];
        }
    }
    free(buf);
    TB_CHECK(tb__run_max_double(r->comm, secs, 3));
    if (r->size > 1) {
        rc = tb_redist_cost_fit(&r->st.cost, sizes, secs, 3);
        if (rc != TB_OK)
            return rc;
    }
    r->probed = 1;
    r->st.probe_s += tb_wtime() - t0;
    TB_LOG_INFO("redist: probe %.0f/%.0f/%.0f bytes: %.3g/%.3g/%.3g s; time = %.3g + %.3g * bytes",
                sizes[0], sizes[1], sizes[2], secs[0], secs[1], secs[2], r->st.cost.a,
                r->st.cost.b);
    return TB_OK;
}

/* The speed measure starts when the current call returns (at iteration
 * `it`): no window, no smoothed speed. */
void tb__rd_start_measure(tb_redist *r, uint64_t it)
{
    tb__rb_window_clear(&r->win);
    for (int i = 0; i < r->size; i++)
        r->rb.unit_time[i] = -1;
    r->last_iter = it;
    r->mark_call = 1;
}

int tb_redist_probe(tb_redist *r)
{
    if (!r)
        return TB_ERR_INVALID;
    tb__rd_enter(r);
    int rc = tb__rd_probe(r);
    tb__rd_start_measure(r, 0);
    tb__rd_leave(r);
    return rc;
}

/* ---- balancing points ---------------------------------------------------- */

/* The record (cfg.record): one JSON object per line, written by rank 0. */
static void record_open(tb_redist *r)
{
    if (!r->record_path || r->rec)
        return;
    r->rec = fopen(r->record_path, "w");
    if (!r->rec) {
        TB_LOG_WARN("redist: cannot write the record %s: %s", r->record_path, strerror(errno));
        free(r->record_path);
        r->record_path = NULL;
        return;
    }
    static const char *const modes[] = {"on", "nopredict", "off"};
    fprintf(r->rec, "{\"record\": \"tenbin redist\", \"version\": 1, \"ranks\": %d, \"units\": %" PRIu64
                    ", \"interval\": %" PRIu64 ", \"threshold\": %.17g, \"smoothing\": %.17g, "
                    "\"mode\": \"%s\", \"guards\": %u, \"unit_bytes\": %.17g, \"min_units\": %" PRIu64
                    ", \"cost\": [%.17g, %.17g, %" PRIu64 ", %.17g, %.17g, %.17g, %.17g]}\n",
            r->size, r->cfg.units, r->cfg.interval, r->cfg.threshold, r->cfg.smoothing,
            modes[r->cfg.mode], r->cfg.guards, unit_bytes(r), r->floor_units, r->st.cost.a,
            r->st.cost.b, r->st.cost.n, r->st.cost.sx, r->st.cost.sy, r->st.cost.sxx,
            r->st.cost.sxy);
}

static void record_point(tb_redist *r, uint64_t it, uint64_t total, const tb_redist_plan *p)
{
    record_open(r);
    if (!r->rec)
        return;
    fprintf(r->rec, "{\"point\": %" PRIu64 ", \"total\": %" PRIu64 ", \"counts\": [", it, total);
    for (int i = 0; i < r->size; i++)
        fprintf(r->rec, "%s%" PRIu64, i ? ", " : "", r->counts[i]);
    fprintf(r->rec, "], \"meas\": [");
    for (int i = 0; i < r->size * TB__RB_PACK; i++)
        fprintf(r->rec, "%s%.17g", i ? ", " : "", r->gather[i]);
    fprintf(r->rec, "], \"move\": %d, \"next\": [", p->decision.move);
    for (int i = 0; i < r->size; i++)
        fprintf(r->rec, "%s%" PRIu64, i ? ", " : "", r->next[i]);
    fprintf(r->rec, "]}\n");
}

static int plan_at(tb_redist *r, uint64_t it, uint64_t total, tb_redist_plan *p)
{
    memset(p, 0, sizeof *p);
    p->iteration = it;
    p->total = total;
    p->counts = r->counts;
    p->next = r->rb.next;
    p->speeds = r->rb.speeds;
    if (it == 0)
        return TB_OK;
    /* One call interval ends here: this rank's own compute since the last. */
    if (r->probed) {
        double compute = (r->t_enter - r->t_call) - (r->t_excluded - r->x_call);
        uint64_t iters = it > r->last_iter ? it - r->last_iter : 1;
        TB_CHECK(tb__rb_window_add(&r->win, compute, iters));
        r->last_iter = it;
        r->mark_call = 1;
    }
    if ((total && it >= total) || it % r->cfg.interval != 0)
        return TB_OK;
    if (!r->probed) {
        int rc = tb__rd_probe(r);
        tb__rd_start_measure(r, it);
        return rc;
    }
    double mine[TB__RB_PACK];
    tb__rb_window_pack(&r->win, it, mine);
    tb__rb_window_clear(&r->win);
    tb__run_allgather(r->comm, mine, r->gather, TB__RB_PACK * sizeof *mine);
    r->rb.min_units = r->floor_units;
    r->rb.unit_bytes = unit_bytes(r);
    r->rb.cost = r->st.cost; /* the probe's line; the balancer scales it by real moves */
    int bad = -1, est = 0;
    int rc = tb__rb_point(&r->rb, it, total, r->counts, r->gather, &p->decision, &est, &bad);
    if (rc == TB_ERR_STATE) {
        TB__ERR_H(r,
                  "redist: rank %d is at iteration %.0f, rank %d at %" PRIu64
                  "; balancing points must be called by every rank at the same iteration",
                  bad, r->gather[(size_t)bad * TB__RB_PACK], r->rank, it);
        tb__run_abort(r->comm);
    }
    if (rc != TB_OK)
        return rc;
    memcpy(r->next, r->rb.next, (size_t)r->size * sizeof *r->next);
    if (est) {
        p->total_estimated = 1;
        p->total = 2 * it;
        if (!r->warned_total && r->rank == 0) {
            TB_LOG_INFO("redist: total iterations unknown; assuming as many remain as have run");
            r->warned_total = 1;
        }
    }
    p->valid = 1;
    r->st.points++;
    record_point(r, it, total, p);
    return TB_OK;
}

int tb_redist_plan_at(tb_redist *r, uint64_t iteration, uint64_t total, tb_redist_plan *plan)
{
    if (!r || !plan)
        return TB_ERR_INVALID;
    tb__rd_enter(r);
    int rc = plan_at(r, iteration, total, plan);
    tb__rd_leave(r);
    return rc;
}

/* ---- the move ------------------------------------------------------------ */

/* Copy the part of the old block that the new block keeps (its owned units
 * and halos alike: the halos are refreshed afterwards, the global edges'
 * halos stay) to its new place, in place. */
static int relayout(rd_array *a, uint64_t os, uint64_t oc, uint64_t ns, uint64_t nc)
{
    size_t oext = tb__rd_extent(a, oc), next = tb__rd_extent(a, nc);
    size_t obytes = tb__rd_block_bytes(a, oc), nbytes = tb__rd_block_bytes(a, nc);
    /* global unit ranges of the storage, halos included (signed) */
    int64_t olo = (int64_t)os - (int64_t)a->hlo, ohi = (int64_t)(os + oc + a->hhi);
    int64_t nlo = (int64_t)ns - (int64_t)a->hlo, nhi = (int64_t)(ns + nc + a->hhi);
    int64_t klo = olo > nlo ? olo : nlo, khi = ohi < nhi ? ohi : nhi;
    size_t len = khi > klo ? (size_t)(khi - klo) * a->inner : 0;
    size_t so = khi > klo ? (size_t)(klo - olo) * a->inner : 0;
    size_t sn = khi > klo ? (size_t)(klo - nlo) * a->inner : 0;
    if (len && (so != sn || oext != next)) {
        int done = blk_relayout_pages(&a->buf, &a->bytes, nbytes, a->outer, oext * a->inner,
                                      next * a->inner, so, sn, len);
        if (done < 0)
            return TB_ERR_NOMEM;
        if (done)
            return TB_OK;
    }
    if (nbytes > obytes) {
        unsigned char *p = blk_resize(a->buf, a->bytes, nbytes);
        if (!p)
            return TB_ERR_NOMEM;
        a->buf = p;
        a->bytes = nbytes;
    }
    if (len) {
        /* Rows moving down go in increasing order, rows moving up in
         * decreasing order: then no row lands on a source still to be
         * read (a row's new place never reaches past the next row's old
         * start when moving down, nor below the previous row's when up). */
        for (size_t o = 0; o < a->outer; o++) {
            size_t src = o * oext * a->inner + so, dst = o * next * a->inner + sn;
            if (dst < src)
                memmove(a->buf + dst, a->buf + src, len);
        }
        for (size_t o = a->outer; o-- > 0;) {
            size_t src = o * oext * a->inner + so, dst = o * next * a->inner + sn;
            if (dst > src)
                memmove(a->buf + dst, a->buf + src, len);
        }
    }
    if (nbytes < obytes) {
        unsigned char *p = blk_resize(a->buf, a->bytes, nbytes);
        if (p) { /* a failed shrink keeps the larger block */
            a->buf = p;
            a->bytes = nbytes;
        }
    }
    return TB_OK;
}

typedef struct rd_recv {
    size_t array;
    uint64_t first, count;
    unsigned char *tmp;
    size_t bytes;
} rd_recv;

/* Collective: rank 0's layout want[] into *next (every rank), checked:
 * every block at least the floor, the units summed.  *same: it is the
 * layout now. */
static int layout_of_root(tb_redist *r, const uint64_t *want, uint64_t **next, int *same)
{
    int P = r->size;
    uint64_t *nx = malloc((size_t)P * sizeof *nx);
    if (!nx)
        return TB_ERR_NOMEM;
    memcpy(nx, want, (size_t)P * sizeof *nx);
    tb__run_bcast(r->comm, nx, (size_t)P * sizeof *nx);
    uint64_t sum = 0;
    *same = 1;
    for (int i = 0; i < P; i++) {
        if (nx[i] < r->floor_units) {
            if (r->rank == 0)
                TB__ERR_H(r,
                          "redist: layout gives rank %d %" PRIu64 " units, below the floor of "
                          "%" PRIu64 " (one unit, and the widest halo)",
                          i, nx[i], r->floor_units);
            free(nx);
            return TB_ERR_RANGE;
        }
        sum += nx[i];
        *same &= nx[i] == r->counts[i];
    }
    if (sum != r->cfg.units) {
        if (r->rank == 0)
            TB__ERR_H(r, "redist: layout sums to %" PRIu64 " units, not %" PRIu64, sum,
                      r->cfg.units);
        free(nx);
        return TB_ERR_INVALID;
    }
    *next = nx;
    return TB_OK;
}

/* Collective, after a move that started at t0: the statistics, the record,
 * and the cost model.  The probe times bare transfers of warm buffers; a
 * real move also maps pages, re-lays blocks and waits for the slowest rank.
 * Each move refreshes the model by the ratio of its measured time (slowest
 * rank) to what the probe's line predicted; the mean ratio scales every
 * later prediction. */
static void account_move(tb_redist *r, const tb_redist_move *mv, size_t nm, double t0,
                         double sent_recv, double extra)
{
    double all[2] = {tb_wtime() - t0, sent_recv};
    tb__run_max_double(r->comm, all, 2);
    double ub = unit_bytes(r), moved = 0;
    for (size_t m = 0; m < nm; m++)
        moved += (double)mv[m].count * ub;
    double predicted = tb_redist_move_time(&r->st.cost, mv, nm, r->size, ub);
    if (r->st.cost.n > 0)
        tb__rb_moved(&r->rb, predicted, all[0]);
    r->st.move_factor = tb__rb_factor(&r->rb);
    r->st.moves++;
    if (r->rec)
        fprintf(r->rec, "{\"moved\": %.17g, \"predicted\": %.17g}\n", all[0], predicted);
    r->st.bytes_moved += (uint64_t)moved;
    r->st.move_s += all[0];
    if ((uint64_t)extra > r->st.peak_extra_bytes)
        r->st.peak_extra_bytes = (uint64_t)extra;
}

static int apply(tb_redist *r, const uint64_t *want)
{
    double t0 = tb_wtime();
    int P = r->size;
    uint64_t *next = NULL;
    int same = 0;
    TB_CHECK(layout_of_root(r, want, &next, &same));
    if (same) {
        free(next);
        return TB_OK;
    }
    size_t nm = 0;
    tb_redist_moves(P, r->counts, next, NULL, 0, &nm);
    tb_redist_move *mv = malloc((nm ? nm : 1) * sizeof *mv);
    size_t maxx = nm * r->narrays + 1;
    tb__run_xfer *x = malloc(maxx * sizeof *x);
    rd_recv *rv = calloc(maxx, sizeof *rv);
    /* A failed allocation here is local; agree on it before any message. */
    int ok = mv && x && rv;
    tb__run_min_int(r->comm, &ok, 1);
    if (!ok) {
        free(mv);
        free(x);
        free(rv);
        free(next);
        return TB_ERR_NOMEM;
    }
    size_t nx = 0, nrv = 0;
    uint64_t os = tb__rd_start_of(r->counts, r->rank), oc = r->counts[r->rank];
    uint64_t ns = tb__rd_start_of(next, r->rank), nc = next[r->rank];
    double extra = 0, sent_recv = 0;
    tb_redist_moves(P, r->counts, next, mv, nm, &nm);
    for (size_t m = 0; m < nm; m++) {
        if (mv[m].from != r->rank && mv[m].to != r->rank)
            continue;
        for (size_t i = 0; i < r->narrays; i++) {
            rd_array *a = &r->arrays[i];
            int tag = RD_TAG_MOVE + (int)i;
            if (mv[m].from == r->rank) {
                /* units leave from where they are */
                x[nx] = (tb__run_xfer){mv[m].to, tag, 0,
                                       units_view(a, a->buf, tb__rd_extent(a, oc),
                                                  mv[m].first - os + a->hlo, mv[m].count)};
            } else {
                size_t bytes = a->outer * mv[m].count * a->inner;
                rv[nrv] = (rd_recv){i, mv[m].first, mv[m].count, tb__rd_blk_alloc(bytes), bytes};
                if (!rv[nrv].tmp) {
                    TB__ERR_H(r, "redist: no memory for the %zu bytes arriving for %s", bytes,
                              a->name);
                    tb__run_abort(r->comm); /* the sender is already sending */
                }
                extra += (double)bytes;
                /* they arrive contiguous: outer rows of count units */
                x[nx] = (tb__run_xfer){mv[m].from, tag, 1,
                                       units_view(a, rv[nrv].tmp, mv[m].count, 0, mv[m].count)};
                nrv++;
            }
            sent_recv += tb__run_view_bytes(&x[nx].at);
            nx++;
        }
    }
    int rc = tb__run_exchange(r->comm, x, nx);
    if (rc != TB_OK) {
        /* The other ranks are sending and receiving: no way back. */
        TB__ERR_H(r, "redist: move failed on rank %d: %s", r->rank, tb_strerror(rc));
        tb__run_abort(r->comm);
    }
    double t_sent = tb_wtime();
    /* Re-lay each block and copy the arrivals in. */
    for (size_t i = 0; rc == TB_OK && i < r->narrays; i++) {
        rd_array *a = &r->arrays[i];
        rc = relayout(a, os, oc, ns, nc);
        size_t ext = tb__rd_extent(a, nc);
        for (size_t k = 0; rc == TB_OK && k < nrv; k++) {
            if (rv[k].array != i)
                continue;
            size_t len = rv[k].count * a->inner, at = (rv[k].first - ns + a->hlo) * a->inner;
            for (size_t o = 0; o < a->outer; o++)
                memcpy(a->buf + o * ext * a->inner + at, rv[k].tmp + o * len, len);
        }
        *a->data = a->buf;
    }
    for (size_t k = 0; k < nrv; k++)
        tb__rd_blk_free(rv[k].tmp, rv[k].bytes);
    if (rc != TB_OK) {
        /* The layout is half changed on this rank: nothing sane remains. */
        TB__ERR_H(r, "redist: move failed on rank %d: %s", r->rank, tb_strerror(rc));
        tb__run_abort(r->comm);
    }
    double t_laid = tb_wtime();
    memcpy(r->counts, next, (size_t)P * sizeof *next);
    tb__rd_sync_vars(r);
    rc = tb__rd_halo_exchange(r);
    TB_LOG_DEBUG("redist: move: %.0f bytes in/out, transfer %.4f s, re-layout %.4f s, halos "
                 "%.4f s", sent_recv, t_sent - t0, t_laid - t_sent, tb_wtime() - t_laid);
    account_move(r, mv, nm, t0, sent_recv, extra);
    free(mv);
    free(x);
    free(rv);
    free(next);
    return rc;
}

int tb_redist_apply(tb_redist *r, const uint64_t *counts)
{
    if (!r || !counts)
        return TB_ERR_INVALID;
    tb__rd_enter(r);
    tb__rd_follow_pointers(r);
    int rc = apply(r, counts);
    tb__rd_leave(r);
    return rc;
}

int tb_redist_balance(tb_redist *r, uint64_t iteration, uint64_t total, tb_redist_plan *plan)
{
    if (!r)
        return TB_ERR_INVALID;
    tb_redist_plan local;
    tb_redist_plan *p = plan ? plan : &local;
    tb__rd_enter(r);
    int rc = plan_at(r, iteration, total, p);
    if (rc == TB_OK && p->valid && p->decision.move) {
        if (r->rank == 0)
            TB_LOG_INFO("redist: iteration %" PRIu64 ": moving %" PRIu64 " units (%.3g -> %.3g "
                        "s/iteration, move %.3g s): %s", iteration, p->decision.units_moved,
                        p->decision.t_now, p->decision.t_new, p->decision.t_move,
                        p->decision.why);
        tb__rd_follow_pointers(r);
        rc = apply(r, r->next);
    } else if (rc == TB_OK && p->valid && p->decision.units_moved > 0 &&
               r->cfg.mode == TB_REDIST_PREDICT && p->decision.remaining > 0 &&
               p->decision.imbalance > r->cfg.threshold) {
        r->st.skipped++;
    }
    tb__rd_leave(r);
    return rc;
}
