/*
 * json.h - what the library's JSON readers share (internal): the kind of a
 * cJSON value, for messages such as "tasks[3]: expected an object, got an
 * array".
 */
#ifndef TB_CORE_JSON_H
#define TB_CORE_JSON_H

#include <cjson/cJSON.h>

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

#endif
