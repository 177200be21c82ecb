/*
 * resume.c - reading the log of an earlier `tenbin flow run` for --resume.
 *
 * The log (written by run.c's write_log) is one JSON object:
 *
 *     {"workflow": NAME, "work_dir": DIR, "shared_fs": BOOL,
 *      "tasks": [{"task": ID, "rank": R, "exit": CODE or null,
 *                 "signal": SIGNO (only if killed), "attempt": K, ...}, ...]}
 *
 * one element of "tasks" per attempt, in the order they ended.  An attempt
 * ended well if its exit is 0 and it has no "signal"; the outputs of such
 * an attempt were kept in DIR, in rank R's store.  The writer logs at most
 * one such attempt per task (a failed task is retried until one ends well
 * or the run stops); should a log hold several, the last one counts.  Only
 * the tasks that ended well must be tasks of the workflow: a task that
 * failed and was removed from the workflow since does not matter.
 *
 * Nothing here touches the file system: run.c checks that the outputs are
 * still there and links them.  Errors name the file and the JSON path:
 * "log.json: tasks[3].rank: expected a whole number >= 0, got 2.5".
 */
#define _POSIX_C_SOURCE 200809L /* strdup */

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "core/json.h"
#include "flow/flow_internal.h"

typedef struct resume_reader {
    const char *path; /* for messages */
    char *err;
    size_t errlen;
} resume_reader;

/* "PATH: " then the message, into r's buffer; returns code. */
#define rs_fail(r, code, ...) tb__flow_read_fail((r)->err, (r)->errlen, (r)->path, (code), __VA_ARGS__)

/* What v is, for a message: its value if it is a number, else its type. */
static const char *got(const cJSON *v, char *buf, size_t n)
{
    if (!cJSON_IsNumber(v))
        return tb__json_kind(v);
    snprintf(buf, n, "%.15g", v->valuedouble);
    return buf;
}

/* A string of the log for a message: at most 64 bytes, control characters
 * as '?', so that the message stays one line. */
static const char *shown(const char *s, char *buf, size_t n)
{
    size_t i = 0;
    for (; s[i] != '\0' && i + 4 < n && i < 64; i++)
        buf[i] = (unsigned char)s[i] < 0x20 || s[i] == 0x7f ? '?' : s[i];
    if (s[i] != '\0' && i + 4 <= n) {
        memcpy(buf + i, "...", 3);
        i += 3;
    }
    buf[i] = '\0';
    return buf;
}

/* A number of the log that is a whole number from lo to hi. */
static int whole_in(const cJSON *v, double lo, double hi)
{
    if (!cJSON_IsNumber(v))
        return 0;
    double x = v->valuedouble;
    return isfinite(x) && x == floor(x) && x >= lo && x <= hi;
}

/* Parse the whole buffer as one JSON value (trailing blanks allowed). */
static int parse_json(resume_reader *r, const char *text, size_t len, cJSON **root)
{
    const char *end = text;
    *root = len ? cJSON_ParseWithLengthOpts(text, len, &end, 0) : NULL;
    if (*root != NULL) {
        while (end < text + len && *end != '\0' && strchr(" \t\r\n", *end) != NULL)
            end++;
        if (end == text + len)
            return TB_OK;
        cJSON_Delete(*root);
        *root = NULL;
    }
    /* cJSON leaves end at the text when it runs out of memory, too; a log
     * that does not fit is rare enough to be told as not JSON */
    size_t pos = end >= text && end <= text + len ? (size_t)(end - text) : 0;
    long line = 1;
    for (size_t i = 0; i < pos; i++)
        line += text[i] == '\n';
    return rs_fail(r, TB_ERR_PARSE, "not JSON (near line %ld)", line);
}

