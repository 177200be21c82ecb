/*
 * io.c - reading and writing workflow files: format detection and dispatch
 * to the readers (read_text.c, read_wfjson.c, read_dax.c) and writers.
 */
#define _POSIX_C_SOURCE 200809L /* strcasecmp */

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "flow/flow_internal.h"

/* Larger inputs are a mistake (a device, a wrong file), not a workflow. */
#define FLOW_MAX_FILE ((size_t)1 << 31)

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static void io_err(char *err, size_t errlen, const char *fmt, ...)
{
    if (err == NULL || errlen == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
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
        io_err(err, errlen, "%s: unknown format %d", name, (int)format);
        return TB_ERR_INVALID;
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

int tb_flow_write(const tb_flow *f, const char *path, tb_flow_format format, char *err,
                  size_t errlen)
{
    if (f == NULL || path == NULL)
        return TB_ERR_INVALID;
    if (!f->final) {
        io_err(err, errlen, "%s: workflow not finalized", path);
        return TB_ERR_STATE;
    }
    if (format == TB_FLOW_FORMAT_AUTO)
        format = tb_flow_format_of(path);
    tb_buf b = TB_BUF_INIT;
    int rc;
    if (format == TB_FLOW_FORMAT_WFJSON) {
        rc = tb__flow_write_wfjson(f, &b);
    } else if (format == TB_FLOW_FORMAT_TEXT) {
        rc = tb__flow_write_text(f, &b, err, errlen);
    } else {
        io_err(err, errlen, "%s: cannot write this format (WfFormat JSON or text only)", path);
        rc = TB_ERR_UNSUPPORTED;
    }
    if (rc == TB_ERR_NOMEM)
        io_err(err, errlen, "%s: out of memory", path);
    if (rc == TB_OK) {
        errno = 0;
        rc = tb_write_file_atomic(path, b.data, b.len);
        if (rc != TB_OK)
            io_err(err, errlen, "%s: cannot write: %s", path,
                   errno ? strerror(errno) : tb_strerror(rc));
    }
    tb_buf_free(&b);
    return rc;
}
