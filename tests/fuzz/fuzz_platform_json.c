/*
 * fuzz_platform_json.c - tb_platform_load, JSON platform files
 * (docs/platform.md): clusters, hosts, speed traces, load processes,
 * networks, the WAN.
 *
 * A "netgauge" member names a file relative to the platform file, here
 * /proc/self/fd/: "999" is the harness's own Netgauge table (FUZZ_AUX_PATH);
 * other names without a '/' that do not start with a digit name nothing.
 * Inputs with any other netgauge value (an absolute path, another
 * descriptor) are skipped, so the fuzzer never reads /dev/zero or stdin.
 * So are platforms of more than FUZZ_MAX_HOSTS hosts given as counts: up
 * to 2^24 are allowed, and 16 million hosts take 1.4 GB and seconds to
 * build, which is not a bug.
 */
#define _GNU_SOURCE /* memfd_create (fuzz_common.h) */
#include <cjson/cJSON.h>
#include <ctype.h>
#include <math.h>

#include "fuzz_common.h"
#include "tenbin/model.h"

#define FUZZ_MAX_HOSTS 65536

/* 0 if a "netgauge" member anywhere could name a file outside the
 * harness; adds the "hosts" counts to *hosts. */
static int platform_safe(const cJSON *v, double *hosts)
{
    for (const cJSON *c = v ? v->child : NULL; c != NULL; c = c->next) {
        if (c->string != NULL && strcmp(c->string, "netgauge") == 0 && cJSON_IsString(c)) {
            const char *s = c->valuestring;
            if (strcmp(s, "999") != 0 && (strchr(s, '/') != NULL || isdigit((unsigned char)s[0])))
                return 0;
        }
        if (c->string != NULL && strcmp(c->string, "hosts") == 0 && cJSON_IsNumber(c))
            *hosts += c->valuedouble > 0 ? c->valuedouble : 0;
        if (!platform_safe(c, hosts))
            return 0;
    }
    return 1;
}

FUZZ_NETGAUGE_INIT

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > FUZZ_MAX)
        return 0;
    /* Parsed as tb_platform_load parses it, to check the netgauge names and
     * count the hosts. */
    char *text = fuzz_cstr(data, size);
    cJSON *root = cJSON_ParseWithLengthOpts(text, size + 1, NULL, 1);
    double hosts = 0;
    int safe = platform_safe(root, &hosts) && hosts <= FUZZ_MAX_HOSTS;
    cJSON_Delete(root);
    free(text);
    if (!safe)
        return 0;
    const char *path = fuzz_file(data, size);
    tb_platform *p = NULL;
    char err[512] = "";
    int rc = tb_platform_load(path, 7, &p, err, sizeof err);
    fuzz_report(rc, err);
    if (rc == TB_OK) {
        if (p == NULL || p->nhosts == 0 || p->nclusters == 0)
            abort();
        size_t cores = tb_platform_cores(p);
        long last = tb_platform_host_of(p, (long)cores - 1);
        if (last < 0 || (size_t)last >= p->nhosts)
            abort();
        int c0 = p->hosts[0].cluster, c1 = p->hosts[last].cluster;
        if (c0 < 0 || (size_t)c0 >= p->nclusters || c1 < 0 || (size_t)c1 >= p->nclusters)
            abort();
        tb_netmsg m;
        tb_net_send(p, 4, c0, c1, 0, 100000, 0.0, -INFINITY, &m);
        (void)tb_net_recv_cost(p, 4, c0, c1, 100000, m.rendezvous);
        tb_netlink rx = {0};
        tb_netrecv r;
        tb_net_recv(p, 4, c0, c1, 0, 100000, m.rendezvous, 0.0, m.arrival, &rx, &r);
        if (!(r.in >= m.arrival && r.taken >= r.in && r.end >= r.taken))
            abort();
        (void)tb_net_lookahead(p, 4);
        /* every host's speed model, briefly */
        for (size_t h = 0; h < p->nhosts && h < 4; h++) {
            tb_speed_cursor c;
            double end;
            if (tb_speed_cursor_init(&c, p, h) == TB_OK) {
                (void)tb_speed_finish_time(&c, 0.0, 1e-6, &end);
                tb_speed_cursor_free(&c);
            }
        }
    } else if (p != NULL || err[0] == '\0') {
        abort(); /* an error leaves *out NULL and says why */
    }
    tb_platform_destroy(&p);
    return 0;
}
