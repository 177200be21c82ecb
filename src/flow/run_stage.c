/*
 * run_stage.c - the files of a workflow run (run.c) before it starts: the
 * run's directories on every rank, the workflow's input files staged into
 * rank 0's store, and what a run with --resume keeps of the earlier one.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "flow/run_internal.h"
#include "run/coll.h"

/* Copy src to dst through dst.part, renamed at the end. */
int tb__frun_copy_file(const char *src, const char *dst)
{
    char part[PATH_MAX * 2 + 8];
    snprintf(part, sizeof part, "%s.part", dst);
    int in = open(src, O_RDONLY), out = -1, rc = -1;
    if (in >= 0)
        out = open(part, O_WRONLY | O_CREAT | O_TRUNC, 0666);
    if (in >= 0 && out >= 0) {
        char buf[65536];
        ssize_t k;
        rc = 0;
        while ((k = read(in, buf, sizeof buf)) > 0)
            if (write(out, buf, (size_t)k) != k) {
                rc = -1;
                break;
            }
        if (k < 0)
            rc = -1;
    }
    if (in >= 0)
        close(in);
    if (out >= 0 && close(out) != 0)
        rc = -1;
    if (rc == 0 && rename(part, dst) != 0)
        rc = -1;
    if (rc != 0)
        unlink(part);
    return rc;
}

/* Rank 0: the workflow's inputs into its store. */
int tb__frun_stage_inputs(runner *r)
{
    const tb_flow *f = r->f;
    const char *in = r->o->input_dir ? r->o->input_dir : ".";
    for (size_t i = 0; i < f->nfiles; i++) {
        if (!r->is_input[i])
            continue;
        char dst[PATH_MAX * 2];
        snprintf(dst, sizeof dst, "%s/%s", r->store, f->fname[i]);
        if (r->o->synthetic) {
            if (tb__frun_write_synthetic(dst, f->fname[i], tb__frun_scaled_size(r, i)) != 0)
                return tb__frun_rfail(r, TB_ERR_IO, "%s: cannot write: %s", dst, strerror(errno));
            continue;
        }
        char src[PATH_MAX * 2], abs[PATH_MAX];
        snprintf(src, sizeof src, "%s/%s", in, f->fname[i]);
        if (!realpath(src, abs)) {
            /* who reads it, for the message */
            const char *reader = "?";
            for (size_t k = 0; k < f->nuse; k++)
                if (f->use[k].file == i && !f->use[k].output) {
                    reader = f->id[f->use[k].task];
                    break;
                }
            return tb__frun_rfail(r, TB_ERR_NOTFOUND,
                                  "%s: workflow input '%s' (read by task '%s') is not in %s: %s",
                                  f->name, f->fname[i], reader, in, strerror(errno));
        }
        unlink(dst); /* a work directory used before */
        if (symlink(abs, dst) != 0)
            return tb__frun_rfail(r, TB_ERR_IO, "%s: cannot link: %s", dst, strerror(errno));
    }
    return TB_OK;
}

/* Path of file `name` written on rank `rank` of the run kept in dir
 * (either layout: rank stores, or the shared one), if it is there. */
static int kept_file(const char *dir, int rank, const char *name, char *out, size_t n)
{
    struct stat st;
    if (tb__frun_strf(out, n, "%s/rank-%d/files/%s", dir, rank, name) == 0 && stat(out, &st) == 0 &&
        S_ISREG(st.st_mode))
        return 1;
    return tb__frun_strf(out, n, "%s/files/%s", dir, name) == 0 && stat(out, &st) == 0 &&
           S_ISREG(st.st_mode);
}

/* --resume LOG: the tasks LOG says ended well and whose outputs are still
 * in the directory it names are done; their outputs are linked into rank
 * 0's store.  Returns the count in *n. */
