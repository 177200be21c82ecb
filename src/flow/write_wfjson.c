/*
 * write_wfjson.c - writing a finalized workflow as WfCommons WfFormat 1.5.
 *
 * Tasks keep their ids (also used as names) and files; the runtime of a task
 * is its work, i.e. seconds on a host of speed 1, and no machine is written,
 * so reading the file back gives the same work.  An edge whose data is not
 * the bytes of files its parent writes and its child reads gets a file of
 * its own, "<from>__<to>", of the missing size: read back, every edge has
 * the data it had.  The execution part is required by the schema but the
 * workflow never ran: makespan 0 and a fixed date keep the output
 * reproducible.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flow/flow_internal.h"

/* Files of each task (CSR over tasks, inputs then outputs per task) and the
 * files synthesized for edges. */
typedef struct wf_writer {
    const tb_flow *f;
    tb_buf *out;
    size_t *off;      /* 2n + 1: inputs of t at [off[2t], off[2t+1]), outputs up to off[2t+2] */
    uint32_t *file;   /* nuse */
    char **syn;       /* per edge (succ index): its own file, or NULL */
    double *syn_size; /* per edge */
    tb_flow_names syn_names;
} wf_writer;

static void writer_free(wf_writer *w)
{
    if (w->syn != NULL)
        for (size_t e = 0; e < w->f->m; e++)
            free(w->syn[e]);
    free(w->syn);
    free(w->syn_size);
    free(w->off);
    free(w->file);
    tb__flow_names_free(&w->syn_names);
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* Per task its input and output files, each run sorted by file index.  The
 * use array is in any order (finalize may have sorted it). */
static int index_uses(wf_writer *w)
{
    const tb_flow *f = w->f;
    w->off = calloc(2 * f->n + 2, sizeof *w->off);
    w->file = malloc((f->nuse ? f->nuse : 1) * sizeof *w->file);
    if (w->off == NULL || w->file == NULL)
        return TB_ERR_NOMEM;
    for (size_t u = 0; u < f->nuse; u++)
        w->off[2 * f->use[u].task + (size_t)f->use[u].output + 1]++;
    for (size_t k = 0; k < 2 * f->n; k++)
        w->off[k + 1] += w->off[k];
    size_t *fill = malloc((2 * f->n + 1) * sizeof *fill);
    if (fill == NULL)
        return TB_ERR_NOMEM;
    memcpy(fill, w->off, (2 * f->n + 1) * sizeof *fill);
    for (size_t u = 0; u < f->nuse; u++)
        w->file[fill[2 * f->use[u].task + (size_t)f->use[u].output]++] = f->use[u].file;
    free(fill);
    for (size_t k = 0; k < 2 * f->n; k++)
        qsort(w->file + w->off[k], w->off[k + 1] - w->off[k], sizeof *w->file, cmp_u32);
    return TB_OK;
}

/* Bytes of the distinct files `from` writes and `to` reads (as finalize
 * counts them); *any says whether there is one. */
static double shared_bytes(const wf_writer *w, size_t from, size_t to, int *any)
{
    const uint32_t *o = w->file, *in = w->file;
    size_t i = w->off[2 * from + 1], ie = w->off[2 * from + 2];
    size_t j = w->off[2 * to], je = w->off[2 * to + 1];
    double sum = 0;
    *any = 0;
    while (i < ie && j < je) {
        if (o[i] < in[j]) {
            i++;
            continue;
        }
        if (o[i] > in[j]) {
            j++;
            continue;
        }
        uint32_t file = o[i];
        sum += w->f->fsize[file];
        *any = 1;
        while (i < ie && o[i] == file)
            i++;
        while (j < je && in[j] == file)
            j++;
    }
    return sum;
}

/* A name for the file of edge e that no file or earlier edge file has. */
static int name_edge_file(wf_writer *w, size_t e, size_t from, size_t to)
{
    const tb_flow *f = w->f;
    size_t n = strlen(f->id[from]) + strlen(f->id[to]) + 32;
    char *name = malloc(n);
    if (name == NULL)
        return TB_ERR_NOMEM;
    snprintf(name, n, "%s__%s", f->id[from], f->id[to]);
    for (unsigned long k = 2;
         tb__flow_names_find(&f->fnames, f->fname, name, NULL) == TB_OK ||
         tb__flow_names_find(&w->syn_names, w->syn, name, NULL) == TB_OK;
         k++)
        snprintf(name, n, "%s__%s#%lu", f->id[from], f->id[to], k);
    w->syn[e] = name;
    return tb__flow_names_add(&w->syn_names, w->syn, e);
}

/* Which edges need a file of their own, and of what size. */
static int edge_files(wf_writer *w)
{
    const tb_flow *f = w->f;
    w->syn = calloc(f->m ? f->m : 1, sizeof *w->syn);
    w->syn_size = calloc(f->m ? f->m : 1, sizeof *w->syn_size);
    if (w->syn == NULL || w->syn_size == NULL)
        return TB_ERR_NOMEM;
    for (size_t t = 0; t < f->n; t++) {
        for (size_t e = f->soff[t]; e < f->soff[t + 1]; e++) {
            int any;
            double have = shared_bytes(w, t, f->succ[e], &any);
            double miss = f->sdata[e] - have;
            /* files that carry the data (up to rounding) suffice */
            int need = any ? miss > 1e-9 * fmax(1.0, f->sdata[e]) : f->sdata[e] > 0;
            if (!need)
                continue;
            w->syn_size[e] = any ? miss : f->sdata[e];
            TB_CHECK(name_edge_file(w, e, t, f->succ[e]));
        }
    }
    return TB_OK;
}

/* ---- JSON output ------------------------------------------------------------ */

static int put_str(tb_buf *b, const char *s)
{
    TB_CHECK(tb_buf_append(b, "\"", 1));
    for (const char *p = s; *p; p++) {
        unsigned char c = (unsigned char)*p;
        if (c == '"' || c == '\\')
            TB_CHECK(tb_buf_printf(b, "\\%c", c));
        else if (c < 0x20)
            TB_CHECK(tb_buf_printf(b, "\\u%04x", c));
        else
            TB_CHECK(tb_buf_append(b, p, 1));
    }
    return tb_buf_append(b, "\"", 1);
}

/* Bytes as an integer when they are one (the schema wants integers). */
static int put_bytes(tb_buf *b, double x)
{
    if (x == floor(x))
        return tb_buf_printf(b, "%.0f", x);
    return tb_buf_printf(b, "%.17g", x);
}

/* "key": [ids of tasks in list[0..n)] */
static int put_tasks(wf_writer *w, const char *key, const uint32_t *list, size_t n)
{
    TB_CHECK(tb_buf_printf(w->out, ", \"%s\": [", key));
    for (size_t k = 0; k < n; k++) {
        TB_CHECK(tb_buf_printf(w->out, "%s", k ? ", " : ""));
        TB_CHECK(put_str(w->out, w->f->id[list[k]]));
    }
    return tb_buf_printf(w->out, "]");
}

/* "key": [files of task t: its own, then those of its edges] */
static int put_files(wf_writer *w, size_t t, int output)
{
    const tb_flow *f = w->f;
    const char *sep = "";
    TB_CHECK(tb_buf_printf(w->out, ", \"%s\": [", output ? "outputFiles" : "inputFiles"));
    for (size_t k = w->off[2 * t + (size_t)output]; k < w->off[2 * t + (size_t)output + 1]; k++) {
        TB_CHECK(tb_buf_printf(w->out, "%s", sep));
        TB_CHECK(put_str(w->out, f->fname[w->file[k]]));
        sep = ", ";
    }
    size_t a = output ? f->soff[t] : f->poff[t], z = output ? f->soff[t + 1] : f->poff[t + 1];
    for (size_t k = a; k < z; k++) {
        size_t e = output ? k : f->pedge[k];
        if (w->syn[e] == NULL)
            continue;
        TB_CHECK(tb_buf_printf(w->out, "%s", sep));
        TB_CHECK(put_str(w->out, w->syn[e]));
        sep = ", ";
    }
    return tb_buf_printf(w->out, "]");
}

static int put_spec_tasks(wf_writer *w)
{
    const tb_flow *f = w->f;
    TB_CHECK(tb_buf_printf(w->out, "      \"tasks\": ["));
    for (size_t t = 0; t < f->n; t++) {
        TB_CHECK(tb_buf_printf(w->out, "%s\n        {\"name\": ", t ? "," : ""));
        TB_CHECK(put_str(w->out, f->id[t]));
        TB_CHECK(tb_buf_printf(w->out, ", \"id\": "));
        TB_CHECK(put_str(w->out, f->id[t]));
        TB_CHECK(put_tasks(w, "parents", f->pred + f->poff[t], f->poff[t + 1] - f->poff[t]));
        TB_CHECK(put_tasks(w, "children", f->succ + f->soff[t], f->soff[t + 1] - f->soff[t]));
        TB_CHECK(put_files(w, t, 0));
        TB_CHECK(put_files(w, t, 1));
        TB_CHECK(tb_buf_printf(w->out, "}"));
    }
    return tb_buf_printf(w->out, "\n      ],\n");
}

static int put_file(tb_buf *b, int first, const char *name, double bytes)
{
    TB_CHECK(tb_buf_printf(b, "%s\n        {\"id\": ", first ? "" : ","));
    TB_CHECK(put_str(b, name));
    TB_CHECK(tb_buf_printf(b, ", \"sizeInBytes\": "));
    TB_CHECK(put_bytes(b, bytes));
    return tb_buf_printf(b, "}");
}

/* The workflow's files, then the edges' own files in edge order. */
static int put_spec_files(wf_writer *w)
{
    const tb_flow *f = w->f;
    int first = 1;
    TB_CHECK(tb_buf_printf(w->out, "      \"files\": ["));
    for (size_t i = 0; i < f->nfiles; i++, first = 0)
        TB_CHECK(put_file(w->out, first, f->fname[i], f->fsize[i]));
    for (size_t e = 0; e < f->m; e++) {
        if (w->syn[e] == NULL)
            continue;
        TB_CHECK(put_file(w->out, first, w->syn[e], w->syn_size[e]));
        first = 0;
    }
    return tb_buf_printf(w->out, "\n      ]\n");
}

static int put_execution(wf_writer *w)
{
    const tb_flow *f = w->f;
    TB_CHECK(tb_buf_printf(w->out, "    \"execution\": {\n"
                                   "      \"makespanInSeconds\": 0,\n"
                                   "      \"executedAt\": \"1970-01-01T00:00:00+00:00\",\n"
                                   "      \"tasks\": ["));
    for (size_t t = 0; t < f->n; t++) {
        TB_CHECK(tb_buf_printf(w->out, "%s\n        {\"id\": ", t ? "," : ""));
        TB_CHECK(put_str(w->out, f->id[t]));
        TB_CHECK(tb_buf_printf(w->out, ", \"runtimeInSeconds\": %.17g", tb__flow_mean_work(f, t)));
        if (f->cmd[t]) {
            TB_CHECK(tb_buf_printf(w->out, ", \"command\": {\"program\": "));
            TB_CHECK(put_str(w->out, f->cmd[t][0]));
            TB_CHECK(tb_buf_printf(w->out, ", \"arguments\": ["));
            for (size_t i = 1; f->cmd[t][i]; i++) {
                TB_CHECK(tb_buf_printf(w->out, "%s", i > 1 ? ", " : ""));
                TB_CHECK(put_str(w->out, f->cmd[t][i]));
            }
            TB_CHECK(tb_buf_printf(w->out, "]}"));
        }
        TB_CHECK(tb_buf_printf(w->out, "}"));
    }
    return tb_buf_printf(w->out, "\n      ]\n    }\n");
}

/* The instance name: the workflow's file name without its directory. */
static const char *instance_name(const tb_flow *f)
{
    const char *slash = strrchr(f->name, '/');
    const char *base = slash ? slash + 1 : f->name;
    return base[0] ? base : "workflow";
}

static int put_all(wf_writer *w)
{
    TB_CHECK(tb_buf_printf(w->out, "{\n  \"name\": "));
    TB_CHECK(put_str(w->out, instance_name(w->f)));
    TB_CHECK(tb_buf_printf(w->out, ",\n  \"description\": \"Written by tenbin\",\n"
                                   "  \"schemaVersion\": \"1.5\",\n"
                                   "  \"workflow\": {\n"
                                   "    \"specification\": {\n"));
    TB_CHECK(put_spec_tasks(w));
    TB_CHECK(put_spec_files(w));
    TB_CHECK(tb_buf_printf(w->out, "    },\n"));
    TB_CHECK(put_execution(w));
    return tb_buf_printf(w->out, "  }\n}\n");
}

int tb__flow_write_wfjson(const tb_flow *f, tb_buf *out)
{
    if (f == NULL || out == NULL)
        return TB_ERR_INVALID;
    if (!f->final)
        return TB_ERR_STATE;
    wf_writer w = {.f = f, .out = out};
    int rc = index_uses(&w);
    if (rc == TB_OK)
        rc = edge_files(&w);
    if (rc == TB_OK)
        rc = put_all(&w);
    writer_free(&w);
    return rc;
}
