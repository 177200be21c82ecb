/*
 * read_dax.c - reading Pegasus DAX workflows (XML, DAX 2.x and 3.x) with
 * expat, as a stream: a DAX of a million jobs is never held as a tree.
 *
 *   <adag ...>
 *     <job id="ID01" name="mProject" runtime="13.4">      (also <dag>, <dax>)
 *       <argument>-X <file name="a.fits"/> p.fits</argument>
 *       <profile namespace="pegasus" key="runtime">13.4</profile>
 *       <uses file="a.fits" link="input" size="4222"/>     (3.x: name=)
 *     </job>
 *     <child ref="ID02"><parent ref="ID01"/></child>
 *   </adag>
 *
 * A job's work is its runtime attribute, else its pegasus runtime profile,
 * else 0.  Edges get data -1: tb_flow_finalize sums the files the parent
 * writes and the child reads.  The DAX schema puts every job before the
 * <child> elements, so references are resolved as they come.  Errors carry
 * the line: "x.dax:12: <parent ref='j9'>: unknown job".
 *
 * A <job>'s command is its transformation, the name attribute, as the
 * program (Pegasus maps it to an executable through its transformation
 * catalog; here it is looked up in PATH), and the text of its <argument>
 * split at blanks.  A file element in the argument (3.x <file name=>, 2.x
 * <filename file=>) stands for its name, joined to the text next to it as
 * Pegasus does since it stopped padding file names with blanks:
 * "-o<file name="x"/>" is the one argument "-ox".  A job with a name and no
 * <argument> runs the program without arguments, as Pegasus runs it; a
 * <job> with an <argument> and no name is an error.  <dag> and <dax> jobs
 * (sub-workflows, run by Pegasus' own tools) get no command.  Argument text
 * is limited to DAX_MAX_ARG bytes per job ("x.dax:7: <argument>: too
 * long").
 */
#define _POSIX_C_SOURCE 200809L /* strdup */

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <expat.h>

#include "flow/flow_internal.h"

enum {
    DAX_MAX_TEXT = 256,       /* a runtime profile is a number */
    DAX_MAX_ARG = 1 << 20     /* bytes of a job's arguments */
};

typedef struct dax_reader {
    XML_Parser p;
    const char *name; /* for messages */
    char *err;
    size_t errlen;
    tb_flow *f;
    int rc;           /* first error, TB_OK while fine */
    int depth;        /* elements open */
    long job;         /* job being read, -1 outside */
    int job_runtime;  /* it had a runtime attribute */
    long child;       /* <child> being read, -1 outside */
    int in_profile;   /* inside a pegasus runtime profile of the job */
    char text[DAX_MAX_TEXT + 1];
    size_t ntext;
    int text_cut;     /* the profile's text was longer than text[] */
    char *program;    /* the <job>'s name=, or NULL */
    int job_cmd;      /* the job is a <job> (not a sub-workflow) */
    int in_argument;  /* inside the job's <argument> */
    int has_argument; /* the job had one */
    tb_buf args;      /* the arguments so far, each NUL-terminated */
    size_t nargs;
    int in_token;     /* the last argument is still open (no NUL yet) */
} dax_reader;

/* Record the first error ("name:line: ...") and stop the parser. */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static void dax_fail(dax_reader *d, int code, const char *fmt, ...)
{
    if (d->rc != TB_OK)
        return;
    d->rc = code;
    if (d->err != NULL && d->errlen > 0) {
        int w = snprintf(d->err, d->errlen, "%s:%lu: ", d->name,
                         (unsigned long)XML_GetCurrentLineNumber(d->p));
        if (w >= 0 && (size_t)w < d->errlen) {
            va_list ap;
            va_start(ap, fmt);
            tb__verrf(d->err + w, d->errlen - (size_t)w, code, fmt, ap);
            va_end(ap);
        }
    }
    XML_StopParser(d->p, XML_FALSE);
}

/* A builder call failed: its message, less the workflow name it starts with
 * (dax_fail puts the name and the line). */
static void dax_builder_fail(dax_reader *d, int rc)
{
    const char *msg = tb_flow_error(d->f);
    size_t n = strlen(d->name);
    if (strncmp(msg, d->name, n) == 0 && strncmp(msg + n, ": ", 2) == 0)
        msg += n + 2;
    if (rc == TB_ERR_NOMEM || msg[0] == '\0')
        msg = tb_strerror(rc);
    dax_fail(d, rc, "%s", msg);
}

/* Element name without a namespace prefix. */
static const char *local(const XML_Char *name)
{
    const char *c = strrchr(name, ':');
    return c ? c + 1 : name;
}

