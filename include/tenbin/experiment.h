/*
 * experiment.h - knobs for experiments and tests, not part of Tenbin's API.
 *
 * These exist so that the benchmarks can reproduce a paper's setup (its
 * message sizes) and the tests can force rare paths.  A program that solves
 * a problem never needs them, so they are not in the module headers nor in
 * <tenbin.h>; include this header by name.  They follow the API convention
 * (docs/architecture.md) but may change or go between versions without
 * notice.  Each refuses a NULL handle with TB_ERR_INVALID.
 */
#ifndef TENBIN_EXPERIMENT_H
#define TENBIN_EXPERIMENT_H

#include <stddef.h>

#include "tenbin/bnb.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- bnb ----------------------------------------------------------------- */

/* Add this many bytes to every task a master sends (ignored by the worker):
 * to model a program that ships its problem data with each task, as S5's
 * did (its D_in, about 120 KB for the BMI problem of the paper's size). */
TB_API int tb_bnb_set_task_pad(tb_bnb *b, size_t bytes);
/* Add this many bytes per subproblem to every message that returns or moves
 * subproblems (a worker's result, a master's give, the supervisor's move; at
 * most 1 MiB): to model a program whose subproblems are bigger on the wire
 * than the problem's own encoding, as S5's were (24 nx + 24 ny + 16 B each
 * in its D_out, against 16 nx + 16 ny + 16 for apps/bnb/bmi.c). */
TB_API int tb_bnb_set_sub_pad(tb_bnb *b, size_t bytes);
/* Testing: the supervisor moves subproblems at every status (not only when
 * a group runs dry). */
TB_API int tb_bnb_set_force_moves(tb_bnb *b, int on);
/* Testing: the bytes of subproblems at which a message of them stops (a
 * task's answer, a task, a transfer between groups; default 8 MiB, at
 * least 1), so a test can make tasks stop at their budget on a small tree. */
TB_API int tb_bnb_set_msg_budget(tb_bnb *b, size_t bytes);

#ifdef __cplusplus
}
#endif

#endif /* TENBIN_EXPERIMENT_H */
