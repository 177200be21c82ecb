/*
 * json.h - what the library's JSON readers and writers share (internal).
 *
 * Readers: the kind of a cJSON value, for messages such as "tasks[3]:
 * expected an object, got an array".
 *
 * Writers: every run summary (tb_mw_summary_json, tb_bnb_summary_json, ...)
 * is built as a cJSON object with the tb__json_* adders below and written
 * by tb__json_emit.  Numbers that are NaN or +-inf are written as null;
 * cJSON prints the others with %1.15g, or %1.17g when that does not read
 * back to the same double, so every value is exact.
 */
#ifndef TB_CORE_JSON_H
#define TB_CORE_JSON_H

#include <stdint.h>

#include <cjson/cJSON.h>

#include "tenbin/core.h"

static inline const char *tb__json_kind(const cJSON *v)
{
    if (cJSON_IsString(v))
        return "a string";
    if (cJSON_IsNumber(v))
        return "a number";
    if (cJSON_IsBool(v))
        return "a boolean";
    if (cJSON_IsNull(v))
        return "null";
    if (cJSON_IsArray(v))
        return cJSON_GetArraySize(v) ? "an array" : "an empty array";
    return cJSON_IsObject(v) ? "an object" : "an invalid value";
}

/* Each adder adds key to obj and returns 0, or 1 when out of memory, so a
 * builder can `bad |= ...` and check once. */

/* A double; null when NaN or infinite. */
int tb__json_num(cJSON *obj, const char *key, double v);
/* An unsigned count, exact (doubles hold integers exactly up to 2^53 only:
 * above that the digits are written as they are). */
int tb__json_u64(cJSON *obj, const char *key, uint64_t v);
int tb__json_int(cJSON *obj, const char *key, long v);
int tb__json_bool(cJSON *obj, const char *key, int v);
/* A string; NULL gives null. */
int tb__json_str(cJSON *obj, const char *key, const char *v);
/* An array of n doubles (null for those NaN or infinite), counts or
 * integers. */
int tb__json_num_array(cJSON *obj, const char *key, const double *v, size_t n);
int tb__json_u64_array(cJSON *obj, const char *key, const uint64_t *v, size_t n);
int tb__json_int_array(cJSON *obj, const char *key, const long *v, size_t n);
/* The item of a double for an array: null when NaN or infinite; NULL when
 * out of memory. */
cJSON *tb__json_num_item(double v);
cJSON *tb__json_u64_item(uint64_t v);

/*
 * Append obj to out as one line of JSON text, members and elements
 * separated by ", " and keys by ": " (as Python's json.dumps writes it),
 * without a newline.  extra, when not NULL, is the text of a JSON object
 * whose members are written first: what the caller knows and the library
 * does not (a command, an input file).  Deletes obj in every case.
 * TB_ERR_PARSE: extra is not a JSON object; TB_ERR_INVALID: extra has a
 * key obj has; bad (an adder failed) or out of memory: TB_ERR_NOMEM.
 */
int tb__json_emit(cJSON *obj, int bad, const char *extra, tb_buf *out);
/* The same, but the object is left open (no closing '}'), for the caller to
 * append more members as text (", \"key\": value" with the writers below)
 * and the '}': a table of a million rows written as text, not as a million
 * cJSON objects.  later (NULL-terminated, or NULL) names the keys the caller
 * will append: extra may not have them either (TB_ERR_INVALID).  obj must
 * have a member (TB_ERR_INVALID otherwise). */
int tb__json_emit_open(cJSON *obj, int bad, const char *extra, const char *const *later,
                       tb_buf *out);
/* Append a value as text, as the adders write it: a double (null when NaN
 * or infinite), a count, text as it is (a key or a value already quoted). */
int tb__json_put_num(tb_buf *out, double v);
int tb__json_put_u64(tb_buf *out, uint64_t v);
int tb__json_put_str(tb_buf *out, const char *s);
/* A member after others: ", \"key\": value" (key as it is, not escaped). */
int tb__json_put_member_num(tb_buf *out, const char *key, double v);
int tb__json_put_member_u64(tb_buf *out, const char *key, uint64_t v);

#endif
