/*
 * sweep.c - what a sweep of emulations (tenbin emu sweep) makes of its
 * points: each variant's least makespan and saturation point, the best
 * variant, and the sweep as JSON.
 */
#include "tenbin/emu.h"

#include <math.h>
#include <stddef.h>

#include "core/json.h"

static void variant_saturation(tb_emu_sweep_variant *v, const long *ranks, size_t n, double tol)
{
    v->least_s = INFINITY;
    v->best_P = v->saturation_P = 0;
    for (size_t i = 0; i < n; i++)
        if (v->point[i].ok && v->point[i].makespan_s < v->least_s) {
            v->least_s = v->point[i].makespan_s;
            v->best_P = ranks[i];
        }
    for (size_t i = 0; i < n && isfinite(v->least_s); i++)
        if (v->point[i].ok && v->point[i].makespan_s <= (1 + tol) * v->least_s) {
            v->saturation_P = ranks[i];
            return;
        }
}

void tb_emu_sweep_saturation(tb_emu_sweep_result *s)
{
    double best = INFINITY;
    s->best = 0;
    for (size_t v = 0; v < s->nvariants; v++) {
        variant_saturation(&s->variant[v], s->ranks, s->nranks, s->tolerance);
        if (s->variant[v].least_s < best) {
            best = s->variant[v].least_s;
            s->best = v;
        }
    }
}

/* The field at offset off of every point, by P: null where the run failed. */
static int add_points(cJSON *obj, const char *key, const tb_emu_sweep_variant *v, size_t n,
                      size_t off)
{
    cJSON *a = cJSON_AddArrayToObject(obj, key);
    int bad = a == NULL;
    for (size_t i = 0; i < n && !bad; i++) {
        const tb_emu_sweep_point *p = &v->point[i];
        double x = *(const double *)((const char *)p + off);
        bad = !cJSON_AddItemToArray(a, p->ok ? tb__json_num_item(x) : cJSON_CreateNull());
    }
    return bad;
}

static int add_variant(cJSON *variants, const tb_emu_sweep_variant *v, size_t n)
{
    cJSON *j = cJSON_CreateObject();
    if (!cJSON_AddItemToArray(variants, j))
        return 1;
    int bad = v->masters > 0 ? tb__json_int(j, "masters", v->masters)
                             : !cJSON_AddNullToObject(j, "masters");
    bad |= add_points(j, "makespan_s", v, n, offsetof(tb_emu_sweep_point, makespan_s));
    bad |= add_points(j, "master_compute_s", v, n, offsetof(tb_emu_sweep_point, compute_s));
    bad |= add_points(j, "master_send_s", v, n, offsetof(tb_emu_sweep_point, send_s));
    bad |= add_points(j, "master_recv_s", v, n, offsetof(tb_emu_sweep_point, recv_s));
    bad |= add_points(j, "master_idle_s", v, n, offsetof(tb_emu_sweep_point, idle_s));
    if (isfinite(v->least_s)) {
        bad |= tb__json_int(j, "saturation_P", v->saturation_P);
        bad |= tb__json_int(j, "best_P", v->best_P);
    } else {
        bad |= !cJSON_AddNullToObject(j, "saturation_P");
        bad |= !cJSON_AddNullToObject(j, "best_P");
    }
    bad |= tb__json_num(j, "best_makespan_s", v->least_s);
    return bad;
}

int tb_emu_sweep_result_json(const tb_emu_sweep_result *s, const char *extra, tb_buf *out)
{
    if (!s || !out || (s->nranks && !s->ranks) || (s->nvariants && !s->variant) ||
        (s->nvariants && s->best >= s->nvariants))
        return TB_ERR_INVALID;
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return TB_ERR_NOMEM;
    int bad = tb__json_num(o, "tolerance", s->tolerance);
    bad |= tb__json_int_array(o, "ranks", s->ranks, s->nranks);
    cJSON *variants = cJSON_AddArrayToObject(o, "variants");
    bad |= !variants;
    for (size_t v = 0; v < s->nvariants && !bad; v++)
        bad |= add_variant(variants, &s->variant[v], s->nranks);
    const tb_emu_sweep_variant *best = s->nvariants ? &s->variant[s->best] : NULL;
    if (best && best->masters > 0 && isfinite(best->least_s))
        bad |= tb__json_int(o, "best_masters", best->masters);
    else
        bad |= !cJSON_AddNullToObject(o, "best_masters");
    bad |= tb__json_int(o, "failed_runs", s->failed_runs);
    return tb__json_emit(o, bad, extra, out);
}
