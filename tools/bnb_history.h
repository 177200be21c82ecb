/*
 * bnb_history.h - the history file of `tenbin bnb --history FILE.json`,
 * read back by `tenbin bnb replay FILE.json`: {"problem": ..., "final":
 * ..., "history": [...]}, what the live view (tools/web/index.html) shows
 * at the end of the run.  Kept apart from the command so the reader can be
 * fuzzed on its own (tests/fuzz/fuzz_bnb_history.c).
 */
#ifndef TB_TOOLS_BNB_HISTORY_H
#define TB_TOOLS_BNB_HISTORY_H

#include <stddef.h>

/* A history read and checked, as the replay serves it: each text is
 * cJSON's compact re-printing of what the file holds (valid JSON whatever
 * the file's spelling), NUL-terminated.  Free with tb_bnb_history_free. */
typedef struct tb_bnb_history {
    char *problem;  /* the problem object (GET /api/problem) */
    char *final;    /* the final state object (GET /api/state) */
    char *points;   /* the history's points, comma-separated: the inside of
                       the array, "" when there are none (GET /api/history) */
    size_t npoints; /* how many */
} tb_bnb_history;

/*
 * Read a history from text[0..len) (text need not be NUL-terminated); path
 * names it in messages.  The file must be one JSON object (blanks may
 * follow) and have the shape the page relies on, as the writer in
 * tools/cmd_bnb.c makes it; members it does not know are kept and ignored:
 *
 *  - problem: {"problem": "knapsack" | "tsp" | "bmi", "file": string,
 *    "view": ...}; for tsp, view is {"n": count, "coords": null or n pairs
 *    [x, y] of numbers}; "serve", if present, is false.
 *  - final: {"running": false, "problem": as problem.problem, "file":
 *    string, "sense": "min" | "max", "elapsed_s": number >= 0, "upper",
 *    "lower", "gap": number or null, "target_gap": number >= 0, "proven":
 *    boolean, "nodes": count, "groups": [{"name": string, "workers",
 *    "pending", "nodes", "tasks": counts, "busy_s", "idle_s",
 *    "throughput": numbers}], "solution": null or the problem's: knapsack
 *    an array of item indices, tsp a tour of problem.view.n cities below
 *    n, bmi {"x": [numbers], "y": [numbers]}}; "idle", if present, is
 *    false; "pending", if present, a count.
 *  - history: points {"t": seconds >= 0, never less than the point
 *    before's, "upper", "lower": number or null, "pending": count,
 *    "groups": [counts]}.
 *
 * Numbers are finite (the writer prints null where a bound is not); a count
 * is a whole number >= 0.  No member the page reads may appear twice (a
 * browser would take the last, the checks the first).
 *
 * TB_OK with out filled (the caller frees it with tb_bnb_history_free), or
 * an error with out zeroed and one line in err: TB_ERR_PARSE naming path
 * and where it is ("h.json:3:17: not JSON", "h.json: history[12].t:
 * expected a number >= 0, got a string"), TB_ERR_NOMEM, TB_ERR_INVALID
 * (out NULL, or text NULL with len > 0).
 */
int tb_bnb_history_read(const char *text, size_t len, const char *path, tb_bnb_history *out,
                        char *err, size_t errlen);

/* Free what tb_bnb_history_read gave and zero h (NULL, or zeroed: nothing). */
void tb_bnb_history_free(tb_bnb_history *h);

#endif