static const char *attr(const XML_Char **atts, const char *key)
{
    for (size_t i = 0; atts[i] != NULL; i += 2)
        if (strcmp(local(atts[i]), key) == 0)
            return atts[i + 1];
    return NULL;
}

/* Optional attribute `key` of <elem> as a number >= 0; 1 if present. */
static int number_attr(dax_reader *d, const XML_Char **atts, const char *elem, const char *key,
                       double *out)
{
    const char *s = attr(atts, key);
    if (s == NULL)
        return 0;
    if (tb_parse_double(s, out) != TB_OK) {
        dax_fail(d, TB_ERR_PARSE, "<%s %s='%s'>: malformed number", elem, key, s);
        return 0;
    }
    if (*out < 0) {
        dax_fail(d, TB_ERR_INVALID, "<%s %s='%s'>: negative", elem, key, s);
        return 0;
    }
    return 1;
}

static void job_start(dax_reader *d, const char *elem, const XML_Char **atts)
{
    const char *id = attr(atts, "id");
    double work = 0;
    size_t t;
    if (id == NULL || id[0] == '\0') {
        dax_fail(d, TB_ERR_PARSE, "<%s>: missing id", elem);
        return;
    }
    if (tb_flow_find(d->f, id, NULL) == TB_OK) {
        dax_fail(d, TB_ERR_INVALID, "<%s id='%s'>: duplicate job", elem, id);
        return;
    }
    d->job_runtime = number_attr(d, atts, elem, "runtime", &work);
    if (d->rc != TB_OK)
        return;
    int rc = tb_flow_add_task(d->f, id, work, &t);
    if (rc != TB_OK) {
        dax_builder_fail(d, rc);
        return;
    }
    d->job = (long)t;
    /* <dag> and <dax> are sub-workflows: no command of their own */
    d->job_cmd = strcmp(elem, "job") == 0;
    const char *name = attr(atts, "name");
    if (d->job_cmd && name != NULL && name[0] != '\0' && (d->program = strdup(name)) == NULL)
        dax_fail(d, TB_ERR_NOMEM, "out of memory");
}

/* ---- the job's command ------------------------------------------------------ */

static int is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* Append n bytes to the argument being read, opening one if none is. */
static void arg_put(dax_reader *d, const char *s, size_t n)
{
    if (d->args.len + n + 1 > DAX_MAX_ARG) { /* + 1: its NUL */
        dax_fail(d, TB_ERR_PARSE, "<argument>: too long (more than %d bytes)", DAX_MAX_ARG);
        return;
    }
    if (tb_buf_append(&d->args, s, n) != TB_OK) {
        dax_fail(d, TB_ERR_NOMEM, "out of memory");
        return;
    }
    d->in_token = 1;
}

/* Close the argument being read, if any. */
static void arg_end(dax_reader *d)
{
    if (!d->in_token)
        return;
    if (tb_buf_append(&d->args, "", 1) != TB_OK) {
        dax_fail(d, TB_ERR_NOMEM, "out of memory");
        return;
    }
    d->nargs++;
    d->in_token = 0;
}

/* Text directly inside <argument>: blanks separate arguments. */
static void arg_text(dax_reader *d, const char *s, size_t len)
{
    size_t i = 0;
    while (i < len && d->rc == TB_OK) {
        if (is_blank(s[i])) {
            arg_end(d);
            i++;
            continue;
        }
        size_t j = i;
        while (j < len && !is_blank(s[j]))
            j++;
        arg_put(d, s + i, j - i);
        i = j;
    }
}

static void argument_start(dax_reader *d)
{
    if (d->program == NULL) {
        dax_fail(d, TB_ERR_PARSE, "<job id='%s'>: <argument> without a name= (the program)",
                 d->f->id[d->job]);
        return;
    }
    d->in_argument = 1;
    arg_end(d); /* a second <argument> starts a new word */
}

/* <file name=> (3.x) or <filename file=> (2.x) inside <argument>. */
static void argument_file(dax_reader *d, const char *elem, const XML_Char **atts)
{
    const char *name = attr(atts, "name");
    if (name == NULL)
        name = attr(atts, "file");
    if (name == NULL || name[0] == '\0') {
        dax_fail(d, TB_ERR_PARSE, "<argument>: <%s> without a file name", elem);
        return;
    }
    arg_put(d, name, strlen(name));
}

