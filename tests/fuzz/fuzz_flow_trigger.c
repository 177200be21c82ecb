/*
 * fuzz_flow_trigger.c - tb_flow_trigger_parse ("static", "perf-changed",
 * "perf-changed-every:N", "task-finished", "its-finished"), then the
 * trigger asked a few times as a simulation asks it.
 */
#define _GNU_SOURCE /* memfd_create (fuzz_common.h) */
#include "fuzz_common.h"
#include "tenbin/flow.h"

FUZZ_QUIET_INIT

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 4096)
        return 0;
    char *spec = fuzz_cstr(data, size);
    tb_flow_trigger tr;
    char err[256] = "";
    int rc = tb_flow_trigger_parse(spec, &tr, err, sizeof err);
    fuzz_report(rc, err);
    if (rc == TB_OK) {
        if (tr.ops == NULL || tr.ops->name == NULL)
            abort();
        for (int i = 0; i < 4; i++) {
            if (tr.ops->speed_changed)
                (void)tr.ops->speed_changed(&tr);
            if (tr.ops->task_finished)
                (void)tr.ops->task_finished(&tr, (size_t)i, i - 1);
        }
    } else if (err[0] == '\0') {
        abort();
    }
    free(spec);
    return 0;
}
