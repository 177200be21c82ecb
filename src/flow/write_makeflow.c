/*
 * write_makeflow.c - writing a finalized workflow as a Makeflow file
 * (cctools), one rule per task:
 *
 *     # task ID
 *     OUT1 OUT2 .tenbin-done-7: IN1 IN2 .tenbin-done-3
 *     <TAB>prog -v 'arg 1' 'it'\\\''s' && touch .tenbin-done-7
 *
 * Targets are the task's output files, sources its input files.  Makeflow
 * needs a target per rule and orders rules only through files, so a task
 * that writes nothing, or that precedes a task reading none of its files
 * (an edge without a file: a control dependency), touches a marker
 * ".tenbin-done-INDEX" (INDEX: the task's index), a target of its rule and
 * a source of the rules of those successors.  One rule per target means a
 * file written by two tasks, or read and written by one, cannot be
 * expressed: an error, as are names Makeflow's lexer splits or rewrites
 * (blanks, control characters, \ " ' $ # : and =, "->" its remote
 * renaming, a leading @ its directives; "," which batch systems' file
 * lists split) and names starting like a marker.  Files no task writes must
 * exist where makeflow runs, except in synthetic mode, which adds a rule
 * creating each.
 *
 * Makeflow runs a command with /bin/sh -c, after its own lexer has taken
 * \, $ and # (escapes, variables, comments) even inside single quotes.  So
 * a word with anything but letters, digits and _-+./,:%@ (or one of
 * Makeflow's modifiers LOCAL and MAKEFLOW) is single-quoted for sh, then
 * \, $ and # get a backslash for Makeflow, and a quote in a word is written
 * '\\\'' (Makeflow reads \\ \' as \', sh then '\'' as the quote): Makeflow
 * and sh then agree on where quoted text ends.  Newlines and other control
 * characters but tab cannot pass: an error.
 *
 * Synthetic commands use sh, sleep (with a fraction of a second: not POSIX,
 * but GNU, BSD, macOS and BusyBox sleep take it), head -c and touch:
 *     sleep 0.1 && head -c 9091 /dev/zero > out.txt && touch .tenbin-done-0
 * An output in a directory gets mkdir -p first.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flow/flow_internal.h"

#define MARKER ".tenbin-done-"

typedef struct mf_writer {
    const tb_flow *f;
    tb_buf *out;
    double time_scale, size_scale;
    int synthetic;
    char *err;
    size_t errlen;
    uint8_t *marker; /* per task: it touches .tenbin-done-INDEX */
    long *writer;    /* per file: the task writing it, or -1 */
    uint8_t *read;   /* per file: a task reads it */
} mf_writer;

/* ---- checks ------------------------------------------------------------------ */

/* 1 if Makeflow can name the file in a rule (see the header) and it is not
 * one of the markers. */
static int name_ok(const char *s)
{
    if (s[0] == '@' || strstr(s, "->") != NULL || strncmp(s, MARKER, strlen(MARKER)) == 0)
        return 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if (*p <= ' ' || *p == 0x7f || strchr("\\\"'$#:=,", *p) != NULL)
            return 0;
    return 1;
}

/* Each file is written by one task at most, not by one that reads it, and
 * Makeflow can name every file a task uses. */
static int check_files(mf_writer *w)
{
    const tb_flow *f = w->f;
    for (size_t i = 0; i < f->nfiles; i++)
        w->writer[i] = -1;
    for (size_t k = 0; k < f->fin_off[f->n]; k++)
        w->read[f->fin[k]] = 1;
    for (size_t t = 0; t < f->n; t++) {
        for (size_t k = f->fout_off[t]; k < f->fout_off[t + 1]; k++) {
            uint32_t file = f->fout[k];
            if (w->writer[file] >= 0) {
                return tb__errf(w->err, w->errlen, TB_ERR_INVALID,
                                "%s: file '%s' is written by tasks '%s' and '%s' (Makeflow: one "
                                "rule per file)",
                                f->name, f->fname[file], f->id[w->writer[file]], f->id[t]);
            }
            w->writer[file] = (long)t;
        }
    }
    for (size_t t = 0; t < f->n; t++) {
        for (size_t k = f->fin_off[t]; k < f->fin_off[t + 1]; k++) {
            uint32_t file = f->fin[k];
            if (w->writer[file] == (long)t) {
                return tb__errf(w->err, w->errlen, TB_ERR_INVALID,
                                "%s: task '%s' reads and writes file '%s' (Makeflow cannot)",
                                f->name, f->id[t], f->fname[file]);
            }
        }
    }
    for (size_t i = 0; i < f->nfiles; i++) {
        if ((w->read[i] || w->writer[i] >= 0) && !name_ok(f->fname[i])) {
            return tb__errf(w->err, w->errlen, TB_ERR_INVALID,
                            "%s: file '%s': Makeflow cannot name it (blanks, control characters, "
                            "\\ \" ' $ # : = , ->, a leading @ or " MARKER ")",
                            f->name, f->fname[i]);
        }
    }
    return TB_OK;
}

