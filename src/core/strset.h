/*
 * strset.h - a handle's copy of a caller's string (internal): what a setter
 * such as tb_mw_set_checkpoint(mw, path) keeps.
 */
#ifndef TB_CORE_STRSET_H
#define TB_CORE_STRSET_H

/* Replace *slot with a copy of s (NULL clears it).  TB_ERR_NOMEM leaves
 * *slot as it was. */
int tb__strset(char **slot, const char *s);

#endif /* TB_CORE_STRSET_H */
