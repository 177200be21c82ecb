/*
 * env.c - the TENBIN_* options registry (declared in env_table.h).
 *
 * An empty value counts as unset, so `TENBIN_X= cmd` restores the default.
 */
#define _POSIX_C_SOURCE 200809L

#include "tenbin/core.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "env_table.h"

static const tb_opt_desc env_table[] = {
#define TB__ENV_DESC(name, type, deflt, help) {name, TB_OPT_##type, deflt, help},
    TB_ENV_MAP(TB__ENV_DESC)
#undef TB__ENV_DESC
};

#define ENV_COUNT (sizeof env_table / sizeof env_table[0])

static const tb_opt_desc *find(const char *name)
{
    if (name == NULL)
        return NULL;
    for (size_t i = 0; i < ENV_COUNT; i++)
        if (strcmp(env_table[i].name, name) == 0)
            return &env_table[i];
    return NULL;
}

/* The text to parse for a declared variable of the wanted type: the
 * environment's value, else the default (*from_env tells which). */
static int lookup(const char *name, tb_opt_type type, const tb_opt_desc **d, const char **text,
                  int *from_env)
{
    *d = find(name);
    if (*d == NULL)
        return TB_ERR_NOTFOUND;
    if ((*d)->type != type)
        return TB_ERR_INVALID;
    const char *v = getenv(name);
    *from_env = v != NULL && v[0] != '\0';
    *text = *from_env ? v : (*d)->deflt;
    return TB_OK;
}

static int parse_bool(const char *s, int *out)
{
    static const char *const yes[] = {"1", "true", "yes", "on"};
    static const char *const no[] = {"0", "false", "no", "off"};
    for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++) {
        if (strcasecmp(s, yes[i]) == 0) {
            *out = 1;
            return TB_OK;
        }
        if (strcasecmp(s, no[i]) == 0) {
            *out = 0;
            return TB_OK;
        }
    }
    return TB_ERR_PARSE;
}

static int bad_value(const tb_opt_desc *d, const char *text, int from_env, const char *want)
{
    tb_log(TB_LOG_WARN, "%s%s=%s: expected %s", from_env ? "" : "default of ", d->name,
           text ? text : "(null)", want);
    return TB_ERR_PARSE;
}

/* The registry's default of a declared variable, parsed; a default that does
 * not parse (a mistake in env_table.h, which test_core catches) gives 0. */
static int default_bool(const tb_opt_desc *d)
{
    int v = 0;
    if (d->deflt == NULL || parse_bool(d->deflt, &v) != TB_OK)
        v = 0;
    return v;
}

static long default_long(const tb_opt_desc *d)
{
    long v = 0;
    if (d->deflt == NULL || tb_parse_long(d->deflt, LONG_MIN, LONG_MAX, &v) != TB_OK)
        v = 0;
    return v;
}

static double default_double(const tb_opt_desc *d)
{
    double v = 0;
    if (d->deflt == NULL || tb_parse_double(d->deflt, &v) != TB_OK)
        v = 0;
    return v;
}

int tb_env_bool(const char *name, int *out)
{
    const tb_opt_desc *d;
    const char *text;
    int from_env, v = 0;
    TB_CHECK(lookup(name, TB_OPT_BOOL, &d, &text, &from_env));
    if (text == NULL || parse_bool(text, &v) != TB_OK) {
        *out = default_bool(d);
        return bad_value(d, text, from_env, "a boolean (1/0/true/false/yes/no/on/off)");
    }
    *out = v;
    return TB_OK;
}

int tb_env_int(const char *name, long *out)
{
    const tb_opt_desc *d;
    const char *text;
    int from_env;
    long v = 0;
    TB_CHECK(lookup(name, TB_OPT_INT, &d, &text, &from_env));
    if (text == NULL || tb_parse_long(text, LONG_MIN, LONG_MAX, &v) != TB_OK) {
        *out = default_long(d);
        return bad_value(d, text, from_env, "an integer");
    }
    *out = v;
    return TB_OK;
}

