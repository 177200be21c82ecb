/*
 * err.c - messages and names for the error codes of TB_ERRNO_MAP.
 */
#include "tenbin/core.h"

#include <stdio.h>

#include "core/errbuf.h"

const char *tb_strerror(int err)
{
    switch (err) {
#define TB__ERR_MSG(name, val, msg)                                          \
    case (val):                                                              \
        return (msg);
        TB_ERRNO_MAP(TB__ERR_MSG)
#undef TB__ERR_MSG
    default:
        return "unknown error";
    }
}

const char *tb_err_name(int err)
{
    switch (err) {
#define TB__ERR_NAME(name, val, msg)                                         \
    case (val):                                                              \
        return "TB_" #name;
        TB_ERRNO_MAP(TB__ERR_NAME)
#undef TB__ERR_NAME
    default:
        return "TB_ERR_UNKNOWN";
    }
}

void tb__check_failed(const char *file, const char *func, int line, const char *expr, int err)
{
    tb_log(TB_LOG_DEBUG, "%s:%s:%d: %s: %s", file, func, line, expr, tb_strerror(err));
}

/* ---- the caller's error buffer (core/errbuf.h) ----------------------------- */

int tb__verrf(char *err, size_t errlen, int rc, const char *fmt, va_list ap)
{
    if (err != NULL && errlen > 0)
        vsnprintf(err, errlen, fmt, ap);
    return rc;
}

int tb__errf(char *err, size_t errlen, int rc, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    tb__verrf(err, errlen, rc, fmt, ap);
    va_end(ap);
    return rc;
}

int tb__errf_first(char *err, size_t errlen, int rc, const char *fmt, ...)
{
    if (err == NULL || errlen == 0 || err[0] != '\0')
        return rc;
    va_list ap;
    va_start(ap, fmt);
    tb__verrf(err, errlen, rc, fmt, ap);
    va_end(ap);
    return rc;
}
