/*
 * err.c - messages and names for the error codes of TB_ERRNO_MAP.
 */
#include "tenbin/core.h"

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
