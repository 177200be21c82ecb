/*
 * lexer.h - whitespace-separated tokens of a text instance file, with the
 * line each came from, for the readers of apps/bnb (knapsack, TSPLIB).
 *
 * Errors are one line, "path:line: what", written into the caller's buffer;
 * a reader may overwrite the generic end-of-file message with one that says
 * more (how many values were expected, and how many came).
 */
#ifndef TB_APPS_BNB_LEXER_H
#define TB_APPS_BNB_LEXER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef struct tb_lexer {
    FILE *f;
    const char *path;
    int line;     /* of the next character (1-based) */
    int tok_line; /* of the last token: where the data ended, at the end */
    char *err;
    size_t errlen;
} tb_lexer;

/* Open path; TB_ERR_IO with "path: reason" in err if it cannot be read. */
int tb_lexer_open(tb_lexer *x, const char *path, char *err, size_t errlen);
void tb_lexer_close(tb_lexer *x);

/* The next token, truncated to n - 1 bytes: 1, or 0 at the end of the file. */
int tb_lexer_token(tb_lexer *x, char *tok, size_t n);

/* The next token as a number (what: "an edge weight", for the message);
 * an integer must lie in [lo, hi].  1 on success, 0 at the end of the file
 * ("the file ends where <what> was expected"), -1 on a bad token. */
int tb_lexer_double(tb_lexer *x, const char *what, double *v);
int tb_lexer_int(tb_lexer *x, int64_t lo, int64_t hi, int64_t *v);

/* "path:line: " then the message, into the error buffer. */
void tb_lexer_error(tb_lexer *x, int line, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

#endif
