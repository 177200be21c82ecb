/*
 * util.c - strict number parsing, atomic file writes, growable arrays, and
 * whether a program can be run.
 */
#define _POSIX_C_SOURCE 200809L

#include "tenbin/core.h"

#include <ctype.h>
#include <limits.h>
#include <stdint.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/proc.h"
#include "core/strset.h"

/* strtol/strtod skip leading blanks; we want the whole string to be the
 * number, so a leading blank (like a trailing one) is a parse error. */
static int starts_ok(const char *s)
{
    return s != NULL && s[0] != '\0' && !isspace((unsigned char)s[0]);
}

int tb_parse_long(const char *s, long min, long max, long *out)
{
    if (!starts_ok(s))
        return TB_ERR_PARSE;
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (end == s || *end != '\0')
        return TB_ERR_PARSE;
    if (errno == ERANGE || v < min || v > max)
        return TB_ERR_RANGE;
    *out = v;
    return TB_OK;
}

int tb_parse_double(const char *s, double *out)
{
    if (!starts_ok(s))
        return TB_ERR_PARSE;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end != '\0')
        return TB_ERR_PARSE;
    /* Overflow is out of range; underflow to a tiny value is accepted. */
    if (errno == ERANGE && fabs(v) == HUGE_VAL)
        return TB_ERR_RANGE;
    /* "inf" and "nan" are spelled like numbers but are not finite ones. */
    if (!isfinite(v))
        return TB_ERR_PARSE;
    *out = v;
    return TB_OK;
}

static int io_error(const char *what, const char *path, int err)
{
    tb_log(TB_LOG_ERROR, "%s %s: %s", what, path, strerror(err));
    return TB_ERR_IO;
}

/* Writes and closes f; returns 0 or the errno of the first failure. */
static int write_all(FILE *f, const void *data, size_t len)
{
    int err = 0;
    if (len > 0 && fwrite(data, 1, len, f) != len)
        err = errno ? errno : EIO;
    if (fflush(f) != 0 && err == 0)
        err = errno ? errno : EIO;
    /* on the disk before the rename makes it the file */
    if (err == 0 && fsync(fileno(f)) != 0)
        err = errno;
    if (fclose(f) != 0 && err == 0)
        err = errno ? errno : EIO;
    return err;
}

int tb_write_file_atomic(const char *path, const void *data, size_t len)
{
    if (path == NULL || path[0] == '\0' || (len > 0 && data == NULL))
        return TB_ERR_INVALID;
    size_t n = strlen(path);
    char *tmp = malloc(n + 5);
    if (tmp == NULL)
        return TB_ERR_NOMEM;
    memcpy(tmp, path, n);
    memcpy(tmp + n, ".tmp", 5);
    int rc = TB_OK;
    errno = 0;
    FILE *f = fopen(tmp, "wb");
    if (f == NULL) {
        rc = io_error("cannot write", path, errno);
    } else {
        errno = 0;
        int err = write_all(f, data, len);
        if (err != 0)
            rc = io_error("cannot write", path, err);
        else if (rename(tmp, path) != 0)
            rc = io_error("cannot write", path, errno);
        if (rc != TB_OK)
            remove(tmp);
    }
    free(tmp);
    return rc;
}

int tb_grow(void *items, size_t *cap, size_t len, size_t item_size, size_t first)
{
    if (!items || !cap || item_size == 0)
        return TB_ERR_INVALID;
    if (len < *cap)
        return TB_OK;
    size_t n = *cap ? 2 * *cap : (first ? first : 1);
    if (n > SIZE_MAX / item_size)
        return TB_ERR_NOMEM;
    void *old, *p;
    memcpy(&old, items, sizeof old); /* the caller's pointer, whatever its type */
    p = realloc(old, n * item_size);
    if (!p)
        return TB_ERR_NOMEM;
    memcpy(items, &p, sizeof p);
    *cap = n;
    return TB_OK;
}

int tb_read_file(const char *path, size_t max, char **data, size_t *len, char *err,
                 size_t errlen)
{
    if (path == NULL || data == NULL || len == NULL)
        return TB_ERR_INVALID;
    errno = 0;
    FILE *fp = fopen(path, "rb");
    if (fp == NULL) {
        if (err != NULL && errlen > 0)
            snprintf(err, errlen, "%s: cannot read: %s", path, strerror(errno));
        return TB_ERR_IO;
    }
    tb_buf b = TB_BUF_INIT;
    char chunk[1 << 16];
    size_t got;
    int rc = TB_OK;
    while (rc == TB_OK && (got = fread(chunk, 1, sizeof chunk, fp)) > 0)
        rc = b.len + got > max ? TB_ERR_RANGE : tb_buf_append(&b, chunk, got);
    int e = ferror(fp) ? (errno ? errno : EIO) : 0;
    fclose(fp);
    if (rc == TB_OK && e == 0)
        rc = tb_buf_append(&b, "", 1);
    if (rc != TB_OK || e != 0) {
        tb_buf_free(&b);
        if (err != NULL && errlen > 0) {
            if (e != 0)
                snprintf(err, errlen, "%s: cannot read: %s", path, strerror(e));
            else if (rc == TB_ERR_RANGE)
                snprintf(err, errlen, "%s: cannot read: larger than %zu bytes", path, max);
            else
                snprintf(err, errlen, "%s: cannot read: out of memory", path);
        }
        return e != 0 ? TB_ERR_IO : rc;
    }
    *data = (char *)b.data;
    *len = b.len - 1;
    return TB_OK;
}

uint64_t tb_fnv1a(uint64_t h, const void *data, size_t n)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 1099511628211ULL;
    return h;
}

int tb_which(const char *prog, char *out, size_t n)
{
    if (!prog || !*prog || !out || n == 0)
        return 0;
    if (strchr(prog, '/')) {
        int len = snprintf(out, n, "%s", prog);
        return len >= 0 && (size_t)len < n && access(prog, X_OK) == 0;
    }
    const char *path = getenv("PATH");
    if (!path || !*path)
        path = "/usr/local/bin:/usr/bin:/bin";
    for (const char *p = path;;) {
        const char *c = strchr(p, ':');
        size_t k = c ? (size_t)(c - p) : strlen(p);
        struct stat st;
        int len = snprintf(out, n, "%.*s/%s", (int)k, k ? p : ".", prog);
        if (len > 0 && (size_t)len < n && stat(out, &st) == 0 && S_ISREG(st.st_mode) &&
            access(out, X_OK) == 0)
            return 1;
        if (!c)
            return 0;
        p = c + 1;
    }
}

int tb__runnable(const char *prog)
{
    char buf[PATH_MAX];
    return tb_which(prog, buf, sizeof buf);
}

int tb__strset(char **slot, const char *s)
{
    char *c = s ? strdup(s) : NULL;
    if (s && !c)
        return TB_ERR_NOMEM;
    free(*slot);
    *slot = c;
    return TB_OK;
}
