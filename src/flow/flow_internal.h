/*
 * flow_internal.h - the workflow structure shared by the flow module's files.
 *
 * While building, tasks, edges, files and uses are appended to arrays;
 * tb_flow_finalize turns edges into compressed successor and predecessor
 * lists (CSR, each list sorted by task index), computes a topological order
 * and the independent task sets.
 */
#ifndef TB_FLOW_INTERNAL_H
#define TB_FLOW_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "core/errbuf.h"
#include "tenbin/flow.h"

/* A string -> index table (open addressing, names owned by the caller). */
typedef struct tb_flow_names {
    uint32_t *slot; /* index + 1, 0 = empty */
    size_t cap;     /* power of two */
    size_t n;
} tb_flow_names;

typedef struct tb_flow_raw_edge {
    uint32_t from, to;
    double data;
} tb_flow_raw_edge;

typedef struct tb_flow_use {
    uint32_t task, file;
    int output;
} tb_flow_use;

struct tb_flow {
    char name[256];
    char err[512];
    int final;

    /* tasks */
    size_t n, cap;
    char **id;
    double *work;
    char ***cmd;         /* per task: NULL, or program and arguments, NULL-terminated */
    size_t q;            /* per-host costs: hosts (0: none) */
    double *cost;        /* n x q, row major, NAN until set */
    tb_flow_names ids;

    /* edges while building */
    tb_flow_raw_edge *raw;
    size_t nraw, capraw;

    /* files */
    size_t nfiles, capfiles;
    char **fname;
    double *fsize;
    tb_flow_names fnames;
    tb_flow_use *use;
    size_t nuse, capuse;

    /* after finalize */
    size_t m;            /* edges */
    size_t *soff;        /* n + 1 */
    uint32_t *succ;      /* m */
    double *sdata;       /* m */
    size_t *poff;        /* n + 1 */
    uint32_t *pred;      /* m */
    uint32_t *pedge;     /* m: index of the same edge in succ */
    uint32_t *topo;      /* n: a topological order (Kahn, smallest index first) */
    int32_t *its;        /* n: set of each task or -1 */
    size_t nits;
    uint32_t *its_count; /* nits */
    size_t *fin_off;     /* n + 1: each task's input files fin[fin_off[t] ..) */
    uint32_t *fin;       /* sorted by file, no repeats */
    size_t *fout_off;    /* n + 1: likewise its output files */
    uint32_t *fout;
};

/* Set f->err (printf-style) and return code. */
int tb__flow_fail(tb_flow *f, int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Names table. */
int tb__flow_names_find(const tb_flow_names *t, char *const *names, const char *key,
                        size_t *index);
int tb__flow_names_add(tb_flow_names *t, char *const *names, size_t index);
void tb__flow_names_free(tb_flow_names *t);

/* Readers of the formats: each creates, fills and finalizes *out (NULL on
 * error, with one line in err).  name is for messages. */
int tb__flow_read_text(const char *data, size_t len, const char *name, tb_flow **out, char *err,
                       size_t errlen);
int tb__flow_read_wfjson(const char *data, size_t len, const char *name, tb_flow **out,
                         char *err, size_t errlen);
int tb__flow_read_dax(const char *data, size_t len, const char *name, tb_flow **out, char *err,
                      size_t errlen);
int tb__flow_write_wfjson(const tb_flow *f, tb_buf *out);
/* A Makeflow file (write_makeflow.c); the scales are already resolved (> 0
 * when synthetic). */
int tb__flow_write_makeflow(const tb_flow *f, tb_buf *out, double time_scale,
                            double size_scale, int synthetic, char *err, size_t errlen);
int tb__flow_write_text(const tb_flow *f, tb_buf *out, char *err, size_t errlen);

/* "name: " then printf into err (if not NULL and errlen > 0); returns code.
 * The readers' messages: "wf.json: tasks[3].id: expected a string". */
int tb__flow_read_fail(char *err, size_t errlen, const char *name, int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;

/* What `tenbin flow run --resume LOG` takes from the log an earlier run
 * wrote (resume.c): that run's directory and, per task of the workflow, the
 * rank whose store kept the outputs of its attempt that ended well (exit 0,
 * no signal; the last one if the log holds several), -1 if none did. */
typedef struct tb__flow_resume {
    char *work_dir; /* non-empty */
    int *rank;      /* f->n entries, each -1 or in [0, INT_MAX] */
    size_t ndone;   /* entries >= 0 */
} tb__flow_resume;

/* Read the log text[0..len) (path names it in messages) against the
 * finalized workflow f, into *out (zeroed first; free it with
 * tb__flow_resume_free).  Touches no file.  Errors leave *out empty and one
 * line in err naming path and the JSON path: TB_ERR_PARSE (not JSON, not a
 * log, a value of the wrong kind: "log.json: tasks[3].rank: expected a
 * whole number >= 0, got 2.5"), TB_ERR_INVALID (a task that ended well is
 * not in f), TB_ERR_NOMEM. */
int tb__flow_resume_parse(const tb_flow *f, const char *text, size_t len, const char *path,
                          tb__flow_resume *out, char *err, size_t errlen);
void tb__flow_resume_free(tb__flow_resume *r);

/* 1 if task `from` writes a file task `to` reads (finalized workflows). */
int tb__flow_shares_file(const tb_flow *f, size_t from, size_t to);

/* Work of task t at speed 1; with per-host costs, their mean (the usual
 * average execution time of list schedulers). */
static inline double tb__flow_mean_work(const tb_flow *f, size_t t)
{
    if (f->q == 0)
        return f->work[t];
    double sum = 0;
    for (size_t h = 0; h < f->q; h++)
        sum += f->cost[t * f->q + h];
    return sum / (double)f->q;
}

/* Execution time of task t on host h under the hosts' current speeds. */
static inline double tb__flow_exec(const tb_flow *f, const tb_flow_hosts *H, size_t t, size_t h)
{
    if (f->q)
        return H->task_overhead + f->cost[t * f->q + h] * H->base_speed[h] / H->speed[h];
    return H->task_overhead + f->work[t] / H->speed[h];
}

/* Transfer time of data between hosts a and b. */
static inline double tb__flow_comm(const tb_flow_hosts *H, size_t a, size_t b, double data)
{
    if (a == b)
        return 0.0;
    size_t k = (size_t)H->cluster[a] * H->nclusters + (size_t)H->cluster[b];
    return H->L[k] + data * H->G[k];
}

#endif /* TB_FLOW_INTERNAL_H */
