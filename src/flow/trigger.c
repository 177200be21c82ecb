/*
 * trigger.c - S2's rescheduling triggers (Fig. 6, 8 and 10 of the paper,
 * and the every-N baseline of section 5.3.2).
 *
 * task-finished and its-finished keep a flag, set by a speed change and
 * cleared by a reschedule: without a change since the last schedule there
 * is nothing new to plan with, so a task end alone never reschedules.
 */
#include <stdio.h>
#include <string.h>

#include "tenbin/flow.h"

static int never_speed(tb_flow_trigger *tr)
{
    (void)tr;
    return 0;
}

static int never_task(tb_flow_trigger *tr, size_t task, long its_left)
{
    (void)tr;
    (void)task;
    (void)its_left;
    return 0;
}

static int always_speed(tb_flow_trigger *tr)
{
    (void)tr;
    return 1;
}

static int every_speed(tb_flow_trigger *tr)
{
    return ++tr->count % tr->every == 0;
}

static int flag_speed(tb_flow_trigger *tr)
{
    tr->flag = 1;
    return 0;
}

static int take_flag(tb_flow_trigger *tr)
{
    int f = tr->flag;
    tr->flag = 0;
    return f;
}

static int task_finished(tb_flow_trigger *tr, size_t task, long its_left)
{
    (void)task;
    (void)its_left;
    return take_flag(tr);
}

/* Only a task in no set, or the last task of its set, may reschedule. */
static int its_finished(tb_flow_trigger *tr, size_t task, long its_left)
{
    (void)task;
    if (its_left > 0)
        return 0;
    return take_flag(tr);
}

static const tb_flow_trigger_ops triggers[] = {
    {sizeof(tb_flow_trigger_ops), "static", "never reschedule", never_speed, never_task},
    {sizeof(tb_flow_trigger_ops), "perf-changed", "at every speed change (AHEFT)", always_speed,
     never_task},
    {sizeof(tb_flow_trigger_ops), "perf-changed-every",
     "at every N-th speed change (perf-changed-every:N)", every_speed, never_task},
    {sizeof(tb_flow_trigger_ops), "task-finished",
     "at a task end, if a speed changed since the last schedule", flag_speed, task_finished},
    {sizeof(tb_flow_trigger_ops), "its-finished",
     "at the end of a task in no independent set or of a whole set, if a speed changed",
     flag_speed, its_finished},
};

const tb_flow_trigger_ops *tb_flow_trigger_get(size_t i)
{
    return i < sizeof triggers / sizeof triggers[0] ? &triggers[i] : NULL;
}

int tb_flow_trigger_parse(const char *spec, tb_flow_trigger *out, char *err, size_t errlen)
{
    if (!spec || !out)
        return TB_ERR_INVALID;
    memset(out, 0, sizeof *out);
    const char *colon = strchr(spec, ':');
    size_t len = colon ? (size_t)(colon - spec) : strlen(spec);
    for (size_t i = 0; i < sizeof triggers / sizeof triggers[0]; i++) {
        if (strlen(triggers[i].name) != len || strncmp(triggers[i].name, spec, len) != 0)
            continue;
        int wants_n = triggers[i].speed_changed == every_speed;
        if (wants_n != (colon != NULL))
            break;
        if (wants_n && tb_parse_long(colon + 1, 1, 1L << 40, &out->every) != TB_OK) {
            if (err && errlen)
                snprintf(err, errlen, "trigger '%s': N must be a positive integer", spec);
            return TB_ERR_PARSE;
        }
        out->ops = &triggers[i];
        return TB_OK;
    }
    if (err && errlen)
        snprintf(err, errlen,
                 "unknown trigger '%s' (expected static, perf-changed, perf-changed-every:N, "
                 "task-finished or its-finished)",
                 spec);
    return TB_ERR_PARSE;
}
