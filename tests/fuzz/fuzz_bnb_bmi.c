/*
 * fuzz_bnb_bmi.c - the BMI eigenvalue problem's reader of `tenbin bnb bmi`
 * (apps/bnb/bmi.c: JSON with m, nx, ny, the matrices and the box), then a
 * short search (fuzz_bnb.h).
 */
#define _GNU_SOURCE /* memfd_create (fuzz_common.h) */
#include <cjson/cJSON.h>

#define FUZZ_BNB_PROBLEM tb_bnb_bmi
#include "fuzz_bnb.h"

/* m <= 32 and at most 2^10 vertices: a node is an eigenproblem of m x m
 * and an enumeration of the smaller side's vertices. */
static int fuzz_bnb_small(void *ctx, const uint8_t *data, size_t size)
{
    (void)ctx;
    char *text = fuzz_cstr(data, size);
    cJSON *root = cJSON_Parse(text);
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(root, "m");
    const cJSON *nx = cJSON_GetObjectItemCaseSensitive(root, "nx");
    const cJSON *ny = cJSON_GetObjectItemCaseSensitive(root, "ny");
    int small = cJSON_IsNumber(m) && cJSON_IsNumber(nx) && cJSON_IsNumber(ny) &&
                m->valuedouble <= 32 && fmin(nx->valuedouble, ny->valuedouble) <= 10;
    cJSON_Delete(root);
    free(text);
    return small;
}