/* Which tasks need a marker: no outputs, or a successor reading none. */
static void find_markers(mf_writer *w)
{
    const tb_flow *f = w->f;
    for (size_t t = 0; t < f->n; t++) {
        int need = f->fout_off[t] == f->fout_off[t + 1];
        for (size_t e = f->soff[t]; e < f->soff[t + 1] && !need; e++)
            need = !tb__flow_shares_file(f, t, f->succ[e]);
        w->marker[t] = (uint8_t)need;
    }
}

/* ---- output ------------------------------------------------------------------ */

/* 1 if s[0 .. n) can stand unquoted: neither sh nor Makeflow sees anything
 * special in it (no =: an assignment, no ~: a home directory), and it is
 * not a Makeflow command modifier. */
static int plain_word(const char *s, size_t n)
{
    if (n == 0 || (n == 5 && memcmp(s, "LOCAL", 5) == 0) ||
        (n == 8 && memcmp(s, "MAKEFLOW", 8) == 0))
        return 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (!(c >= 'a' && c <= 'z') && !(c >= 'A' && c <= 'Z') && !(c >= '0' && c <= '9') &&
            strchr("_-+./,:%@", c) == NULL)
            return 0;
    }
    return 1;
}

/* s[0 .. n) as one word of a Makeflow command, quoted if need be (see the
 * header); TB_ERR_INVALID for a character that cannot pass. */
static int put_word(tb_buf *b, const char *s, size_t n)
{
    if (plain_word(s, n))
        return tb_buf_append(b, s, n);
    TB_CHECK(tb_buf_append(b, "'", 1));
    for (const unsigned char *p = (const unsigned char *)s; p < (const unsigned char *)s + n;
         p++) {
        if ((*p < ' ' && *p != '\t') || *p == 0x7f)
            return TB_ERR_INVALID;
        if (*p == '\'')
            TB_CHECK(tb_buf_append(b, "'\\\\\\''", 6));
        else if (*p == '\\' || *p == '$' || *p == '#')
            TB_CHECK(tb_buf_printf(b, "\\%c", *p));
        else
            TB_CHECK(tb_buf_append(b, p, 1));
    }
    return tb_buf_append(b, "'", 1);
}

/* The task's program and arguments. */
static int put_command(mf_writer *w, size_t t)
{
    const tb_flow *f = w->f;
    if (f->cmd[t] == NULL) {
        return tb__errf(w->err, w->errlen, TB_ERR_INVALID,
                        "%s: task '%s' has no command (only a synthetic Makeflow can run it)",
                        f->name, f->id[t]);
    }
    for (size_t i = 0; f->cmd[t][i] != NULL; i++) {
        if (i > 0)
            TB_CHECK(tb_buf_append(w->out, " ", 1));
        int rc = put_word(w->out, f->cmd[t][i], strlen(f->cmd[t][i]));
        if (rc == TB_ERR_INVALID)
            tb__errf(w->err, w->errlen, rc,
                     "%s: task '%s': %s has a newline or another control character "
                     "(Makeflow cannot pass it)",
                     f->name, f->id[t], i == 0 ? "the program" : "an argument");
        TB_CHECK(rc);
    }
    return TB_OK;
}

/* "&& " between the parts of a command, after the first. */
static int put_and(tb_buf *b, int *first)
{
    int rc = *first ? TB_OK : tb_buf_append(b, " && ", 4);
    *first = 0;
    return rc;
}

/* Create file i at its size x size_scale (its directory first). */
static int put_make_file(mf_writer *w, size_t i, int *first)
{
    const char *name = w->f->fname[i], *slash = strrchr(name, '/');
    double bytes = w->f->fsize[i] * w->size_scale;
    if (slash != NULL && slash != name) {
        TB_CHECK(put_and(w->out, first));
        TB_CHECK(tb_buf_append(w->out, "mkdir -p ", 9));
        TB_CHECK(put_word(w->out, name, (size_t)(slash - name)));
    }
    TB_CHECK(put_and(w->out, first));
    TB_CHECK(tb_buf_printf(w->out, "head -c %lld /dev/zero > ", bytes > 0 ? llround(bytes) : 0));
    return put_word(w->out, name, strlen(name));
}

