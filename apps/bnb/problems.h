/*
 * problems.h - the problems `tenbin bnb` solves, each a small file against
 * the public API (tenbin/bnb.h): how to read its input, its ops table, and
 * how to show and check a solution.
 */
#ifndef TB_APPS_BNB_PROBLEMS_H
#define TB_APPS_BNB_PROBLEMS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "tenbin/bnb.h"
#include "tenbin/core.h"

typedef struct tb_bnb_problem {
    const char *name;
    const tb_bnb_ops *ops;
    /* Read the instance in path; on error one line (with the file name and
     * the line where there is one) in err, and TB_ERR_PARSE or TB_ERR_IO. */
    int (*load)(const char *path, void **ctx, char *err, size_t errlen);
    void (*destroy)(void *ctx);
    /* The solution as a JSON value (knapsack: chosen items, 0-based). */
    int (*solution_json)(void *ctx, const void *sol, size_t len, tb_buf *out);
    /* TB_OK if sol is feasible and worth exactly value. */
    int (*check)(void *ctx, const void *sol, size_t len, double value);
    /* 0 for a problem solved exactly (the gap may be 0, and is by default);
     * above 0 for a continuous one, which is never proven exactly: --gap
     * must then be above 0, and this is its default. */
    double default_gap;
    /* Non-zero if the solution is a JSON object whose members are repeated
     * at the top of the --json result (bmi: "x" and "y"). */
    int solution_at_top;
    /* Optional: what the live view draws the incumbent on, as a JSON object
     * (tsp: the cities' coordinates). */
    int (*view_json)(void *ctx, tb_buf *out);
    /* Optional: counters of the problem's own work (bmi: its semidefinite
     * bounds), ncounts of them named by count_names; counts() writes this
     * rank's (at most 16).  The result shows them summed over the ranks. */
    int ncounts;
    const char *const *count_names;
    void (*counts)(void *ctx, uint64_t *out);
    /* Optional: 0 when this instance's split (tb_bnb_ops) is not to be used
     * (bmi with the semidefinite bound, whose cuts must be the relaxation's);
     * NULL: the split is used where the ops have one. */
    int (*splits)(void *ctx);
} tb_bnb_problem;

extern const tb_bnb_problem tb_bnb_knapsack;
extern const tb_bnb_problem tb_bnb_tsp;
extern const tb_bnb_problem tb_bnb_bmi;

/* Write a random BMI instance as JSON (symmetric m x m matrices with entries
 * uniform in [-1, 1], the box [-1, 1] in every coordinate). */
int tb_bnb_bmi_generate(FILE *out, int m, int nx, int ny, uint64_t seed);
/* The same with every entry times scale (the tests' badly scaled instances). */
int tb_bnb_bmi_generate_scaled(FILE *out, int m, int nx, int ny, uint64_t seed, double scale);

#endif
