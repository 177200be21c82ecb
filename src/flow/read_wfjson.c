/*
 * read_wfjson.c - reading WfCommons WfFormat workflows (JSON).
 *
 * WfFormat 1.5 splits a workflow into a specification (tasks with parents,
 * children and file ids; files with sizes) and an optional execution record
 * (runtimes, the machines they ran on).  Versions up to 1.4 kept one list,
 * workflow.tasks (workflow.jobs before 1.3), whose tasks hold their runtime
 * and their files inline and name their parents by task name; that layout is
 * read too, since most published instances before 2024 use it.
 *
 * Work is the runtime scaled to a 1 GHz core when the machine's clock is
 * recorded (runtime * MHz / 1000), else the runtime.  Edges get data -1, so
 * tb_flow_finalize sums the files the parent writes and the child reads.
 * Errors name the JSON path: "wf.json: workflow.specification.tasks[3]
 * .parents[0]: unknown task 'x'".
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "core/json.h"
#include "flow/flow_internal.h"

typedef struct wf_reader {
    const char *name; /* for messages */
    char *err;
    size_t errlen;
    tb_flow *f;
    const cJSON *machines;   /* the machine list, or NULL */
    const char *speed_key;   /* its clock field: "speedInMHz" (1.5) or "speed" */
} wf_reader;

/* "NAME: " then the message, into r's buffer; returns code. */
#define wf_fail(r, code, ...) tb__flow_read_fail((r)->err, (r)->errlen, (r)->name, (code), __VA_ARGS__)

/* A builder call failed: its own message already names the workflow. */
static int wf_builder_fail(wf_reader *r, int rc, const char *path)
{
    if (rc == TB_ERR_NOMEM)
        return wf_fail(r, rc, "out of memory");
    const char *msg = tb_flow_error(r->f);
    if (msg[0] != '\0' && r->err != NULL && r->errlen > 0) {
        snprintf(r->err, r->errlen, "%s", msg);
        return rc;
    }
    return wf_fail(r, rc, "%s: %s", path, tb_strerror(rc));
}

/* "a.b" or "b" at the root. */
static const char *dot(const char *path) { return path[0] ? "." : ""; }

static const char *type_name(int type)
{
    switch (type) {
    case cJSON_Number: return "a number";
    case cJSON_String: return "a string";
    case cJSON_Array: return "an array";
    default: return "an object";
    }
}

/* Member `key` of obj (at `path`) of cJSON type `type`; *out NULL when it is
 * absent and not required. */
static int member(wf_reader *r, const cJSON *obj, const char *path, const char *key, int type,
                  int required, const cJSON **out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    *out = NULL;
    if (v == NULL)
        return required ? wf_fail(r, TB_ERR_PARSE, "%s%s%s: missing", path, dot(path), key)
                        : TB_OK;
    if ((v->type & 0xff) != type)
        return wf_fail(r, TB_ERR_PARSE, "%s%s%s: expected %s, got %s", path, dot(path), key,
                       type_name(type), tb__json_kind(v));
    *out = v;
    return TB_OK;
}

/* A non-empty string member. */
static int member_str(wf_reader *r, const cJSON *obj, const char *path, const char *key,
                      int required, const char **out)
{
    const cJSON *v;
    *out = NULL;
    TB_CHECK(member(r, obj, path, key, cJSON_String, required, &v));
    if (v != NULL && v->valuestring[0] == '\0')
        return wf_fail(r, TB_ERR_PARSE, "%s%s%s: empty string", path, dot(path), key);
    *out = v ? v->valuestring : NULL;
    return TB_OK;
}

/* A number member >= 0; *out unchanged when absent and not required. */
static int member_size(wf_reader *r, const cJSON *obj, const char *path, const char *key,
                       int required, double *out)
{
    const cJSON *v;
    TB_CHECK(member(r, obj, path, key, cJSON_Number, required, &v));
    if (v == NULL)
        return TB_OK;
    if (!(v->valuedouble >= 0) || !isfinite(v->valuedouble))
        return wf_fail(r, TB_ERR_INVALID, "%s.%s: must be a finite number >= 0, got %g", path,
                       key, v->valuedouble);
    *out = v->valuedouble;
    return TB_OK;
}

/* Element k of an array of strings. */
static int item_str(wf_reader *r, const cJSON *v, const char *path, const char *key, size_t k,
                    const char **out)
{
    if (!cJSON_IsString(v))
        return wf_fail(r, TB_ERR_PARSE, "%s.%s[%zu]: expected a string, got %s", path, key, k,
                       tb__json_kind(v));
    *out = v->valuestring;
    return TB_OK;
}

