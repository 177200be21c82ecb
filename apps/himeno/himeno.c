/*
 * himeno.c - the Himeno kernel on a block of i-planes (see himeno.h).
 *
 * The expression of s0 keeps the official code's terms and their order, in
 * float, so that a one-rank run gives the official gosa to the last printed
 * digit; p does not depend on the decomposition at all.
 */
#include "himeno/himeno.h"

#include <string.h>
#include <strings.h>

static const tb_himeno_size sizes[] = {
    {"XS", 32, 32, 64},
    {"S", 64, 64, 128},
    {"M", 128, 128, 256},
    {"L", 256, 256, 512},
};

const tb_himeno_size *tb_himeno_size_find(const char *name)
{
    for (size_t i = 0; name && i < sizeof sizes / sizeof sizes[0]; i++)
        if (strcasecmp(name, sizes[i].name) == 0)
            return &sizes[i];
    return NULL;
}

double tb_himeno_flops(const tb_himeno_size *s)
{
    return 34.0 * (double)(s->mi - 2) * (double)(s->mj - 2) * (double)(s->mk - 2);
}

/* Plane l of the block (l = -1 and n are p's halos). */
#define PL(h, l) ((size_t)(h)->mj * (size_t)(h)->mk * (size_t)(l))
#define IX(h, j, k) ((size_t)(j) * (size_t)(h)->mk + (size_t)(k))

void tb_himeno_init_coefficients(const tb_himeno_block *h)
{
    size_t np = (size_t)h->n * PL(h, 1);
    for (int m = 0; m < 4; m++)
        for (size_t e = 0; e < np; e++)
            h->a[m * np + e] = m < 3 ? 1.0f : (float)(1.0 / 6.0);
    for (size_t e = 0; e < 3 * np; e++) {
        h->b[e] = 0.0f;
        h->c[e] = 1.0f;
    }
    for (size_t e = 0; e < np; e++) {
        h->bnd[e] = 1.0f;
        h->wrk1[e] = 0.0f;
        h->wrk2[e] = 0.0f;
    }
}

void tb_himeno_init(const tb_himeno_block *h)
{
    size_t plane = PL(h, 1);
    float den = (float)((h->mi - 1) * (h->mi - 1));
    tb_himeno_init_coefficients(h);
    for (int l = -1; l <= h->n; l++) {
        int i = h->start + 1 + l;
        float v = (float)(i * i) / den;
        float *pl = h->p + PL(h, l + 1);
        for (size_t e = 0; e < plane; e++)
            pl[e] = v;
    }
}

float tb_himeno_sweep(const tb_himeno_block *h, int l0, int l1)
{
    const size_t np = (size_t)h->n * PL(h, 1);
    const float *a0 = h->a, *a1 = h->a + np, *a2 = h->a + 2 * np, *a3 = h->a + 3 * np;
    const float *b0 = h->b, *b1 = h->b + np, *b2 = h->b + 2 * np;
    const float *c0 = h->c, *c1 = h->c + np, *c2 = h->c + 2 * np;
    const float omega = 0.8f;
    const size_t sj = (size_t)h->mk, si = PL(h, 1);
    float gosa = 0.0f;
    for (int l = l0; l < l1; l++) {
        const float *p = h->p + PL(h, l + 1); /* p at (i, 0, 0) */
        size_t o = PL(h, l);                  /* the other arrays at (i, 0, 0) */
        for (int j = 1; j < h->mj - 1; j++)
            for (int k = 1; k < h->mk - 1; k++) {
                size_t x = IX(h, j, k), y = o + x;
                float s0 = a0[y] * p[x + si] + a1[y] * p[x + sj] + a2[y] * p[x + 1] +
                           b0[y] * (p[x + si + sj] - p[x + si - sj] - p[x - si + sj] +
                                    p[x - si - sj]) +
                           b1[y] * (p[x + sj + 1] - p[x - sj + 1] - p[x + sj - 1] +
                                    p[x - sj - 1]) +
                           b2[y] * (p[x + si + 1] - p[x - si + 1] - p[x + si - 1] +
                                    p[x - si - 1]) +
                           c0[y] * p[x - si] + c1[y] * p[x - sj] + c2[y] * p[x - 1] +
                           h->wrk1[y];
                float ss = (s0 * a3[y] - p[x]) * h->bnd[y];
                gosa += ss * ss;
                h->wrk2[y] = p[x] + omega * ss;
            }
    }
    return gosa;
}

void tb_himeno_copy(const tb_himeno_block *h, int l0, int l1)
{
    for (int l = l0; l < l1; l++) {
        float *p = h->p + PL(h, l + 1);
        const float *w = h->wrk2 + PL(h, l);
        for (int j = 1; j < h->mj - 1; j++)
            memcpy(p + IX(h, j, 1), w + IX(h, j, 1), (size_t)(h->mk - 2) * sizeof *p);
    }
}

uint64_t tb_himeno_bitsum(const tb_himeno_block *h, int with_lo, int with_hi)
{
    uint64_t sum = 0;
    size_t plane = PL(h, 1);
    for (int l = with_lo ? -1 : 0; l < h->n + (with_hi ? 1 : 0); l++) {
        const float *pl = h->p + PL(h, l + 1);
        for (size_t e = 0; e < plane; e++) {
            uint32_t u;
            memcpy(&u, &pl[e], sizeof u);
            sum += u;
        }
    }
    return sum;
}
