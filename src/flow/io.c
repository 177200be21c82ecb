/*
 * io.c - reading and writing workflow files: format detection and dispatch
 * to the readers (read_text.c, read_wfjson.c, read_dax.c) and writers.
 */
#define _POSIX_C_SOURCE 200809L /* strcasecmp */

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "flow/flow_internal.h"

/* Larger inputs are a mistake (a device, a wrong file), not a workflow. */
#define FLOW_MAX_FILE ((size_t)1 << 31)

int tb__flow_read_fail(char *err, size_t errlen, const char *name, int code, const char *fmt, ...)
{
    if (err == NULL || errlen == 0)
        return code;
    int w = snprintf(err, errlen, "%s: ", name);
    if (w >= 0 && (size_t)w < errlen) {
        va_list ap;
        va_start(ap, fmt);
        tb__verrf(err + w, errlen - (size_t)w, code, fmt, ap);
        va_end(ap);
    }
    return code;
}

/* By content: the first byte that is not a blank (or a UTF-8 byte order
 * mark). */
static tb_flow_format detect(const char *data, size_t len)
{
    size_t i = 0;
    if (len >= 3 && memcmp(data, "\xEF\xBB\xBF", 3) == 0)
        i = 3;
    while (i < len && isspace((unsigned char)data[i]))
        i++;
    if (i < len && data[i] == '{')
        return TB_FLOW_FORMAT_WFJSON;
    if (i < len && data[i] == '<')
        return TB_FLOW_FORMAT_DAX;
    return TB_FLOW_FORMAT_TEXT;
}

tb_flow_format tb_flow_format_of(const char *path)
{
    const char *dot = path ? strrchr(path, '.') : NULL;
    if (dot == NULL || strchr(dot, '/') != NULL)
        return TB_FLOW_FORMAT_TEXT;
    if (strcasecmp(dot, ".json") == 0)
        return TB_FLOW_FORMAT_WFJSON;
    if (strcasecmp(dot, ".dax") == 0 || strcasecmp(dot, ".xml") == 0)
        return TB_FLOW_FORMAT_DAX;
    if (strcasecmp(dot, ".makeflow") == 0 || strcasecmp(dot, ".mf") == 0)
        return TB_FLOW_FORMAT_MAKEFLOW;
    return TB_FLOW_FORMAT_TEXT;
}

int tb_flow_parse(const char *data, size_t len, const char *name, tb_flow_format format,
                  tb_flow **out, char *err, size_t errlen)
{
    if (out == NULL || (data == NULL && len > 0))
        return TB_ERR_INVALID;
    *out = NULL;
    if (name == NULL)
        name = "<memory>";
    if (format == TB_FLOW_FORMAT_AUTO)
        format = detect(data, len);
    switch (format) {
    case TB_FLOW_FORMAT_TEXT:
        return tb__flow_read_text(data, len, name, out, err, errlen);
    case TB_FLOW_FORMAT_WFJSON:
        return tb__flow_read_wfjson(data, len, name, out, err, errlen);
    case TB_FLOW_FORMAT_DAX:
        return tb__flow_read_dax(data, len, name, out, err, errlen);
    default:
        return tb__errf(err, errlen, TB_ERR_INVALID, "%s: unknown format %d", name, (int)format);
    }
}

int tb_flow_read(const char *path, tb_flow_format format, tb_flow **out, char *err,
                 size_t errlen)
{
    if (path == NULL || out == NULL)
        return TB_ERR_INVALID;
    *out = NULL;
    char *data;
    size_t len;
    TB_CHECK(tb_read_file(path, FLOW_MAX_FILE, &data, &len, err, errlen));
    int rc = tb_flow_parse(data, len, path, format, out, err, errlen);
    free(data);
    return rc;
}

/* Write what a writer put in b (if it returned TB_OK) to path, atomically;
 * frees b. */
static int write_out(const char *path, tb_buf *b, int rc, char *err, size_t errlen)
{
    if (rc == TB_ERR_NOMEM)
        tb__errf(err, errlen, rc, "%s: out of memory", path);
    if (rc == TB_OK) {
        errno = 0;
        rc = tb_write_file_atomic(path, b->data, b->len);
        if (rc != TB_OK)
            tb__errf(err, errlen, rc, "%s: cannot write: %s", path,
                     errno ? strerror(errno) : tb_strerror(rc));
    }
    tb_buf_free(b);
    return rc;
}

static int check_final(const tb_flow *f, const char *path, char *err, size_t errlen)
{
    if (f == NULL || path == NULL)
        return TB_ERR_INVALID;
    if (!f->final) {
        return tb__errf(err, errlen, TB_ERR_STATE, "%s: workflow not finalized", path);
    }
    return TB_OK;
}

int tb_flow_write(const tb_flow *f, const char *path, tb_flow_format format, char *err,
                  size_t errlen)
{
    int rc = check_final(f, path, err, errlen);
    if (rc != TB_OK)
        return rc;
    if (format == TB_FLOW_FORMAT_AUTO)
        format = tb_flow_format_of(path);
    tb_buf b = TB_BUF_INIT;
    if (format == TB_FLOW_FORMAT_WFJSON) {
        rc = tb__flow_write_wfjson(f, &b);
    } else if (format == TB_FLOW_FORMAT_TEXT) {
        rc = tb__flow_write_text(f, &b, err, errlen);
    } else if (format == TB_FLOW_FORMAT_MAKEFLOW) {
        rc = tb__flow_write_makeflow(f, &b, 1, 1, 0, err, errlen);
    } else {
        rc = tb__errf(err, errlen, TB_ERR_UNSUPPORTED,
                      "%s: cannot write this format (WfFormat JSON, text or Makeflow only)", path);
    }
    return write_out(path, &b, rc, err, errlen);
}

int tb_flow_write_makeflow(const tb_flow *f, const char *path, double time_scale,
                           double size_scale, int synthetic, char *err, size_t errlen)
{
    int rc = check_final(f, path, err, errlen);
    if (rc != TB_OK)
        return rc;
    if (!(time_scale >= 0) || !(size_scale >= 0) || isinf(time_scale) || isinf(size_scale)) {
        return tb__errf(err, errlen, TB_ERR_RANGE,
                        "%s: the time and size scales must be finite and >= 0", path);
    }
    if (time_scale == 0)
        time_scale = 1;
    if (size_scale == 0)
        size_scale = time_scale;
    tb_buf b = TB_BUF_INIT;
    rc = tb__flow_write_makeflow(f, &b, time_scale, size_scale, synthetic, err, errlen);
    return write_out(path, &b, rc, err, errlen);
}