/* Clock of machine `node` in MHz, 0 if unknown. */
static int machine_mhz(wf_reader *r, const char *mpath, const char *node, double *mhz)
{
    *mhz = 0;
    if (r->machines == NULL || node == NULL)
        return TB_OK;
    size_t j = 0;
    const cJSON *m;
    cJSON_ArrayForEach(m, r->machines) {
        const cJSON *nn = cJSON_GetObjectItemCaseSensitive(m, "nodeName");
        if (cJSON_IsString(nn) && strcmp(nn->valuestring, node) == 0) {
            char path[96];
            const cJSON *cpu;
            snprintf(path, sizeof path, "%s[%zu]", mpath, j);
            TB_CHECK(member(r, m, path, "cpu", cJSON_Object, 0, &cpu));
            if (cpu == NULL)
                return TB_OK;
            strncat(path, ".cpu", sizeof path - strlen(path) - 1);
            return member_size(r, cpu, path, r->speed_key, 0, mhz);
        }
        j++;
    }
    return TB_OK;
}

/* Work of a task that ran `runtime` seconds on machine `node`. */
static int task_work(wf_reader *r, const char *mpath, const char *node, double runtime,
                     double *work)
{
    double mhz;
    TB_CHECK(machine_mhz(r, mpath, node, &mhz));
    *work = mhz > 0 ? runtime * mhz / 1000.0 : runtime;
    return TB_OK;
}

/* Index of task `id` named at path[k]; a missing one is an error. */
static int find_task(wf_reader *r, const char *id, const char *path, const char *key, size_t k,
                     size_t *index)
{
    if (tb_flow_find(r->f, id, index) == TB_OK)
        return TB_OK;
    return wf_fail(r, TB_ERR_INVALID, "%s.%s[%zu]: unknown task '%s'", path, key, k, id);
}

/* Edges to task t from the tasks listed in `key` (parents when to_t, else
 * children: edges from t). */
static int add_links(wf_reader *r, const cJSON *task, const char *path, const char *key, size_t t,
                     int to_t)
{
    const cJSON *list, *v;
    TB_CHECK(member(r, task, path, key, cJSON_Array, 0, &list));
    size_t k = 0;
    cJSON_ArrayForEach(v, list) {
        const char *id = NULL;
        size_t u;
        TB_CHECK(item_str(r, v, path, key, k, &id));
        TB_CHECK(find_task(r, id, path, key, k, &u));
        if (u == t)
            return wf_fail(r, TB_ERR_INVALID, "%s.%s[%zu]: task '%s' depends on itself", path,
                           key, k, id);
        int rc = to_t ? tb_flow_add_edge(r->f, u, t, -1) : tb_flow_add_edge(r->f, t, u, -1);
        if (rc != TB_OK)
            return wf_builder_fail(r, rc, path);
        k++;
    }
    return TB_OK;
}

/* ---- WfFormat 1.5 ---------------------------------------------------------- */

#define SPEC "workflow.specification"
#define EXEC "workflow.execution"

static int v15_tasks(wf_reader *r, const cJSON *tasks)
{
    size_t i = 0;
    const cJSON *t;
    cJSON_ArrayForEach(t, tasks) {
        char path[64];
        const char *id = NULL;
        snprintf(path, sizeof path, SPEC ".tasks[%zu]", i);
        if (!cJSON_IsObject(t))
            return wf_fail(r, TB_ERR_PARSE, "%s: expected an object, got %s", path, tb__json_kind(t));
        TB_CHECK(member_str(r, t, path, "id", 1, &id));
        if (tb_flow_find(r->f, id, NULL) == TB_OK)
            return wf_fail(r, TB_ERR_INVALID, "%s.id: duplicate task '%s'", path, id);
        int rc = tb_flow_add_task(r->f, id, 0, NULL); /* work comes with the execution */
        if (rc != TB_OK)
            return wf_builder_fail(r, rc, path);
        i++;
    }
    return TB_OK;
}

static int v15_files(wf_reader *r, const cJSON *files)
{
    size_t j = 0;
    const cJSON *v;
    cJSON_ArrayForEach(v, files) {
        char path[64];
        const char *id = NULL;
        double size = 0;
        snprintf(path, sizeof path, SPEC ".files[%zu]", j);
        if (!cJSON_IsObject(v))
            return wf_fail(r, TB_ERR_PARSE, "%s: expected an object, got %s", path, tb__json_kind(v));
        TB_CHECK(member_str(r, v, path, "id", 1, &id));
        TB_CHECK(member_size(r, v, path, "sizeInBytes", 1, &size));
        int rc = tb_flow_add_file(r->f, id, size, NULL);
        if (rc != TB_OK)
            return wf_builder_fail(r, rc, path);
        j++;
    }
    return TB_OK;
}

