/*
 * fuzz_bnb_knapsack.c - the 0/1 knapsack reader of `tenbin bnb knapsack`
 * (apps/bnb/knapsack.c: `n capacity`, n profits, n weights), then a short
 * search (fuzz_bnb.h).
 */
#define _GNU_SOURCE /* memfd_create (fuzz_common.h) */
#define FUZZ_BNB_PROBLEM tb_bnb_knapsack
#include "fuzz_bnb.h"

/* Up to 100000 items: a node costs O(n). */
static int fuzz_bnb_small(void *ctx, const uint8_t *data, size_t size)
{
    (void)data;
    (void)size;
    tb_buf root = TB_BUF_INIT;
    int small = tb_bnb_knapsack.ops->root(ctx, &root) == TB_OK && root.len <= 20 + 100000 / 8;
    tb_buf_free(&root);
    return small;
}
