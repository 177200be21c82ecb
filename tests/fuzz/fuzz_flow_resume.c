/*
 * fuzz_flow_resume.c - the reader of the log `tenbin flow run --resume LOG`
 * takes (tb__flow_resume_parse, src/flow/resume.c), against one fixed
 * workflow of 8 tasks: a diamond fetch -> left, right -> join, then sum, and
 * words -> count beside it, both into report.  The seeds are logs of real
 * runs of this workflow (in WfFormat, each task a small sh command writing
 * its one output file): all of it on 2 ranks; on 3 ranks with --retries 1
 * and `right` killed by SIGTERM twice; that run resumed on 2 ranks.
 *
 * A log read must give a non-empty work_dir and, per task, -1 or a rank in
 * [0, INT_MAX], with ndone counting the others; an error must leave the
 * result empty and say why in one line.
 */
#define _GNU_SOURCE /* memfd_create (fuzz_common.h) */
#include <limits.h>

#include "flow/flow_internal.h"
#include "fuzz_common.h"
#include "tenbin/flow.h"

static tb_flow *fuzz_wf;

static const char fuzz_wf_text[] = "task fetch 0.01\ntask left 0.01\ntask right 0.01\n"
                                   "task join 0.01\ntask sum 0.01\ntask words 0.01\n"
                                   "task count 0.01\ntask report 0.01\n"
                                   "edge fetch left 100\nedge fetch right 100\n"
                                   "edge left join 100\nedge right join 100\n"
                                   "edge join sum 100\nedge sum report 100\n"
                                   "edge words count 100\nedge count report 100\n";

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fuzz_quiet();
    char err[256];
    if (tb_flow_parse(fuzz_wf_text, sizeof fuzz_wf_text - 1, "resume-fuzz.txt",
                      TB_FLOW_FORMAT_TEXT, &fuzz_wf, err, sizeof err) != TB_OK) {
        fprintf(stderr, "fuzz_flow_resume: %s\n", err);
        abort();
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > FUZZ_MAX)
        return 0;
    tb__flow_resume r;
    char err[512] = "";
    /* not NUL-terminated: the reader must stay within size */
    char *text = malloc(size ? size : 1);
    if (text == NULL)
        abort();
    if (size)
        memcpy(text, data, size);
    int rc = tb__flow_resume_parse(fuzz_wf, text, size, "log.json", &r, err, sizeof err);
    free(text);
    fuzz_report(rc, err);
    size_t n = tb_flow_ntasks(fuzz_wf);
    if (rc == TB_OK) {
        if (r.work_dir == NULL || r.work_dir[0] == '\0' || r.rank == NULL)
            abort();
        size_t done = 0;
        for (size_t t = 0; t < n; t++) {
            if (r.rank[t] < -1)
                abort(); /* an int is at most INT_MAX: -1 or [0, INT_MAX] remain */
            done += r.rank[t] >= 0;
        }
        if (done != r.ndone || r.ndone > n)
            abort();
    } else {
        if (rc != TB_ERR_PARSE && rc != TB_ERR_INVALID && rc != TB_ERR_NOMEM)
            abort();
        if (err[0] == '\0' || strchr(err, '\n') != NULL || strncmp(err, "log.json: ", 10) != 0)
            abort(); /* one line, naming the log */
        if (r.work_dir != NULL || r.rank != NULL || r.ndone != 0)
            abort(); /* an error leaves nothing behind */
    }
    tb__flow_resume_free(&r);
    return 0;
}