/* inputFiles or outputFiles of task t: ids from specification.files. */
static int v15_uses(wf_reader *r, const cJSON *task, const char *path, const char *key, size_t t,
                    int output)
{
    const cJSON *list, *v;
    TB_CHECK(member(r, task, path, key, cJSON_Array, 0, &list));
    size_t k = 0;
    cJSON_ArrayForEach(v, list) {
        const char *id = NULL;
        size_t file;
        TB_CHECK(item_str(r, v, path, key, k, &id));
        if (tb__flow_names_find(&r->f->fnames, r->f->fname, id, &file) != TB_OK)
            return wf_fail(r, TB_ERR_INVALID, "%s.%s[%zu]: unknown file '%s' (not in " SPEC
                           ".files)", path, key, k, id);
        int rc = tb_flow_task_use(r->f, t, file, output);
        if (rc != TB_OK)
            return wf_builder_fail(r, rc, path);
        k++;
    }
    return TB_OK;
}

/* Edges and file uses; tasks are numbered in list order. */
static int v15_graph(wf_reader *r, const cJSON *tasks)
{
    size_t i = 0;
    const cJSON *t;
    cJSON_ArrayForEach(t, tasks) {
        char path[64];
        snprintf(path, sizeof path, SPEC ".tasks[%zu]", i);
        TB_CHECK(add_links(r, t, path, "parents", i, 1));
        TB_CHECK(add_links(r, t, path, "children", i, 0));
        TB_CHECK(v15_uses(r, t, path, "inputFiles", i, 0));
        TB_CHECK(v15_uses(r, t, path, "outputFiles", i, 1));
        i++;
    }
    return TB_OK;
}

/* command {program, arguments[]} of task t, if the record has one. */
static int exec_command(wf_reader *r, const cJSON *et, const char *path, size_t t)
{
    const cJSON *cmd, *args, *v;
    const char *prog;
    TB_CHECK(member(r, et, path, "command", cJSON_Object, 0, &cmd));
    if (cmd == NULL)
        return TB_OK;
    char cpath[96];
    snprintf(cpath, sizeof cpath, "%s.command", path);
    TB_CHECK(member_str(r, cmd, cpath, "program", 1, &prog));
    if (prog[0] == '\0')
        return wf_fail(r, TB_ERR_INVALID, "%s.program: empty", cpath);
    TB_CHECK(member(r, cmd, cpath, "arguments", cJSON_Array, 0, &args));
    size_t n = (size_t)(args ? cJSON_GetArraySize(args) : 0), k = 0;
    const char **argv = calloc(n ? n : 1, sizeof *argv);
    if (!argv)
        return wf_fail(r, TB_ERR_NOMEM, "out of memory");
    int rc = TB_OK;
    if (args)
        cJSON_ArrayForEach(v, args) {
            if ((rc = item_str(r, v, cpath, "arguments", k, &argv[k])) != TB_OK)
                break;
            k++;
        }
    if (rc == TB_OK && (rc = tb_flow_set_command(r->f, t, prog, n, argv)) != TB_OK)
        rc = wf_builder_fail(r, rc, cpath);
    free(argv);
    return rc;
}

/* One execution record: the runtime of a task, on machines[0]. */
static int v15_exec_task(wf_reader *r, const cJSON *et, const char *path)
{
    const char *id, *node = NULL;
    const cJSON *machines;
    double runtime = 0, work;
    size_t t;
    if (!cJSON_IsObject(et))
        return wf_fail(r, TB_ERR_PARSE, "%s: expected an object, got %s", path, tb__json_kind(et));
    TB_CHECK(member_str(r, et, path, "id", 1, &id));
    if (tb_flow_find(r->f, id, &t) != TB_OK)
        return wf_fail(r, TB_ERR_INVALID, "%s.id: unknown task '%s'", path, id);
    TB_CHECK(member_size(r, et, path, "runtimeInSeconds", 1, &runtime));
    TB_CHECK(member(r, et, path, "machines", cJSON_Array, 0, &machines));
    if (machines != NULL && machines->child != NULL)
        TB_CHECK(item_str(r, machines->child, path, "machines", 0, &node));
    TB_CHECK(task_work(r, EXEC ".machines", node, runtime, &work));
    /* The task was added with work 0 before its record was known. */
    r->f->work[t] = work;
    return exec_command(r, et, path, t);
}

