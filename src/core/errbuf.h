/*
 * errbuf.h - the one way the library formats a message into a caller's
 * error buffer (internal).  Functions that take `char *err, size_t errlen`
 * fill it with one line (no trailing newline) and return a tb_err; these do
 * both at once:
 *
 *     if (n < 1)
 *         return tb__errf(err, errlen, TB_ERR_RANGE, "-n: expected at least 1, got %d", n);
 *
 * A NULL buffer or a zero length is allowed (nothing is written).
 */
#ifndef TB_CORE_ERRBUF_H
#define TB_CORE_ERRBUF_H

#include <stdarg.h>
#include <stddef.h>

/* Formats into err (cut to errlen) and returns rc. */
int tb__errf(char *err, size_t errlen, int rc, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
int tb__verrf(char *err, size_t errlen, int rc, const char *fmt, va_list ap)
    __attribute__((format(printf, 4, 0)));

/* As tb__errf, but only into an empty buffer: the first fault of a run is
 * the one reported, not the echo of it that ends the other ranks. */
int tb__errf_first(char *err, size_t errlen, int rc, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif /* TB_CORE_ERRBUF_H */
