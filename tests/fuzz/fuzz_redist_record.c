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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > FUZZ_MAX)
        return 0;
    tb_redist_sim_opts cfg;
    tb_redist_sim_opts_init(&cfg);
    cfg.platform = fuzz_plat;
    cfg.iters = 40;
    cfg.unit_work = 1e-4;
    cfg.halo_bytes = 1000;
    cfg.replay = fuzz_file(data, size);
    tb_redist_sim_result *res = NULL;
    char err[512] = "";
    int rc = tb_redist_sim_run(&cfg, &res, err, sizeof err);
    fuzz_report(rc, err);
    if (rc == TB_OK) {
        if (res->ranks < 1 || res->ranks > 8 || res->replay_agree > res->replay_points)
            abort();
    } else if (err[0] == '\0') {
        abort(); /* an error says why */
    }
    tb_redist_sim_result_free(&res);
    return 0;
}