static int v15_execution(wf_reader *r, const cJSON *wf)
{
    const cJSON *ex, *tasks, *et;
    TB_CHECK(member(r, wf, "workflow", "execution", cJSON_Object, 0, &ex));
    if (ex == NULL)
        return TB_OK;
    TB_CHECK(member(r, ex, EXEC, "machines", cJSON_Array, 0, &r->machines));
    r->speed_key = "speedInMHz";
    TB_CHECK(member(r, ex, EXEC, "tasks", cJSON_Array, 0, &tasks));
    size_t k = 0;
    cJSON_ArrayForEach(et, tasks) {
        char path[64];
        snprintf(path, sizeof path, EXEC ".tasks[%zu]", k);
        TB_CHECK(v15_exec_task(r, et, path));
        k++;
    }
    return TB_OK;
}

static int read_v15(wf_reader *r, const cJSON *wf, const cJSON *spec)
{
    const cJSON *tasks, *files;
    TB_CHECK(member(r, spec, SPEC, "tasks", cJSON_Array, 1, &tasks));
    TB_CHECK(member(r, spec, SPEC, "files", cJSON_Array, 0, &files));
    TB_CHECK(v15_tasks(r, tasks));
    TB_CHECK(v15_files(r, files));
    TB_CHECK(v15_graph(r, tasks));
    return v15_execution(r, wf);
}

/* ---- WfFormat 1.0 - 1.4: workflow.tasks (or .jobs) with everything inline --- */

/* Task by name (these versions' parents are names); runtime and machine. */
static int old_task(wf_reader *r, const cJSON *t, const char *path)
{
    const char *id, *node;
    const cJSON *rt;
    double runtime = 0, work;
    if (!cJSON_IsObject(t))
        return wf_fail(r, TB_ERR_PARSE, "%s: expected an object, got %s", path, tb__json_kind(t));
    TB_CHECK(member_str(r, t, path, "name", 1, &id));
    if (tb_flow_find(r->f, id, NULL) == TB_OK)
        return wf_fail(r, TB_ERR_INVALID, "%s.name: duplicate task '%s'", path, id);
    /* 1.4 says runtimeInSeconds, earlier versions runtime */
    rt = cJSON_GetObjectItemCaseSensitive(t, "runtimeInSeconds");
    TB_CHECK(member_size(r, t, path, rt ? "runtimeInSeconds" : "runtime", 0, &runtime));
    TB_CHECK(member_str(r, t, path, "machine", 0, &node));
    TB_CHECK(task_work(r, "workflow.machines", node, runtime, &work));
    int rc = tb_flow_add_task(r->f, id, work, NULL);
    return rc == TB_OK ? TB_OK : wf_builder_fail(r, rc, path);
}

/* One inline file {name, path?, sizeInBytes|size, link} of task t. */
static int old_file(wf_reader *r, const cJSON *v, const char *path, size_t t)
{
    const char *name, *link;
    const cJSON *dir;
    double size = 0;
    char buf[1024];
    if (!cJSON_IsObject(v))
        return wf_fail(r, TB_ERR_PARSE, "%s: expected an object, got %s", path, tb__json_kind(v));
    TB_CHECK(member_str(r, v, path, "name", 1, &name));
    TB_CHECK(member(r, v, path, "path", cJSON_String, 0, &dir));
    TB_CHECK(member_str(r, v, path, "link", 1, &link));
    int in = strcmp(link, "input") == 0, out = strcmp(link, "output") == 0;
    if (!in && !out)
        return wf_fail(r, TB_ERR_PARSE, "%s.link: '%s' is neither 'input' nor 'output'", path,
                       link);
    const cJSON *sz = cJSON_GetObjectItemCaseSensitive(v, "sizeInBytes");
    TB_CHECK(member_size(r, v, path, sz ? "sizeInBytes" : "size", 0, &size));
    /* WfCommons' migration to 1.5 names a file by path + name */
    if (dir != NULL && dir->valuestring[0] != '\0') {
        if (snprintf(buf, sizeof buf, "%s%s", dir->valuestring, name) >= (int)sizeof buf)
            return wf_fail(r, TB_ERR_PARSE, "%s: file path too long", path);
        name = buf;
    }
    size_t file;
    int rc = tb_flow_add_file(r->f, name, size, &file);
    if (rc == TB_OK)
        rc = tb_flow_task_use(r->f, t, file, out);
    return rc == TB_OK ? TB_OK : wf_builder_fail(r, rc, path);
}

