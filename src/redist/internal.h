/*
 * internal.h - the distributed arrays' state, shared by redist.c (layout,
 * moves, halos, balancing points) and ckpt.c (checkpoints) (internal).
 */
#ifndef TB_REDIST_INTERNAL_H
#define TB_REDIST_INTERNAL_H

#include <stdio.h>

#include "balance.h"
#include "core/refuse.h"
#include <mpi.h>
#include "tenbin/redist.h"

enum { RD_MAX_DIMS = 4, RD_TAG_MOVE = 100, RD_TAG_HALO = 20000, RD_TAG_PROBE = 40000 };

typedef struct rd_array {
    char name[48];
    int ndims, split;
    uint64_t dims[RD_MAX_DIMS];
    size_t elem;
    uint64_t hlo, hhi;
    unsigned not_kept;     /* checkpoints leave it out (tb_redist_set_kept) */
    size_t outer; /* rows before the split dimension */
    size_t inner; /* bytes of one unit within one row */
    void **data;
    unsigned char *buf;
    size_t bytes; /* size of buf as allocated */
} rd_array;

typedef struct rd_var {
    tb_redist_var what;
    int is64;
    void *p;
    int64_t offset;
} rd_var;

struct tb_redist {
    MPI_Comm comm;
    int rank, size;
    char err[TB__ERR_LINE]; /* the last failure's line (tb_redist_error) */
    tb_redist_opts cfg;
    uint64_t *counts;  /* [size] the layout */
    uint64_t *next;    /* [size] the last plan */
    double *gather;    /* [TB__RB_PACK * size] scratch of the gather */
    tb__rb rb;         /* the balancer: speeds, guards, decision (balance.c) */
    tb__rb_window win; /* this rank's compute per call since the last point */
    FILE *rec;         /* rank 0: the record (cfg.record), or NULL */
    char *record_path; /* rank 0: a copy of cfg.record until it is opened */
    char *identity;    /* what the run is, kept in checkpoints (tb_redist_set_identity) */
    rd_array *arrays;
    size_t narrays, arrays_cap;
    rd_var *vars;
    size_t nvars, vars_cap;
    uint64_t floor_units; /* smallest block allowed: max(1, widest halo) */
    /* speed measure */
    int probed;
    int depth;          /* nesting of library calls */
    double t_enter;     /* when the outermost library call began */
    double t_call;      /* end of the last balancing call: the current call interval's start */
    double x_call;      /* t_excluded then */
    double t_excluded;  /* library and paused seconds so far */
    double t_pause;     /* >= 0 while paused */
    int mark_call;      /* start a call interval when the current call returns */
    uint64_t last_iter; /* iteration of the last call interval's end */
    int warned_total;
    tb_redist_stats st;
};

/* Library time accounting: calls nest; the outermost one's time is kept
 * out of the speed measure. */
void tb__rd_enter(tb_redist *r);
void tb__rd_leave(tb_redist *r);
/* Take every array's block from where its data pointer is now. */
void tb__rd_follow_pointers(tb_redist *r);
/* Fill the halos from the neighbours (collective). */
int tb__rd_halo_exchange(tb_redist *r);
/* Set the bound variables from the layout. */
void tb__rd_sync_vars(tb_redist *r);
/* The first unit of rank's block in a layout. */
uint64_t tb__rd_start_of(const uint64_t *counts, int rank);
/* Planes of a block of count units, halos included; its bytes. */
size_t tb__rd_extent(const rd_array *a, uint64_t count);
size_t tb__rd_block_bytes(const rd_array *a, uint64_t count);
/* Zero-filled block storage. */
void *tb__rd_blk_alloc(size_t n);
void tb__rd_blk_free(void *p, size_t n);
/* The transfer-cost probe (collective), and the start of the speed measure
 * at iteration it. */
int tb__rd_probe(tb_redist *r);
void tb__rd_start_measure(tb_redist *r, uint64_t it);

#endif /* TB_REDIST_INTERNAL_H */
