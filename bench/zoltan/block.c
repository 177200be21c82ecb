/*
 * block.c - partition quality of tb_redist_partition against Zoltan's BLOCK
 * method with speed-proportional part sizes, on the same inputs.
 *
 * For each case (units N, part speeds s_i) both give consecutive blocks;
 * the figure of merit is the largest predicted time max_i count_i / s_i,
 * printed with the bound N / sum(s) and the ratio Zoltan / tenbin (>= 1:
 * tenbin's partition is at least as good).  Zoltan may leave a part empty;
 * tenbin's redistribution keeps one unit per rank (min_units 1), so the
 * comparison uses tenbin with min_units 0 and prints the floor-1 figure too.  Zoltan runs on one process with
 * NUM_GLOBAL_PARTS = P and unit object weights.  Output: one CSV line per
 * case, then a summary line.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zoltan.h>

#include "tenbin.h"

typedef struct objs {
    int n;
} objs;

static int num_obj(void *data, int *ierr)
{
    *ierr = ZOLTAN_OK;
    return ((objs *)data)->n;
}

static void obj_list(void *data, int ngid, int nlid, ZOLTAN_ID_PTR gids, ZOLTAN_ID_PTR lids,
                     int wdim, float *wgts, int *ierr)
{
    (void)ngid, (void)nlid, (void)wdim, (void)wgts;
    for (int i = 0; i < ((objs *)data)->n; i++) {
        gids[i] = (ZOLTAN_ID_TYPE)i;
        lids[i] = (ZOLTAN_ID_TYPE)i;
    }
    *ierr = ZOLTAN_OK;
}

/* Zoltan BLOCK's counts per part; -1 on failure. */
static int zoltan_counts(int n, int parts, const double *speeds, uint64_t *counts)
{
    struct Zoltan_Struct *zz = Zoltan_Create(MPI_COMM_SELF);
    objs o = {n};
    char buf[32];
    Zoltan_Set_Param(zz, "DEBUG_LEVEL", "0");
    Zoltan_Set_Param(zz, "LB_METHOD", "BLOCK");
    snprintf(buf, sizeof buf, "%d", parts);
    Zoltan_Set_Param(zz, "NUM_GLOBAL_PARTS", buf);
    Zoltan_Set_Param(zz, "NUM_GID_ENTRIES", "1");
    Zoltan_Set_Param(zz, "NUM_LID_ENTRIES", "1");
    Zoltan_Set_Param(zz, "OBJ_WEIGHT_DIM", "0");
    Zoltan_Set_Param(zz, "RETURN_LISTS", "PARTS");
    Zoltan_Set_Num_Obj_Fn(zz, num_obj, &o);
    Zoltan_Set_Obj_List_Fn(zz, obj_list, &o);
    int *ids = malloc((size_t)parts * sizeof *ids), *widx = calloc((size_t)parts, sizeof *widx);
    float *sizes = malloc((size_t)parts * sizeof *sizes);
    double sum = 0;
    for (int i = 0; i < parts; i++)
        sum += speeds[i];
    for (int i = 0; i < parts; i++) {
        ids[i] = i;
        sizes[i] = (float)(speeds[i] / sum);
    }
    Zoltan_LB_Set_Part_Sizes(zz, 1, parts, ids, widx, sizes);
    int changes, ngid, nlid, nimp, nexp, *ip, *ipart, *ep, *epart;
    ZOLTAN_ID_PTR ig, il, eg, el;
    int rc = Zoltan_LB_Partition(zz, &changes, &ngid, &nlid, &nimp, &ig, &il, &ip, &ipart,
                                 &nexp, &eg, &el, &ep, &epart);
    if (rc == ZOLTAN_OK) {
        memset(counts, 0, (size_t)parts * sizeof *counts);
        /* PARTS lists every object with its part. */
        for (int i = 0; i < nexp; i++)
            counts[epart[i]]++;
    }
    Zoltan_LB_Free_Part(&ig, &il, &ip, &ipart);
    Zoltan_LB_Free_Part(&eg, &el, &ep, &epart);
    Zoltan_Destroy(&zz);
    free(ids);
    free(widx);
    free(sizes);
    return rc == ZOLTAN_OK ? 0 : -1;
}

static double max_time(int parts, const uint64_t *c, const double *s, int *empty)
{
    double m = 0;
    *empty = 0;
    for (int i = 0; i < parts; i++) {
        double t = (double)c[i] / s[i];
        m = t > m ? t : m;
        *empty += c[i] == 0;
    }
    return m;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    float ver;
    if (Zoltan_Initialize(argc, argv, &ver) != ZOLTAN_OK) {
        fprintf(stderr, "bench zoltan: Zoltan_Initialize failed\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    static const int units[] = {30, 62, 126, 254, 510};
    enum { NSETS = 7 };
    static const char *names[NSETS] = {"1,.5", "1,1,.5", "1,1,1,.5", "1,2,3,4", "rand8",
                                       "rand16", "rand64"};
    printf("case,units,parts,bound,tenbin,tenbin_floor1,zoltan,zoltan_over_tenbin,zoltan_empty_parts\n");
    int worse = 0, better = 0, total = 0;
    double worst_ratio = 1;
    tb_rng g;
    tb_rng_seed(&g, 5);
    for (int set = 0; set < NSETS; set++) {
        double s[64];
        int p;
        switch (set) {
        case 0: p = 2; s[0] = 1; s[1] = .5; break;
        case 1: p = 3; s[0] = s[1] = 1; s[2] = .5; break;
        case 2: p = 4; s[0] = s[1] = s[2] = 1; s[3] = .5; break;
        case 3: p = 4; for (int i = 0; i < 4; i++) s[i] = i + 1; break;
        default:
            p = set == 4 ? 8 : set == 5 ? 16 : 64;
            for (int i = 0; i < p; i++)
                s[i] = tb_rng_uniform(&g, 0.2, 1.0);
        }
        for (size_t u = 0; u < sizeof units / sizeof units[0]; u++) {
            int n = units[u];
            if (n < p)
                continue;
            uint64_t ct[64], c1[64], cz[64];
            double sum = 0;
            for (int i = 0; i < p; i++)
                sum += s[i];
            if (tb_redist_partition((uint64_t)n, p, s, 0, ct) != TB_OK ||
                tb_redist_partition((uint64_t)n, p, s, 1, c1) != TB_OK ||
                zoltan_counts(n, p, s, cz) != 0) {
                fprintf(stderr, "bench zoltan: partition failed (%s, %d units)\n", names[set], n);
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
            int et, e1, ez;
            double tt = max_time(p, ct, s, &et), t1 = max_time(p, c1, s, &e1),
                   tz = max_time(p, cz, s, &ez);
            printf("%s,%d,%d,%.4f,%.4f,%.4f,%.4f,%.4f,%d\n", names[set], n, p, n / sum, tt, t1,
                   tz, tz / tt, ez);
            total++;
            worse += tz < tt - 1e-12;
            better += tz > tt + 1e-12;
            worst_ratio = tz / tt < worst_ratio ? tz / tt : worst_ratio;
        }
    }
    printf("# %d cases: tenbin's largest block time is lower in %d, equal in %d, higher in %d "
           "(smallest zoltan/tenbin ratio %.4f); Zoltan %.2f\n",
           total, better, total - better - worse, worse, worst_ratio, (double)ver);
    MPI_Finalize();
    return worse ? 1 : 0;
}
