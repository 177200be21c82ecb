/*
 * json.c - the writer of the run summaries: cJSON objects, numbers that are
 * not finite as null, written on one line with ", " and ": " (json.h).
 */
#include "core/json.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * Numbers are written by us, as raw text, not by cJSON: cJSON prints %1.15g
 * when that reads back to within an epsilon of the value, so it can lose
 * the last bits.  A double is written with the fewest digits (15, 16, 17)
 * that read back to it exactly; an integral one below 1e17 with all its
 * digits (as %.17g always wrote them: 1e+16 would read as a float).
 */
enum { NUM_TEXT = 40 }; /* room for any double as text */

/* u's decimal digits at d, without printf (a per-rank table of a million
 * ranks is mostly counts and integral zeros); the end, not terminated. */
static char *u64_text(char *d, uint64_t u)
{
    char tmp[20];
    int k = 0;
    do
        tmp[k++] = (char)('0' + u % 10);
    while ((u /= 10) != 0);
    while (k > 0)
        *d++ = tmp[--k];
    return d;
}

static void format_double(char buf[NUM_TEXT], double v)
{
    if (v == floor(v) && fabs(v) < 1e17) { /* the digits %.17g writes */
        char *d = buf;
        if (signbit(v))
            *d++ = '-';
        *u64_text(d, (uint64_t)fabs(v)) = '\0';
        return;
    }
    for (int p = 15; p <= 17; p++) {
        snprintf(buf, NUM_TEXT, "%.*g", p, v);
        if (strtod(buf, NULL) == v)
            return;
    }
}

cJSON *tb__json_num_item(double v)
{
    if (!isfinite(v))
        return cJSON_CreateNull();
    char text[NUM_TEXT];
    format_double(text, v);
    return cJSON_CreateRaw(text);
}

cJSON *tb__json_u64_item(uint64_t v)
{
    char digits[24];
    *u64_text(digits, v) = '\0';
    return cJSON_CreateRaw(digits);
}

static cJSON *long_item(long v)
{
    char digits[24];
    snprintf(digits, sizeof digits, "%ld", v);
    return cJSON_CreateRaw(digits);
}

int tb__json_put_num(tb_buf *out, double v)
{
    char text[NUM_TEXT];
    if (isfinite(v))
        format_double(text, v);
    else
        memcpy(text, "null", 5);
    return tb_buf_append(out, text, strlen(text));
}

int tb__json_put_u64(tb_buf *out, uint64_t v)
{
    char digits[24];
    return tb_buf_append(out, digits, (size_t)(u64_text(digits, v) - digits));
}

int tb__json_put_str(tb_buf *out, const char *s)
{
    return tb_buf_append(out, s, strlen(s));
}

/* ", \"key\": " */
static int put_key(tb_buf *out, const char *key)
{
    TB_CHECK(tb__json_put_str(out, ", \""));
    TB_CHECK(tb__json_put_str(out, key));
    return tb__json_put_str(out, "\": ");
}

int tb__json_put_member_num(tb_buf *out, const char *key, double v)
{
    TB_CHECK(put_key(out, key));
    return tb__json_put_num(out, v);
}

int tb__json_put_member_u64(tb_buf *out, const char *key, uint64_t v)
{
    TB_CHECK(put_key(out, key));
    return tb__json_put_u64(out, v);
}

/* Adds item (NULL: out of memory) under key; 1 when it could not. */
static int add(cJSON *obj, const char *key, cJSON *item)
{
    if (item && cJSON_AddItemToObject(obj, key, item))
        return 0;
    cJSON_Delete(item);
    return 1;
}

int tb__json_num(cJSON *obj, const char *key, double v)
{
    return add(obj, key, tb__json_num_item(v));
}

int tb__json_u64(cJSON *obj, const char *key, uint64_t v)
{
    return add(obj, key, tb__json_u64_item(v));
}

int tb__json_int(cJSON *obj, const char *key, long v)
{
    return add(obj, key, long_item(v));
}

int tb__json_bool(cJSON *obj, const char *key, int v)
{
    return add(obj, key, cJSON_CreateBool(v != 0));
}

int tb__json_str(cJSON *obj, const char *key, const char *v)
{
    return add(obj, key, v ? cJSON_CreateString(v) : cJSON_CreateNull());
}

/* An array of the n items item(v, i) under key; 1 when out of memory. */
static int add_array(cJSON *obj, const char *key, const void *v, size_t n,
                     cJSON *(*item)(const void *v, size_t i))
{
    cJSON *a = cJSON_CreateArray();
    int bad = a == NULL;
    for (size_t i = 0; i < n && !bad; i++) {
        cJSON *x = item(v, i);
        bad = !x || !cJSON_AddItemToArray(a, x);
    }
    if (bad) {
        cJSON_Delete(a);
        return 1;
    }
    return add(obj, key, a);
}

static cJSON *num_at(const void *v, size_t i)
{
    return tb__json_num_item(((const double *)v)[i]);
}

static cJSON *u64_at(const void *v, size_t i)
{
    return tb__json_u64_item(((const uint64_t *)v)[i]);
}