/* </job>: its command, if it has a program; then forget the job. */
static void job_end(dax_reader *d)
{
    arg_end(d);
    if (d->rc == TB_OK && d->program != NULL) {
        const char **argv = malloc((d->nargs ? d->nargs : 1) * sizeof *argv);
        if (argv == NULL) {
            dax_fail(d, TB_ERR_NOMEM, "out of memory");
        } else {
            const char *a = (const char *)d->args.data;
            for (size_t i = 0; i < d->nargs; a += strlen(a) + 1)
                argv[i++] = a;
            int rc = tb_flow_set_command(d->f, (size_t)d->job, d->program, d->nargs, argv);
            free(argv);
            if (rc != TB_OK)
                dax_builder_fail(d, rc);
        }
    }
    free(d->program);
    d->program = NULL;
    tb_buf_clear(&d->args);
    d->nargs = 0;
    d->in_argument = 0;
    d->job_cmd = 0;
    d->job = -1;
}

/* <uses file|name= link= size=>: input, output, inout (both) or none. */
static void uses(dax_reader *d, const XML_Char **atts)
{
    const char *file = attr(atts, "file"), *link = attr(atts, "link");
    double size = 0;
    if (file == NULL)
        file = attr(atts, "name");
    if (file == NULL || file[0] == '\0') {
        dax_fail(d, TB_ERR_PARSE, "<uses>: missing file name");
        return;
    }
    int in = 0, out = 0;
    if (link != NULL) {
        in = strcmp(link, "input") == 0 || strcmp(link, "inout") == 0;
        out = strcmp(link, "output") == 0 || strcmp(link, "inout") == 0 ||
              strcmp(link, "checkpoint") == 0;
        if (!in && !out && strcmp(link, "none") != 0) {
            dax_fail(d, TB_ERR_PARSE, "<uses file='%s' link='%s'>: unknown link", file, link);
            return;
        }
    }
    number_attr(d, atts, "uses", "size", &size);
    if (d->rc != TB_OK)
        return;
    size_t idx;
    int rc = tb_flow_add_file(d->f, file, size, &idx);
    if (rc == TB_OK && in)
        rc = tb_flow_task_use(d->f, (size_t)d->job, idx, 0);
    if (rc == TB_OK && out)
        rc = tb_flow_task_use(d->f, (size_t)d->job, idx, 1);
    if (rc != TB_OK)
        dax_builder_fail(d, rc);
}

/* Index of the job named by <elem ref=>, or -1 after an error. */
static long ref_job(dax_reader *d, const char *elem, const XML_Char **atts)
{
    const char *ref = attr(atts, "ref");
    size_t t;
    if (ref == NULL) {
        dax_fail(d, TB_ERR_PARSE, "<%s>: missing ref", elem);
        return -1;
    }
    if (tb_flow_find(d->f, ref, &t) != TB_OK) {
        dax_fail(d, TB_ERR_INVALID, "<%s ref='%s'>: unknown job", elem, ref);
        return -1;
    }
    return (long)t;
}

static void parent(dax_reader *d, const XML_Char **atts)
{
    long p = ref_job(d, "parent", atts);
    if (p < 0)
        return;
    if (p == d->child) {
        dax_fail(d, TB_ERR_INVALID, "<parent ref='%s'>: job depends on itself", d->f->id[p]);
        return;
    }
    int rc = tb_flow_add_edge(d->f, (size_t)p, (size_t)d->child, -1);
    if (rc != TB_OK)
        dax_builder_fail(d, rc);
}

static int is_job(const char *e)
{
    return strcmp(e, "job") == 0 || strcmp(e, "dag") == 0 || strcmp(e, "dax") == 0;
}

static void XMLCALL on_start(void *ud, const XML_Char *name, const XML_Char **atts)
{
    dax_reader *d = ud;
    const char *e = local(name);
    int depth = d->depth++;
    if (d->rc != TB_OK)
        return;
    if (depth == 0 && strcmp(e, "adag") != 0)
        dax_fail(d, TB_ERR_PARSE, "<%s>: not a DAX (the root element is not <adag>)", e);
    else if (depth == 1 && is_job(e))
        job_start(d, e, atts);
    else if (depth == 1 && strcmp(e, "child") == 0)
        d->child = ref_job(d, "child", atts);
    else if (depth == 2 && d->job >= 0 && strcmp(e, "uses") == 0)
        uses(d, atts);
    else if (depth == 2 && d->job_cmd && strcmp(e, "argument") == 0)
        argument_start(d);
    else if (depth == 3 && d->in_argument &&
             (strcmp(e, "file") == 0 || strcmp(e, "filename") == 0))
        argument_file(d, e, atts);
    else if (depth == 2 && d->job >= 0 && strcmp(e, "profile") == 0) {
        const char *ns = attr(atts, "namespace"), *key = attr(atts, "key");
        d->in_profile = ns && key && strcmp(ns, "pegasus") == 0 && strcmp(key, "runtime") == 0;
        d->ntext = 0;
        d->text_cut = 0;
    } else if (depth == 2 && d->child >= 0 && strcmp(e, "parent") == 0)
        parent(d, atts);
}