static int old_graph(wf_reader *r, const cJSON *t, const char *path, size_t i)
{
    const cJSON *files, *v;
    TB_CHECK(add_links(r, t, path, "parents", i, 1));
    TB_CHECK(add_links(r, t, path, "children", i, 0));
    TB_CHECK(member(r, t, path, "files", cJSON_Array, 0, &files));
    size_t k = 0;
    cJSON_ArrayForEach(v, files) {
        char fpath[96];
        snprintf(fpath, sizeof fpath, "%s.files[%zu]", path, k);
        TB_CHECK(old_file(r, v, fpath, i));
        k++;
    }
    return TB_OK;
}

static int read_old(wf_reader *r, const cJSON *wf, const cJSON *tasks, const char *key)
{
    const cJSON *t;
    char path[64];
    TB_CHECK(member(r, wf, "workflow", "machines", cJSON_Array, 0, &r->machines));
    r->speed_key = "speed";
    for (int pass = 0; pass < 2; pass++) {
        size_t i = 0;
        cJSON_ArrayForEach(t, tasks) {
            snprintf(path, sizeof path, "workflow.%s[%zu]", key, i);
            TB_CHECK(pass == 0 ? old_task(r, t, path) : old_graph(r, t, path, i));
            i++;
        }
    }
    return TB_OK;
}

/* ---- entry ----------------------------------------------------------------- */

/* Which layout: 1.5's specification, or the older inline task list. */
static int read_root(wf_reader *r, const cJSON *root)
{
    const cJSON *wf, *spec, *list;
    const char *version;
    if (!cJSON_IsObject(root))
        return wf_fail(r, TB_ERR_PARSE, "expected a JSON object, got %s", tb__json_kind(root));
    TB_CHECK(member_str(r, root, "", "schemaVersion", 0, &version));
    TB_CHECK(member(r, root, "", "workflow", cJSON_Object, 1, &wf));
    TB_CHECK(member(r, wf, "workflow", "specification", cJSON_Object, 0, &spec));
    if (spec != NULL)
        return read_v15(r, wf, spec);
    const char *key = cJSON_GetObjectItemCaseSensitive(wf, "tasks") ? "tasks" : "jobs";
    TB_CHECK(member(r, wf, "workflow", key, cJSON_Array, 0, &list));
    if (list != NULL)
        return read_old(r, wf, list, key);
    return wf_fail(r, TB_ERR_PARSE,
                   "schemaVersion '%s': neither workflow.specification (1.5) nor workflow.tasks "
                   "(1.0-1.4)", version ? version : "?");
}

static long line_of(const char *data, size_t len, size_t pos)
{
    long line = 1;
    for (size_t i = 0; i < pos && i < len; i++)
        line += data[i] == '\n';
    return line;
}

/* Parse the whole buffer as one JSON value (trailing blanks allowed). */
static int parse_json(wf_reader *r, const char *data, size_t len, cJSON **root)
{
    const char *end = data;
    *root = len ? cJSON_ParseWithLengthOpts(data, len, &end, 0) : NULL;
    if (*root != NULL) {
        while (end < data + len && strchr(" \t\r\n", *end) != NULL && *end != '\0')
            end++;
        if (end == data + len)
            return TB_OK;
        cJSON_Delete(*root);
        *root = NULL;
    }
    size_t pos = end >= data ? (size_t)(end - data) : 0;
    return wf_fail(r, TB_ERR_PARSE, "not JSON (near line %ld)", line_of(data, len, pos));
}

int tb__flow_read_wfjson(const char *data, size_t len, const char *name, tb_flow **out, char *err,
                         size_t errlen)
{
    wf_reader r = {.name = name ? name : "<memory>", .err = err, .errlen = errlen};
    if (out == NULL || (data == NULL && len > 0))
        return TB_ERR_INVALID;
    *out = NULL;
    cJSON *root;
    TB_CHECK(parse_json(&r, data, len, &root));
    int rc = tb_flow_create(&r.f, 0);
    if (rc == TB_OK)
        rc = tb_flow_set_name(r.f, r.name);
    if (rc == TB_OK)
        rc = read_root(&r, root);
    if (rc == TB_OK) {
        rc = tb_flow_finalize(r.f);
        if (rc != TB_OK)
            wf_builder_fail(&r, rc, "workflow");
    } else if (rc == TB_ERR_NOMEM && r.f == NULL) {
        wf_fail(&r, rc, "out of memory");
    }
    cJSON_Delete(root);
    if (rc != TB_OK) {
        tb_flow_destroy(&r.f);
        return rc;
    }
    *out = r.f;
    return TB_OK;
}
