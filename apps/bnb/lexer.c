/*
 * lexer.c - whitespace-separated tokens with their line numbers (lexer.h).
 */
#define _POSIX_C_SOURCE 200809L
#include "lexer.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "tenbin/core.h"

int tb_lexer_open(tb_lexer *x, const char *path, char *err, size_t errlen)
{
    *x = (tb_lexer){fopen(path, "r"), path, 1, 1, err, errlen};
    if (!x->f) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return TB_ERR_IO;
    }
    return TB_OK;
}

void tb_lexer_close(tb_lexer *x)
{
    if (x->f)
        fclose(x->f);
    x->f = NULL;
}

void tb_lexer_error(tb_lexer *x, int line, const char *fmt, ...)
{
    int w = snprintf(x->err, x->errlen, "%s:%d: ", x->path, line);
    if (w < 0 || (size_t)w >= x->errlen)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(x->err + w, x->errlen - (size_t)w, fmt, ap);
    va_end(ap);
}

int tb_lexer_token(tb_lexer *x, char *tok, size_t n)
{
    int c;
    while ((c = fgetc(x->f)) != EOF && isspace(c))
        if (c == '\n')
            x->line++;
    if (c == EOF)
        return 0;
    x->tok_line = x->line;
    size_t k = 0;
    while (c != EOF && !isspace(c)) {
        if (k + 1 < n)
            tok[k++] = (char)c;
        c = fgetc(x->f);
    }
    if (c != EOF)
        ungetc(c, x->f);
    tok[k] = 0;
    return 1;
}

int tb_lexer_double(tb_lexer *x, const char *what, double *v)
{
    char tok[64];
    if (!tb_lexer_token(x, tok, sizeof tok)) {
        tb_lexer_error(x, x->tok_line, "the file ends where %s was expected", what);
        return 0;
    }
    char *end;
    errno = 0;
    *v = strtod(tok, &end);
    if (*end || end == tok || errno || !isfinite(*v)) {
        tb_lexer_error(x, x->tok_line, "expected %s, got '%s'", what, tok);
        return -1;
    }
    return 1;
}

int tb_lexer_int(tb_lexer *x, int64_t lo, int64_t hi, int64_t *v)
{
    char tok[32];
    if (!tb_lexer_token(x, tok, sizeof tok)) {
        tb_lexer_error(x, x->tok_line, "the file ends where an integer was expected");
        return 0;
    }
    char *end;
    errno = 0;
    long long r = strtoll(tok, &end, 10);
    if (*end || end == tok || errno || r < lo || r > hi) {
        tb_lexer_error(x, x->tok_line,
                       "expected an integer from %" PRId64 " to %" PRId64 ", got '%s'", lo, hi,
                       tok);
        return -1;
    }
    *v = r;
    return 1;
}