int tb__frun_resume_setup(runner *r, size_t *n)
{
    const tb_flow *f = r->f;
    const char *path = r->o->resume;
    char *text = NULL, err[480];
    size_t len;
    *n = 0;
    if (tb_read_file(path, (size_t)1 << 30, &text, &len, err, sizeof err) != TB_OK)
        return tb__frun_rfail(r, TB_ERR_INVALID, "--resume: %s", err);
    tb__flow_resume log;
    int rc = tb__flow_resume_parse(f, text, len, path, &log, err, sizeof err);
    free(text);
    if (rc)
        return tb__frun_rfail(r, rc, "--resume: %s", err);
    const char *dir = log.work_dir;
    int *rank_of = log.rank;
    r->resumed = calloc(f->n ? f->n : 1, 1);
    if (!r->resumed)
        rc = tb__frun_rfail(r, TB_ERR_NOMEM, "out of memory");
    for (size_t t = 0; t < f->n && !rc; t++) {
        if (rank_of[t] < 0)
            continue;
        const uint32_t *out;
        size_t nout = tb_flow_task_files(f, t, 1, &out), i;
        char src[PATH_MAX];
        for (i = 0; i < nout; i++)
            if (!kept_file(dir, rank_of[t], f->fname[out[i]], src, sizeof src))
                break;
        if (i == nout)         /* else an output is gone: it runs again */
            r->resumed[t] = 1; /* a candidate until its parents are known */
    }
    /* a task whose parent runs again runs again too (its inputs change) */
    for (size_t i = 0; i < f->n && !rc; i++) {
        size_t t = f->topo[i];
        for (size_t j = f->poff[t]; j < f->poff[t + 1] && r->resumed[t]; j++)
            r->resumed[t] = r->resumed[f->pred[j]] == 2;
        if (r->resumed[t])
            r->resumed[t] = 2;
    }
    for (size_t t = 0; t < f->n && !rc; t++) {
        r->resumed[t] = r->resumed[t] == 2;
        if (!r->resumed[t])
            continue;
        const uint32_t *out;
        size_t nout = tb_flow_task_files(f, t, 1, &out);
        for (size_t i = 0; i < nout && !rc; i++) {
            char src[PATH_MAX], dst[PATH_MAX * 2];
            kept_file(dir, rank_of[t], f->fname[out[i]], src, sizeof src);
            tb__frun_strf(dst, sizeof dst, "%s/%s", r->store, f->fname[out[i]]);
            unlink(dst);
            if (symlink(src, dst) != 0)
                rc = tb__frun_rfail(r, TB_ERR_IO, "%s: cannot link: %s", dst, strerror(errno));
            else if (r->o->shared_fs)
                memset(r->have + (size_t)out[i] * (size_t)r->size, 1, (size_t)r->size);
            else
                r->have[(size_t)out[i] * (size_t)r->size] = 1;
        }
        (*n)++;
        if (!rc)
            rc = tb__frun_log_attempt(r, (uint32_t)t, 1, 0, 0.0, 0.0, 0, 0, NULL);
        if (!rc)
            r->log[r->nlog - 1].resumed = 1;
    }
    tb__flow_resume_free(&log);
    return rc;
}

/* Remove the work directory this run made (no --work-dir): every rank its
 * own part, then rank 0 the rest.  Collective over comm. */
void tb__frun_remove_made(runner *r, MPI_Comm comm)
{
    char mine[PATH_MAX + 32];
    snprintf(mine, sizeof mine, "%s/rank-%d", r->root, r->rank);
    if (r->root[0])
        tb__frun_rm_tree(mine);
    tb__run_barrier(comm);
    if (r->rank == 0 && r->root[0])
        tb__frun_rm_tree(r->root);
}

/* Collective: the run's directory (rank 0 names it: --work-dir, or a new
 * one in TMPDIR, *made) and each rank's store and task directories. */
int tb__frun_make_dirs(runner *r, MPI_Comm comm, int *made)
{
    const tb_flow_run_opts *o = r->o;
    int rc = TB_OK;
    if (r->rank == 0) {
        if (o->work_dir) {
            /* absolute: tasks' links to their inputs point into it */
            if (tb__frun_mkdir_p(o->work_dir) != 0 || !realpath(o->work_dir, r->root))
                rc = tb__frun_rfail(r, TB_ERR_IO, "%s: cannot create: %s", o->work_dir,
                                    strerror(errno));
        } else {
            const char *tmp = getenv("TMPDIR");
            snprintf(r->root, sizeof r->root, "%s/tenbin-flow-XXXXXX", tmp && *tmp ? tmp : "/tmp");
            char abs[PATH_MAX];
            if (!mkdtemp(r->root))
                rc =
                    tb__frun_rfail(r, TB_ERR_IO, "%s: cannot create: %s", r->root, strerror(errno));
            *made = rc == TB_OK;
            if (*made && realpath(r->root, abs))
                memcpy(r->root, abs, sizeof abs);
        }
    }
    tb__run_bcast(comm, r->root, sizeof r->root);
    tb__run_bcast(comm, made, sizeof *made);
    if (!rc) {
        int cut = o->shared_fs ? tb__frun_strf(r->store, sizeof r->store, "%s/files", r->root)
                               : tb__frun_strf(r->store, sizeof r->store, "%s/rank-%d/files",
                                               r->root, r->rank);
        cut |= tb__frun_strf(r->tasks, sizeof r->tasks, "%s/rank-%d/tasks", r->root, r->rank);
        if (cut || strlen(r->tasks) > PATH_MAX - 256)
            rc = tb__frun_rfail(r, TB_ERR_INVALID, "%s: the work directory's path is too long",
                                r->root);
        else if (tb__frun_mkdir_p(r->store) != 0 || tb__frun_mkdir_p(r->tasks) != 0)
            rc = tb__frun_rfail(r, TB_ERR_IO, "rank %d: %s: cannot create: %s", r->rank, r->root,
                                strerror(errno));
    }
    return rc;
}