static void XMLCALL on_text(void *ud, const XML_Char *s, int len)
{
    dax_reader *d = ud;
    if (d->rc != TB_OK)
        return;
    if (d->in_argument && d->depth == 3) { /* directly inside <argument> */
        arg_text(d, s, (size_t)len);
        return;
    }
    if (!d->in_profile)
        return;
    /* longer than any number: keep a prefix and say so at </profile> */
    size_t n = (size_t)len;
    if (n > DAX_MAX_TEXT - d->ntext) {
        n = DAX_MAX_TEXT - d->ntext;
        d->text_cut = 1;
    }
    memcpy(d->text + d->ntext, s, n);
    d->ntext += n;
}

/* </profile> of a pegasus runtime: the job's work unless it had runtime=. */
static void profile_end(dax_reader *d)
{
    char *s = d->text, *end = d->text + d->ntext;
    double v;
    d->in_profile = 0;
    while (s < end && strchr(" \t\r\n", *s))
        s++;
    while (end > s && strchr(" \t\r\n", end[-1]))
        end--;
    *end = '\0';
    if (d->text_cut)
        dax_fail(d, TB_ERR_PARSE, "<profile key='runtime'>: longer than %d characters",
                 DAX_MAX_TEXT);
    else if (tb_parse_double(s, &v) != TB_OK)
        dax_fail(d, TB_ERR_PARSE, "<profile key='runtime'>%s</profile>: malformed number", s);
    else if (v < 0)
        dax_fail(d, TB_ERR_INVALID, "<profile key='runtime'>%s</profile>: negative", s);
    else if (!d->job_runtime)
        d->f->work[d->job] = v; /* the task was added before its profile */
}

static void XMLCALL on_end(void *ud, const XML_Char *name)
{
    dax_reader *d = ud;
    int depth = --d->depth;
    if (d->rc != TB_OK)
        return;
    if (depth == 2 && d->in_profile)
        profile_end(d);
    else if (depth == 2 && d->in_argument) {
        arg_end(d);
        d->in_argument = 0;
    } else if (depth == 1) {
        if (d->job >= 0)
            job_end(d);
        d->child = -1;
    }
    (void)name;
}

/* Feed the whole buffer (in pieces: XML_Parse takes an int length). */
static int dax_parse(dax_reader *d, const char *data, size_t len)
{
    const size_t chunk = (size_t)1 << 24;
    size_t pos = 0;
    do {
        size_t n = len - pos < chunk ? len - pos : chunk;
        int last = pos + n == len;
        if (XML_Parse(d->p, data ? data + pos : "", (int)n, last) != XML_STATUS_OK) {
            if (d->rc == TB_OK && d->err != NULL && d->errlen > 0)
                snprintf(d->err, d->errlen, "%s:%lu: %s", d->name,
                         (unsigned long)XML_GetCurrentLineNumber(d->p),
                         XML_ErrorString(XML_GetErrorCode(d->p)));
            return d->rc != TB_OK ? d->rc : TB_ERR_PARSE;
        }
        pos += n;
    } while (pos < len);
    return TB_OK;
}

static int dax_read(dax_reader *d, const char *data, size_t len)
{
    TB_CHECK(tb_flow_create(&d->f, 0));
    TB_CHECK(tb_flow_set_name(d->f, d->name));
    d->p = XML_ParserCreate(NULL);
    if (d->p == NULL)
        return TB_ERR_NOMEM;
    XML_SetUserData(d->p, d);
    XML_SetElementHandler(d->p, on_start, on_end);
    XML_SetCharacterDataHandler(d->p, on_text);
    TB_CHECK(dax_parse(d, data, len));
    int rc = tb_flow_finalize(d->f);
    if (rc != TB_OK && d->err != NULL && d->errlen > 0)
        snprintf(d->err, d->errlen, "%s", tb_flow_error(d->f));
    return rc;
}

int tb__flow_read_dax(const char *data, size_t len, const char *name, tb_flow **out, char *err,
                      size_t errlen)
{
    if (out == NULL || (data == NULL && len > 0))
        return TB_ERR_INVALID;
    *out = NULL;
    dax_reader d = {.name = name ? name : "<memory>", .err = err, .errlen = errlen, .job = -1,
                    .child = -1};
    int rc = dax_read(&d, data, len);
    if (d.p != NULL)
        XML_ParserFree(d.p);
    free(d.program);
    tb_buf_free(&d.args);
    if (rc != TB_OK) {
        if (rc == TB_ERR_NOMEM && d.rc == TB_OK && err != NULL && errlen > 0)
            snprintf(err, errlen, "%s: out of memory", d.name);
        tb_flow_destroy(&d.f);
        return rc;
    }
    *out = d.f;
    return TB_OK;
}
