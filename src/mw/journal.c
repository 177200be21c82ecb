/*
 * journal.c - mw's checkpoint: the journal of results delivered on rank 0
 * (tb_mw_set_checkpoint, tb_mw_set_resume).
 *
 * Each record is one delivered result: its task id (the generator's index,
 * or the order of tb_mw_add_task) and its bytes.  A resumed run hands the
 * journal's results to the result function first, in the order they were
 * delivered, then runs only the other tasks, on any number of ranks.  The
 * journal is appended on rank 0 and made durable (fsync) at most every
 * `interval` seconds, at the end, and when the run is interrupted; a kill
 * in between loses at most the results of one interval, which the resumed
 * run computes again.
 */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "core/ckpt.h"
#include "core/errbuf.h"
#include "mw/mw_internal.h"

#define KIND "mw-journal"

/* The run's identity: the caller's words and the bag's size. */
static char *identity_of(const char *what, uint64_t ntasks)
{
    size_t n = strlen(what ? what : "") + 64;
    char *s = malloc(n);
    if (s)
        snprintf(s, n, "%s%s%" PRIu64 " tasks", what ? what : "", what && *what ? "; " : "",
                 ntasks);
    return s;
}

int tb__mw_journal_resume(tb__mw_journal *j, const char *path, const char *what, uint64_t ntasks,
                          tb_mw_result_fn result, void *result_ctx, char *err, size_t errlen)
{
    char *id = identity_of(what, ntasks);
    if (!id)
        return TB_ERR_NOMEM;
    tb__ckpt_reader r;
    int rc = tb__ckpt_read(&r, path, KIND, id, err, errlen);
    free(id);
    if (rc != TB_OK)
        return rc;
    j->done = calloc(ntasks / 8 + 1, 1);
    if (!j->done) {
        tb__ckpt_reader_free(&r);
        return TB_ERR_NOMEM;
    }
    uint64_t key;
    const void *data;
    size_t len;
    while ((rc = tb__ckpt_next(&r, &key, &data, &len, err, errlen)) == 1) {
        if (key >= ntasks || (j->done[key / 8] >> (key % 8) & 1)) {
            rc = tb__errf(err, errlen, TB_ERR_PARSE,
                          "%s: record %" PRIu64 " names task %" PRIu64 ", %s", path, r.records,
                          key, key >= ntasks ? "not one of this bag" : "already delivered");
            break;
        }
        j->done[key / 8] |= (unsigned char)(1u << (key % 8));
        j->resumed++;
        if (j->open && (rc = tb__ckpt_add(&j->w, key, data, len)) != TB_OK)
            break; /* into a new checkpoint file */
        if (result && (rc = result(result_ctx, key, data, len)) != TB_OK) {
            rc = tb__errf(err, errlen, TB_ERR_TASK,
                          "%s: the result function failed on the result of task %" PRIu64
                          " from the checkpoint: %s",
                          path, key, tb_strerror(rc));
            break;
        }
    }
    if (rc == 0 && r.torn)
        TB_LOG_INFO("%s: its last record was cut short (%zu bytes, a kill while it was "
                    "written): that task runs again",
                    path, r.torn);
    tb__ckpt_reader_free(&r);
    return rc < 0 ? rc : TB_OK;
}

int tb__mw_journal_open(tb__mw_journal *j, const char *path, double interval, int append,
                        const char *what, uint64_t ntasks, char *err, size_t errlen)
{
    char *id = identity_of(what, ntasks);
    if (!id)
        return TB_ERR_NOMEM;
    int rc = tb__ckpt_journal_open(&j->w, path, KIND, id, append, err, errlen);
    free(id);
    j->open = rc == TB_OK;
    j->interval = interval;
    j->last = tb_wtime();
    return rc;
}

int tb__mw_journal_add(tb__mw_journal *j, uint64_t id, const void *data, size_t len)
{
    if (!j->open)
        return TB_OK;
    double t0 = tb_wtime();
    TB_CHECK(tb__ckpt_add(&j->w, id, data, len));
    double now = tb_wtime();
    j->spent += now - t0;
    if (now - j->last < j->interval)
        return TB_OK;
    j->last = now;
    char err[256];
    int rc = tb__ckpt_sync(&j->w, err, sizeof err);
    j->spent += tb_wtime() - now;
    if (rc != TB_OK)
        TB_LOG_ERR("checkpoint: %s", err);
    return rc;
}

int tb__mw_journal_sync(tb__mw_journal *j, char *err, size_t errlen)
{
    double t0 = tb_wtime();
    int rc = j->open ? tb__ckpt_sync(&j->w, err, errlen) : TB_OK;
    j->spent += tb_wtime() - t0;
    return rc;
}

uint64_t tb__mw_journal_records(const tb__mw_journal *j) { return j->open ? j->w.records : 0; }

int tb__mw_journal_close(tb__mw_journal *j, char *err, size_t errlen)
{
    double t0 = tb_wtime();
    int rc = j->open ? tb__ckpt_close(&j->w, 1, err, errlen) : TB_OK;
    j->spent += j->open ? tb_wtime() - t0 : 0;
    j->open = 0;
    free(j->done);
    j->done = NULL;
    return rc;
}
