/*
 * fuzz_bnb_lexer.c - the tokenizer of apps/bnb's text readers
 * (apps/bnb/lexer.c): the first input byte picks which of tb_lexer_token,
 * tb_lexer_double and tb_lexer_int (with which range) read the rest, token
 * by token, as the knapsack and TSPLIB readers call them.
 */
#define _GNU_SOURCE /* memfd_create (fuzz_common.h) */
#include <math.h>

#include "../../apps/bnb/lexer.h"
#include "fuzz_common.h"

FUZZ_QUIET_INIT

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > FUZZ_MAX)
        return 0;
    unsigned mode = data[0];
    const char *path = fuzz_file(data + 1, size - 1);
    tb_lexer x;
    char err[512] = "";
    if (tb_lexer_open(&x, path, err, sizeof err) != TB_OK)
        abort();
    static const int64_t lo[4] = {0, -1, INT64_MIN, 1};
    static const int64_t hi[4] = {INT32_MAX, 1, INT64_MAX, 10000000};
    for (unsigned k = 0;; k++) {
        int got, line = x.line;
        unsigned op = (mode >> (2 * (k % 4))) & 3;
        if (op == 0) {
            char tok[8 + (mode & 7) * 8]; /* truncation, at several sizes */
            got = tb_lexer_token(&x, tok, sizeof tok);
            if (got == 1 && strlen(tok) >= sizeof tok)
                abort(); /* (a NUL byte in the file ends a token's string early) */
        } else if (op == 1) {
            double v;
            got = tb_lexer_double(&x, "a number", &v);
            if (got == 1 && !isfinite(v))
                abort();
        } else {
            int64_t v;
            unsigned r = (mode >> 4) & 3;
            got = tb_lexer_int(&x, lo[r], hi[r], &v);
            if (got == 1 && (v < lo[r] || v > hi[r]))
                abort();
        }
        if (x.line < line || x.tok_line > x.line)
            abort(); /* lines only advance */
        if (got <= 0) {
            if (op != 0 && err[0] == '\0')
                abort(); /* for a number, the end and a bad token say why */
            break;
        }
    }
    tb_lexer_close(&x);
    return 0;
}
