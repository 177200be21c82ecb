/*
 * agree.c - every rank runs with the same configuration (see agree.h).
 */
#include "run/agree.h"

#include "tenbin/core.h"

#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

tb__agree_item tb__agree_double(const char *name, double v)
{
    tb__agree_item it = {name, 0, 1};
    memcpy(&it.v, &v, sizeof v);
    return it;
}

tb__agree_item tb__agree_int(const char *name, int64_t v) { return (tb__agree_item){name, v, 0}; }

int tb__run_agree(MPI_Comm comm, const char *who, const tb__agree_item *items, int n)
{
    if (n <= 0)
        return TB_OK;
    /* one reduction: the maximum of each value and of its negation (-min);
     * INT64_MIN has no negation, so values are offset into the open range */
    int64_t *v = malloc(2 * (size_t)n * sizeof *v);
    if (!v)
        return TB_ERR_NOMEM;
    for (int i = 0; i < n; i++) {
        int64_t x = items[i].v == INT64_MIN ? INT64_MIN + 1 : items[i].v;
        v[i] = x;
        v[n + i] = -x;
    }
    int rank = 0;
    MPI_Comm_rank(comm, &rank);
    if (MPI_Allreduce(MPI_IN_PLACE, v, 2 * n, MPI_INT64_T, MPI_MAX, comm) != MPI_SUCCESS) {
        free(v);
        return TB_ERR_MPI;
    }
    int rc = TB_OK;
    for (int i = 0; i < n && rc == TB_OK; i++) {
        int64_t hi = v[i], lo = -v[n + i];
        if (hi == lo)
            continue;
        rc = TB_ERR_INVALID;
        if (rank != 0)
            break;
        if (items[i].is_double) {
            double a, b;
            memcpy(&a, &lo, sizeof a);
            memcpy(&b, &hi, sizeof b);
            TB_LOG_ERR("%s: ranks disagree on %s (%.17g on one, %.17g on another): every rank "
                       "must make the same calls", who, items[i].name, a, b);
        } else {
            TB_LOG_ERR("%s: ranks disagree on %s (from %" PRId64 " to %" PRId64 "): every rank "
                       "must make the same calls", who, items[i].name, lo, hi);
        }
    }
    free(v);
    return rc;
}

int tb__run_first_error(MPI_Comm comm, int rc, char *err, size_t errlen)
{
    int rank, bad = rc != TB_OK ? 0 : INT_MAX, first;
    MPI_Comm_rank(comm, &rank);
    if (rc != TB_OK)
        bad = rank;
    MPI_Allreduce(&bad, &first, 1, MPI_INT, MPI_MIN, comm);
    if (first == INT_MAX)
        return TB_OK;
    char buf[512];
    int code = rc;
    snprintf(buf, sizeof buf, "%s", rank == first ? err : "");
    MPI_Bcast(buf, (int)sizeof buf, MPI_CHAR, first, comm);
    MPI_Bcast(&code, 1, MPI_INT, first, comm);
    if (err && errlen)
        snprintf(err, errlen, "%s", buf);
    return code;
}