int tb_env_double(const char *name, double *out)
{
    const tb_opt_desc *d;
    const char *text;
    int from_env;
    double v = 0;
    TB_CHECK(lookup(name, TB_OPT_DOUBLE, &d, &text, &from_env));
    if (text == NULL || tb_parse_double(text, &v) != TB_OK) {
        *out = default_double(d);
        return bad_value(d, text, from_env, "a finite number");
    }
    *out = v;
    return TB_OK;
}

int tb_env_int_in(const char *name, long lo, long hi, long *out)
{
    int rc = tb_env_int(name, out);
    if (rc != TB_OK)
        return rc;
    if (*out < lo || *out > hi) {
        *out = default_long(find(name));
        return TB_ERR_RANGE;
    }
    return TB_OK;
}

int tb_env_double_in(const char *name, double lo, double hi, double *out)
{
    int rc = tb_env_double(name, out);
    if (rc != TB_OK)
        return rc;
    if (!(*out >= lo && *out <= hi)) {
        *out = default_double(find(name));
        return TB_ERR_RANGE;
    }
    return TB_OK;
}

int tb_env_string(const char *name, const char **out)
{
    const tb_opt_desc *d;
    const char *text;
    int from_env;
    TB_CHECK(lookup(name, TB_OPT_STRING, &d, &text, &from_env));
    *out = text;
    return TB_OK;
}

static int word_index(const char *const *words, const char *s)
{
    for (int i = 0; s && words[i]; i++)
        if (strcmp(s, words[i]) == 0)
            return i;
    return -1;
}

int tb_env_word(const char *name, const char *const *words, int *out)
{
    if (!words)
        return TB_ERR_INVALID;
    const char *s = NULL;
    TB_CHECK(tb_env_string(name, &s));
    const char *deflt = tb_env_default(name);
    int i = word_index(words, s ? s : deflt);
    if (i >= 0) {
        *out = i;
        return TB_OK;
    }
    char list[256] = "";
    for (int k = 0; words[k]; k++) {
        size_t used = strlen(list);
        snprintf(list + used, sizeof list - used, "%s%s", k == 0 ? "" : words[k + 1] ? ", " : " or ",
                 words[k]);
    }
    TB_LOG_WARN("%s=%s is not %s; using %s", name, s, list, deflt ? deflt : "none");
    *out = word_index(words, deflt);
    return TB_ERR_PARSE;
}

const char *tb_env_default(const char *name)
{
    const tb_opt_desc *d = find(name);
    return d ? d->deflt : NULL;
}

size_t tb_env_count(void) { return ENV_COUNT; }

const tb_opt_desc *tb_env_get(size_t i) { return i < ENV_COUNT ? &env_table[i] : NULL; }

static const char *type_name(tb_opt_type t)
{
    switch (t) {
    case TB_OPT_BOOL:
        return "bool";
    case TB_OPT_INT:
        return "int";
    case TB_OPT_DOUBLE:
        return "double";
    case TB_OPT_STRING:
        return "string";
    }
    return "?";
}

static const char *dash(const char *s) { return s != NULL && s[0] != '\0' ? s : "-"; }

static int max_int(int a, size_t b) { return (size_t)a >= b ? a : (int)b; }

void tb_env_print(FILE *out)
{
    /* Column widths: at least the header, at most whatever the widest cell
     * needs; HELP is last and left ragged. */
    int w[4] = {4, 4, 7, 5};
    for (size_t i = 0; i < ENV_COUNT; i++) {
        const tb_opt_desc *d = &env_table[i];
        w[0] = max_int(w[0], strlen(d->name));
        w[1] = max_int(w[1], strlen(type_name(d->type)));
        w[2] = max_int(w[2], strlen(dash(d->deflt)));
        w[3] = max_int(w[3], strlen(dash(getenv(d->name))));
    }
    fprintf(out, "%-*s  %-*s  %-*s  %-*s  %s\n", w[0], "NAME", w[1], "TYPE", w[2], "DEFAULT",
            w[3], "VALUE", "HELP");
    for (size_t i = 0; i < ENV_COUNT; i++) {
        const tb_opt_desc *d = &env_table[i];
        fprintf(out, "%-*s  %-*s  %-*s  %-*s  %s\n", w[0], d->name, w[1], type_name(d->type),
                w[2], dash(d->deflt), w[3], dash(getenv(d->name)), d->help);
    }
}
