/*
 * himeno.h - the Himeno benchmark (RIKEN's 19-point Jacobi solver of a
 * Poisson equation), with the official code's semantics, on a block of
 * consecutive i-planes.
 *
 * Grid sizes count grid points including the boundaries: XS 32x32x64,
 * S 64x64x128, M 128x128x256, L 256x256x512.  The interior planes
 * i = 1 .. mi-2 are the distributed units; a block of n planes starting at
 * interior plane `start` (global i = start + 1 ...) holds
 *   p     [1 + n + 1][mj][mk]  (one halo plane each side: i-1 and i+n)
 *   a     [4][n][mj][mk], b, c [3][n][mj][mk]
 *   bnd, wrk1, wrk2 [n][mj][mk]
 * Everything is float, as in the official code; compile without fused
 * multiply-add contraction for the known answers.
 */
#ifndef TB_APP_HIMENO_H
#define TB_APP_HIMENO_H

#include <stddef.h>
#include <stdint.h>

typedef struct tb_himeno_size {
    const char *name;
    int mi, mj, mk; /* grid points along i, j, k, boundaries included */
} tb_himeno_size;

/* The size named XS, S, M or L (case-insensitive), or NULL. */
const tb_himeno_size *tb_himeno_size_find(const char *name);

/* A block's arrays (pointers into storage owned elsewhere). */
typedef struct tb_himeno_block {
    int mi, mj, mk;
    int start;     /* first interior plane of the block, 0-based (global i = start + 1) */
    int n;         /* planes in the block */
    float *p, *a, *b, *c, *bnd, *wrk1, *wrk2;
} tb_himeno_block;

/* The official initial values on the block's planes, and p on its two halo
 * planes (which the global boundary planes keep for good). */
void tb_himeno_init(const tb_himeno_block *h);
/* The same but for p: the coefficients (a, b, c, bnd, wrk1) and wrk2, which
 * never change -- what a run resumed from a checkpoint of p sets again. */
void tb_himeno_init_coefficients(const tb_himeno_block *h);

/* One Jacobi sweep over planes [l0, l1) of the block: wrk2 from p, returning
 * the float sum of ss^2 over those planes (the official term order). */
float tb_himeno_sweep(const tb_himeno_block *h, int l0, int l1);

/* Copy wrk2 back to p on the interior points of planes [l0, l1). */
void tb_himeno_copy(const tb_himeno_block *h, int l0, int l1);

/* Sum of the uint32 bit patterns of p over the block's planes and, when
 * asked, its low and high halo planes (the global boundaries). */
uint64_t tb_himeno_bitsum(const tb_himeno_block *h, int with_lo, int with_hi);

/* Floating-point operations of one sweep over the whole grid (34 per
 * interior point). */
double tb_himeno_flops(const tb_himeno_size *s);

#endif
