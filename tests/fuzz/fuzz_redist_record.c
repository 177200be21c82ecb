/*
 * fuzz_redist_record.c - the balancing record reader of the S4 simulator
 * (src/redist/sim.c, `tenbin himeno --sim --replay FILE`): JSON lines, a
 * header with the run's configuration, then the balancing points and moves
 * of a real run.  The record is replayed through tb_redist_sim_run on a
 * platform of 8 cores for 40 iterations, so a record that parses drives a
 * short simulation.
 *
 * Guard (tests/fuzz/known/README.md): read_record converts the record's
 * numbers to int and uint64_t without checking their range (undefined above
 * 2^31 or 2^64, or below 0), divides by min_units (0: SIGFPE), allocates
 * ranks x 11 doubles per point before it compares the ranks with the
 * platform, and lets an infinite unit_bytes reach a (size_t) cast.  While
 * guards are on, only records whose numbers are in range (and at most 64
 * ranks) are replayed.
 */
#define _GNU_SOURCE /* memfd_create (fuzz_common.h) */
#include <cjson/cJSON.h>

#include "fuzz_common.h"
#include "tenbin/model.h"
#include "tenbin/redist.h"

static tb_platform *fuzz_plat;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fuzz_quiet();
    char err[256];
    if (tb_platform_parse_spec("hosts=4,cores=2,speed=1-2,L=20us,G=1e-9", 3, &fuzz_plat, err,
                               sizeof err) != TB_OK)
        abort();
    return 0;
}

/* Member key of o, if a number, lies in [lo, hi]; so do the elements of
 * the arrays counts and next, and the cost's count. */
static int in_range(const cJSON *o, const char *key, double lo, double hi)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return !cJSON_IsNumber(v) || (v->valuedouble >= lo && v->valuedouble <= hi);
}

static int line_safe(const cJSON *o)
{
    static const char *const arrays[] = {"counts", "next"};
    for (int a = 0; a < 2; a++) {
        const cJSON *x, *arr = cJSON_GetObjectItemCaseSensitive(o, arrays[a]);
        if (!cJSON_IsArray(arr))
            continue;
        cJSON_ArrayForEach(x, arr)
            if (cJSON_IsNumber(x) && !(x->valuedouble <= 1e18))
                return 0;
    }
    const cJSON *c2 = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(o, "cost"), 2);
    if (cJSON_IsNumber(c2) && !(c2->valuedouble >= 0 && c2->valuedouble <= 1e18))
        return 0;
    return in_range(o, "ranks", -64, 64) && in_range(o, "units", -1e18, 1e18) &&
           in_range(o, "interval", -1e18, 1e18) && in_range(o, "guards", 0, 1e9) &&
           in_range(o, "min_units", 1, 1e18) && in_range(o, "point", 0, 1e18) &&
           in_range(o, "total", 0, 1e18) && in_range(o, "move", -1e9, 1e9) &&
           in_range(o, "unit_bytes", -1e300, 1e15);
}

/* Each line parsed as read_record parses it (cJSON_Parse of the line). */
static int record_safe(const uint8_t *data, size_t size)
{
    int safe = 1;
    for (size_t pos = 0; safe && pos < size;) {
        const uint8_t *nl = memchr(data + pos, '\n', size - pos);
        size_t len = nl ? (size_t)(nl - (data + pos)) + 1 : size - pos;
        char *line = fuzz_cstr(data + pos, len);
        cJSON *o = cJSON_Parse(line);
        safe = o == NULL || line_safe(o);
        cJSON_Delete(o);
        free(line);
        pos += len;
    }
    return safe;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > FUZZ_MAX || (fuzz_guards() && !record_safe(data, size)))
        return 0;
    tb_redist_sim_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.platform = fuzz_plat;
    cfg.iters = 40;
    cfg.unit_work = 1e-4;
    cfg.halo_bytes = 1000;
    cfg.replay = fuzz_file(data, size);
    tb_redist_sim_result res;
    char err[512] = "";
    int rc = tb_redist_sim_run(&cfg, &res, err, sizeof err);
    fuzz_report(rc, err);
    if (rc == TB_OK) {
        if (res.ranks < 1 || res.ranks > 8 || res.replay_agree > res.replay_points)
            abort();
    } else if (err[0] == '\0') {
        abort(); /* an error says why */
    }
    tb_redist_sim_result_free(&res);
    return 0;
}
