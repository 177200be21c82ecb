/*
 * agree.h - every rank runs with the same configuration (the run layer,
 * src/run/; internal).
 *
 * A collective run whose ranks were configured differently (one rank with
 * another policy, gap or instance) hangs or gives a wrong answer without a
 * word.  Before it starts, each mechanism passes the values every rank must
 * share; a difference is one line on rank 0 naming the first value that
 * differs, and TB_ERR_INVALID on every rank (the run does not start).
 */
#ifndef TB_RUN_AGREE_H
#define TB_RUN_AGREE_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

typedef struct tb__agree_item {
    const char *name; /* "the policy", "the gap", ... */
    int64_t v;        /* a count, a code, or the bits of a double (tb__agree_double) */
    int is_double;    /* print the range as doubles */
} tb__agree_item;

/* An item for a double, compared bit for bit. */
tb__agree_item tb__agree_double(const char *name, double v);
/* An item for a count or a code. */
tb__agree_item tb__agree_int(const char *name, int64_t v);

/* Collective over comm: TB_OK when every rank passed the same n values (and
 * names, in the same order), else TB_ERR_INVALID on every rank after rank 0
 * logged "WHO: ranks disagree on NAME (from A to B): every rank must make the
 * same calls".  TB_ERR_MPI if the reduction fails. */
int tb__run_agree(MPI_Comm comm, const char *who, const tb__agree_item *items, int n);

/* Collective over comm, after each rank set up its part of a run: TB_OK if
 * every rank's rc is TB_OK; else every rank returns the code of the lowest
 * rank that failed, and gets that rank's line (its err) in err, so the
 * failure reads the same everywhere and the run does not start. */
int tb__run_first_error(MPI_Comm comm, int rc, char *err, size_t errlen);

#endif /* TB_RUN_AGREE_H */
