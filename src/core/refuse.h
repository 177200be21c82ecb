/*
 * refuse.h - how a setter refuses.
 *
 * A setter that refuses a value returns its code and logs one warning line
 * saying what it refused and why, so a program that ignores the code (and
 * runs on with the default) still says so:
 *
 *     if (k > mw->size)
 *         return TB__REFUSE(TB_ERR_SIZE, "tb_mw_set_policy: '%s' needs %ld ranks, ...", ...);
 *
 * The CLI, which reports a refusal in its own words with the option's name,
 * lowers the log level around the call (tools/cli.h, tb_cli_hush).
 */
#ifndef TB_CORE_REFUSE_H
#define TB_CORE_REFUSE_H

#include "tenbin/core.h"

#define TB__REFUSE(rc, ...) (tb_log(TB_LOG_WARN, __VA_ARGS__), (rc))

#endif /* TB_CORE_REFUSE_H */