static cJSON *long_at(const void *v, size_t i)
{
    return long_item(((const long *)v)[i]);
}

int tb__json_num_array(cJSON *obj, const char *key, const double *v, size_t n)
{
    return add_array(obj, key, v, n, num_at);
}

int tb__json_u64_array(cJSON *obj, const char *key, const uint64_t *v, size_t n)
{
    return add_array(obj, key, v, n, u64_at);
}

int tb__json_int_array(cJSON *obj, const char *key, const long *v, size_t n)
{
    return add_array(obj, key, v, n, long_at);
}

/* cJSON's compact text with a space after every ',' and ':' outside
 * strings. */
static int append_spaced(tb_buf *out, const char *s)
{
    size_t n = strlen(s), extra = 0;
    int in_str = 0;
    for (size_t i = 0; i < n; i++) {
        if (in_str) {
            if (s[i] == '\\')
                i++;
            else if (s[i] == '"')
                in_str = 0;
        } else if (s[i] == '"') {
            in_str = 1;
        } else if (s[i] == ',' || s[i] == ':') {
            extra++;
        }
    }
    TB_CHECK(tb_buf_reserve(out, n + extra));
    char *d = (char *)out->data + out->len;
    in_str = 0;
    for (size_t i = 0; i < n; i++) {
        *d++ = s[i];
        if (in_str) {
            if (s[i] == '\\')
                *d++ = s[++i];
            else if (s[i] == '"')
                in_str = 0;
        } else if (s[i] == '"') {
            in_str = 1;
        } else if (s[i] == ',' || s[i] == ':') {
            *d++ = ' ';
        }
    }
    out->len += n + extra;
    return TB_OK;
}

/* The numbers of a parsed tree as raw text written as above, so that they
 * come out as exact as they went in (as doubles); 1 when out of memory. */
static int exact_numbers(cJSON *parent)
{
    for (cJSON *m = parent->child; m; m = m->next) {
        if (cJSON_IsArray(m) || cJSON_IsObject(m)) {
            if (exact_numbers(m))
                return 1;
        } else if (cJSON_IsNumber(m)) {
            cJSON *r = tb__json_num_item(m->valuedouble);
            if (!r)
                return 1;
            r->string = m->string; /* the key moves to the replacement */
            m->string = NULL;
            cJSON_ReplaceItemViaPointer(parent, m, r);
            m = r;
        }
    }
    return 0;
}

/* Moves every member of from to the end of to, in order; 1 when out of
 * memory. */
static int move_members(cJSON *to, cJSON *from)
{
    cJSON *m;
    int bad = 0;
    while ((m = from->child) != NULL) {
        cJSON_DetachItemViaPointer(from, m);
        /* the key is copied before the old one is freed */
        if (!cJSON_AddItemToObject(to, m->string, m)) {
            cJSON_Delete(m);
            bad = 1;
        }
    }
    return bad;
}

int tb__json_emit(cJSON *obj, int bad, const char *extra, tb_buf *out)
{
    if (!obj || bad) {
        cJSON_Delete(obj);
        return TB_ERR_NOMEM;
    }
    int rc = TB_OK;
    cJSON *top = obj;
    if (extra) {
        cJSON *x = cJSON_Parse(extra);
        if (!cJSON_IsObject(x)) {
            rc = TB_ERR_PARSE;
        } else if (exact_numbers(x)) {
            rc = TB_ERR_NOMEM;
        } else {
            for (cJSON *m = x->child; m && !rc; m = m->next)
                if (cJSON_GetObjectItemCaseSensitive(obj, m->string))
                    rc = TB_ERR_INVALID;
        }
        if (!rc) {
            /* x's members first, then obj's */
            if (move_members(x, obj))
                rc = TB_ERR_NOMEM;
            cJSON_Delete(obj);
            top = x;
        } else {
            cJSON_Delete(x);
        }
    }
    if (!rc) {
        char *text = cJSON_PrintUnformatted(top);
        rc = text ? append_spaced(out, text) : TB_ERR_NOMEM;
        cJSON_free(text);
    }
    cJSON_Delete(top);
    return rc;
}

int tb__json_emit_open(cJSON *obj, int bad, const char *extra, const char *const *later,
                       tb_buf *out)
{
    size_t len0 = out->len;
    if (extra && later && obj && !bad) { /* extra may not repeat what comes later either */
        cJSON *x = cJSON_Parse(extra);
        int dup = 0;
        for (const char *const *k = later; x && *k && !dup; k++)
            dup = cJSON_GetObjectItemCaseSensitive(x, *k) != NULL;
        cJSON_Delete(x);
        if (dup) {
            cJSON_Delete(obj);
            return TB_ERR_INVALID;
        }
    }
    int rc = tb__json_emit(obj, bad, extra, out);
    if (rc != TB_OK)
        return rc;
    /* a non-empty object ends with its last member and '}' */
    if (out->len < len0 + 3 || out->data[out->len - 1] != '}' || out->data[out->len - 2] == '{') {
        out->len = len0;
        return TB_ERR_INVALID;
    }
    out->len--;
    return TB_OK;
}