/* Sleep the task's work x time_scale, then write its outputs. */
static int put_synthetic(mf_writer *w, size_t t, int *first)
{
    const tb_flow *f = w->f;
    char secs[64];
    snprintf(secs, sizeof secs, "%.6f", tb__flow_mean_work(f, t) * w->time_scale);
    char *end = secs + strlen(secs);
    while (end[-1] == '0')
        *--end = '\0';
    if (end[-1] == '.')
        *--end = '\0';
    if (strcmp(secs, "0") != 0) {
        TB_CHECK(put_and(w->out, first));
        TB_CHECK(tb_buf_printf(w->out, "sleep %s", secs));
    }
    for (size_t k = f->fout_off[t]; k < f->fout_off[t + 1]; k++)
        TB_CHECK(put_make_file(w, f->fout[k], first));
    return TB_OK;
}

/* "# task ID", the ID's control characters as '?'. */
static int put_comment(tb_buf *b, const char *id)
{
    TB_CHECK(tb_buf_append(b, "# task ", 7));
    for (const unsigned char *p = (const unsigned char *)id; *p; p++)
        TB_CHECK(tb_buf_append(b, *p < ' ' || *p == 0x7f ? "?" : (const char *)p, 1));
    return tb_buf_append(b, "\n", 1);
}

static int put_rule(mf_writer *w, size_t t)
{
    const tb_flow *f = w->f;
    const char *sep = "";
    TB_CHECK(put_comment(w->out, f->id[t]));
    for (size_t k = f->fout_off[t]; k < f->fout_off[t + 1]; k++, sep = " ")
        TB_CHECK(tb_buf_printf(w->out, "%s%s", sep, f->fname[f->fout[k]]));
    if (w->marker[t])
        TB_CHECK(tb_buf_printf(w->out, "%s" MARKER "%zu", sep, t));
    TB_CHECK(tb_buf_append(w->out, ":", 1));
    for (size_t k = f->fin_off[t]; k < f->fin_off[t + 1]; k++)
        TB_CHECK(tb_buf_printf(w->out, " %s", f->fname[f->fin[k]]));
    for (size_t k = f->poff[t]; k < f->poff[t + 1]; k++) {
        uint32_t p = f->pred[k];
        if (w->marker[p] && !tb__flow_shares_file(f, p, t))
            TB_CHECK(tb_buf_printf(w->out, " " MARKER "%u", p));
    }
    TB_CHECK(tb_buf_append(w->out, "\n\t", 2));
    int first = 1;
    if (w->synthetic) {
        TB_CHECK(put_synthetic(w, t, &first));
    } else {
        TB_CHECK(put_command(w, t));
        first = 0;
    }
    if (w->marker[t]) {
        TB_CHECK(put_and(w->out, &first));
        TB_CHECK(tb_buf_printf(w->out, "touch " MARKER "%zu", t));
    }
    return tb_buf_append(w->out, "\n\n", 2);
}

/* Synthetic mode: a rule per file that no task writes but one reads. */
static int put_inputs(mf_writer *w)
{
    const tb_flow *f = w->f;
    for (size_t i = 0; i < f->nfiles; i++) {
        if (!w->read[i] || w->writer[i] >= 0)
            continue;
        int first = 1;
        TB_CHECK(tb_buf_printf(w->out, "# input\n%s:\n\t", f->fname[i]));
        TB_CHECK(put_make_file(w, i, &first));
        TB_CHECK(tb_buf_append(w->out, "\n\n", 2));
    }
    return TB_OK;
}

static int put_all(mf_writer *w)
{
    const tb_flow *f = w->f;
    TB_CHECK(check_files(w));
    find_markers(w);
    TB_CHECK(tb_buf_printf(w->out, "# Makeflow written by tenbin: %zu tasks", f->n));
    if (w->synthetic)
        TB_CHECK(tb_buf_printf(w->out, ", synthetic (work x %.9g s, sizes x %.9g)",
                               w->time_scale, w->size_scale));
    TB_CHECK(tb_buf_append(w->out, "\n\n", 2));
    if (w->synthetic)
        TB_CHECK(put_inputs(w));
    for (size_t t = 0; t < f->n; t++)
        TB_CHECK(put_rule(w, t));
    return TB_OK;
}

int tb__flow_write_makeflow(const tb_flow *f, tb_buf *out, double time_scale,
                            double size_scale, int synthetic, char *err, size_t errlen)
{
    if (f == NULL || out == NULL)
        return TB_ERR_INVALID;
    if (!f->final)
        return TB_ERR_STATE;
    mf_writer w = {.f = f, .out = out, .time_scale = time_scale, .size_scale = size_scale,
                   .synthetic = synthetic, .err = err, .errlen = errlen};
    w.marker = calloc(f->n ? f->n : 1, sizeof *w.marker);
    w.writer = malloc((f->nfiles ? f->nfiles : 1) * sizeof *w.writer);
    w.read = calloc(f->nfiles ? f->nfiles : 1, sizeof *w.read);
    int rc = w.marker && w.writer && w.read ? put_all(&w) : TB_ERR_NOMEM;
    free(w.marker);
    free(w.writer);
    free(w.read);
    return rc;
}