/* tasks[k]: sets *rank to the rank if it ended well, else to -1. */
static int read_attempt(resume_reader *r, const tb_flow *f, const cJSON *a, size_t k,
                        size_t *task, int *rank)
{
    char buf[80], num[32];
    *rank = -1;
    if (!cJSON_IsObject(a))
        return rs_fail(r, TB_ERR_PARSE, "tasks[%zu]: expected an object, got %s", k, tb__json_kind(a));
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(a, "task");
    const cJSON *rk = cJSON_GetObjectItemCaseSensitive(a, "rank");
    const cJSON *ex = cJSON_GetObjectItemCaseSensitive(a, "exit");
    const cJSON *sig = cJSON_GetObjectItemCaseSensitive(a, "signal");
    if (id == NULL || rk == NULL)
        return rs_fail(r, TB_ERR_PARSE, "tasks[%zu]: no task or rank", k);
    if (!cJSON_IsString(id))
        return rs_fail(r, TB_ERR_PARSE, "tasks[%zu].task: expected a string, got %s", k,
                       tb__json_kind(id));
    if (!whole_in(rk, 0, INFINITY))
        return rs_fail(r, TB_ERR_PARSE, "tasks[%zu].rank: expected a whole number >= 0, got %s", k,
                       got(rk, num, sizeof num));
    if (rk->valuedouble > INT_MAX)
        return rs_fail(r, TB_ERR_PARSE, "tasks[%zu].rank: %s is too large (at most %d)", k,
                       got(rk, num, sizeof num), INT_MAX);
    if (ex == NULL)
        return rs_fail(r, TB_ERR_PARSE, "tasks[%zu]: no exit", k);
    if (!cJSON_IsNull(ex) && !whole_in(ex, INT_MIN, INT_MAX))
        return rs_fail(r, TB_ERR_PARSE, "tasks[%zu].exit: expected a whole number or null, got %s",
                       k, got(ex, num, sizeof num));
    if (sig != NULL && !whole_in(sig, INT_MIN, INT_MAX))
        return rs_fail(r, TB_ERR_PARSE, "tasks[%zu].signal: expected a whole number, got %s", k,
                       got(sig, num, sizeof num));
    if (!cJSON_IsNumber(ex) || ex->valuedouble != 0 || sig != NULL)
        return TB_OK; /* it failed: whether it is a task of f does not matter */
    if (tb_flow_find(f, id->valuestring, task) != TB_OK)
        return rs_fail(r, TB_ERR_INVALID, "task '%s' is not in %s",
                       shown(id->valuestring, buf, sizeof buf), f->name);
    *rank = (int)rk->valuedouble;
    return TB_OK;
}

static int read_log(resume_reader *r, const tb_flow *f, const cJSON *root, tb__flow_resume *out)
{
    static const char what[] =
        "not a log of tenbin flow run (a JSON object with work_dir and tasks)";
    if (!cJSON_IsObject(root))
        return rs_fail(r, TB_ERR_PARSE, "%s: got %s", what, tb__json_kind(root));
    const cJSON *dir = cJSON_GetObjectItemCaseSensitive(root, "work_dir");
    const cJSON *tasks = cJSON_GetObjectItemCaseSensitive(root, "tasks");
    if (dir == NULL || tasks == NULL)
        return rs_fail(r, TB_ERR_PARSE, "%s: no %s", what, dir == NULL ? "work_dir" : "tasks");
    if (!cJSON_IsString(dir) || dir->valuestring[0] == '\0')
        return rs_fail(r, TB_ERR_PARSE, "%s: work_dir: expected a directory, got %s", what,
                       cJSON_IsString(dir) ? "an empty string" : tb__json_kind(dir));
    if (!cJSON_IsArray(tasks))
        return rs_fail(r, TB_ERR_PARSE, "%s: tasks: expected an array, got %s", what,
                       tb__json_kind(tasks));
    out->work_dir = strdup(dir->valuestring);
    out->rank = malloc((f->n ? f->n : 1) * sizeof *out->rank);
    if (out->work_dir == NULL || out->rank == NULL)
        return rs_fail(r, TB_ERR_NOMEM, "out of memory");
    for (size_t t = 0; t < f->n; t++)
        out->rank[t] = -1;
    const cJSON *a;
    size_t k = 0;
    cJSON_ArrayForEach(a, tasks) {
        size_t t = 0;
        int rank;
        TB_CHECK(read_attempt(r, f, a, k, &t, &rank));
        if (rank >= 0) {
            out->ndone += out->rank[t] < 0;
            out->rank[t] = rank;
        }
        k++;
    }
    return TB_OK;
}

int tb__flow_resume_parse(const tb_flow *f, const char *text, size_t len, const char *path,
                          tb__flow_resume *out, char *err, size_t errlen)
{
    resume_reader r = {.path = path ? path : "<memory>", .err = err, .errlen = errlen};
    if (out == NULL)
        return TB_ERR_INVALID;
    memset(out, 0, sizeof *out);
    if (f == NULL || (text == NULL && len > 0))
        return rs_fail(&r, TB_ERR_INVALID, "no workflow or no text to read");
    cJSON *root;
    TB_CHECK(parse_json(&r, text, len, &root));
    int rc = read_log(&r, f, root, out);
    cJSON_Delete(root);
    if (rc != TB_OK)
        tb__flow_resume_free(out);
    return rc;
}

void tb__flow_resume_free(tb__flow_resume *r)
{
    if (r == NULL)
        return;
    free(r->work_dir);
    free(r->rank);
    memset(r, 0, sizeof *r);
}
