/*
 * fuzz_netgauge.c - tb_loggps_read_netgauge, the table Netgauge's LogGP
 * pattern writes (`netgauge -x loggp -o FILE`).
 */
#define _GNU_SOURCE /* memfd_create (fuzz_common.h) */
#include <math.h>

#include "fuzz_common.h"
#include "tenbin/model.h"

FUZZ_QUIET_INIT

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > FUZZ_MAX)
        return 0;
    const char *path = fuzz_file(data, size);
    tb_loggps n, before;
    memset(&n, 0xA5, sizeof n);
    before = n;
    char err[512] = "";
    int rc = tb_loggps_read_netgauge(path, &n, err, sizeof err);
    fuzz_report(rc, err);
    if (rc == TB_OK) {
        /* what the header promises: finite, non-negative parameters */
        const double v[] = {n.L, n.os, n.or_, n.ob, n.O, n.g, n.G, n.S};
        for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
            if (!isfinite(v[i]) || v[i] < 0)
                abort();
        (void)tb_loggps_send_overhead(&n, 4, 1000);
        (void)tb_loggps_recv_overhead(&n, 4, 1000);
    } else if (err[0] == '\0' || memcmp(&n, &before, sizeof n) != 0) {
        abort(); /* an error says why and leaves *out alone */
    }
    return 0;
}
