/*
 * tags.h - what the mechanisms' proto.h files share (internal): the name of
 * a tag from its table, for logs and traces.  A proto.h declares its table
 * once as an X-macro of (NAME, "name") pairs, numbered from 1:
 *
 *     #define TB__MW_TAGS(X) X(TASK, "task") X(RESULT, "result") ...
 *     enum { TB__MW_TAG_NONE_ = 0, TB__MW_TAGS(MY_ENUM_ENTRY) };
 *     static const char *const names[] = {"unknown", TB__MW_TAGS(TB__TAG_STR)};
 *     return tb__tag_name(names, sizeof names / sizeof names[0], tag);
 */
#ifndef TB_TRANSPORT_TAGS_H
#define TB_TRANSPORT_TAGS_H

#include <stddef.h>

#define TB__TAG_STR(name, str) str,

/* names[tag], or names[0] ("unknown") for a number outside the table. */
static inline const char *tb__tag_name(const char *const *names, size_t n, int tag)
{
    return tag > 0 && (size_t)tag < n ? names[tag] : names[0];
}

#endif /* TB_TRANSPORT_TAGS_H */
