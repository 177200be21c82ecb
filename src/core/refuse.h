/*
 * refuse.h - how a call on a handle refuses or fails.
 *
 * Every handle (tb_mw, tb_bnb, tb_redist, tb_flow) keeps the line of its last
 * failure in a field `char err[TB__ERR_LINE]`, which its tb_X_error returns:
 * the one way a program reaches the message of a call on a handle (a call
 * without a handle writes it into the caller's err buffer instead,
 * core/errbuf.h).  The line is also logged, so a program that ignores the
 * code (and runs on with the default) still says so:
 *
 *     if (k > mw->size)
 *         return TB__REFUSE_H(mw, TB_ERR_SIZE, "tb_mw_set_policy: '%s' needs %ld ranks, ...", ...);
 *
 * A refusal (a setter's value) is logged as a warning, a failure (a run) as
 * an error.  h may be NULL (the handle argument itself was NULL): then the
 * line is only logged.  The format arguments are evaluated twice: no side
 * effects in them.  The CLI, which reports a refusal in its own words with
 * the option's name, lowers the log level around the call (tools/cli.h,
 * tb_cli_hush).
 */
#ifndef TB_CORE_REFUSE_H
#define TB_CORE_REFUSE_H

#include "core/errbuf.h"
#include "tenbin/core.h"

#define TB__ERR_LINE 512

#define TB__HERR(h) ((h) ? (h)->err : NULL), sizeof((h)->err)
#define TB__REFUSE_H(h, rc, ...)                                                                   \
    (tb__errf(TB__HERR(h), (rc), __VA_ARGS__), tb_log(TB_LOG_WARN, __VA_ARGS__), (rc))
#define TB__FAIL_H(h, rc, ...) (TB__ERR_H(h, __VA_ARGS__), (rc))
/* A failure's line, kept and logged, where the code is returned later. */
#define TB__ERR_H(h, ...)                                                                          \
    ((void)tb__errf(TB__HERR(h), 0, __VA_ARGS__), tb_log(TB_LOG_ERROR, __VA_ARGS__))

#endif /* TB_CORE_REFUSE_H */
