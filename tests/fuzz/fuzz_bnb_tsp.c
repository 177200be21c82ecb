/*
 * fuzz_bnb_tsp.c - the TSPLIB reader of `tenbin bnb tsp` (apps/bnb/tsp.c:
 * header lines, NODE_COORD_SECTION or EDGE_WEIGHT_SECTION), then a short
 * search (fuzz_bnb.h).
 *
 * Instances of more than 1000 cities are skipped: up to 4000 are allowed,
 * and the reader's 2-opt tour of 4000 cities takes 10 s here (66 KB of
 * coordinates), which is slow, not wrong.
 */
#define _GNU_SOURCE /* memfd_create (fuzz_common.h) */
#include <ctype.h>

#include "fuzz_common.h"

/* A DIMENSION line above 1000 (as the reader reads keys: blanks, the key up
 * to ':' or a blank, then the value after the ':'). */
static int tsp_large(const uint8_t *data, size_t size)
{
    char *text = fuzz_cstr(data, size);
    int large = 0;
    for (char *line = text; line != NULL && !large;) {
        char *nl = strchr(line, '\n');
        if (nl != NULL)
            *nl = '\0';
        while (isspace((unsigned char)*line))
            line++;
        char *colon = strchr(line, ':');
        if (strncmp(line, "DIMENSION", 9) == 0 && colon != NULL)
            large = strtod(colon + 1, NULL) > 1000;
        line = nl != NULL ? nl + 1 : NULL;
    }
    free(text);
    return large;
}

#define FUZZ_BNB_PROBLEM tb_bnb_tsp
#define FUZZ_BNB_SKIP(data, size) tsp_large(data, size)
#include "fuzz_bnb.h"

/* Up to 30 cities: the root's bound is 1000 Held-Karp steps of O(n^2). */
static int fuzz_bnb_small(void *ctx, const uint8_t *data, size_t size)
{
    (void)data;
    (void)size;
    tb_buf v = TB_BUF_INIT;
    int n = 0;
    if (tb_bnb_tsp.view_json(ctx, &v) != TB_OK || tb_buf_append(&v, "", 1) != TB_OK ||
        sscanf((const char *)v.data, "{\"n\": %d", &n) != 1)
        abort();
    tb_buf_free(&v);
    return n <= 30;
}
