/*
 * fuzz_platform_spec.c - tb_platform_parse_spec, the one-line platform spec
 * ("hosts=16,speed=1-5,L=50us,...").
 *
 * The key netgauge=FILE opens FILE: only the harness's own table
 * (FUZZ_AUX_PATH) is let through, so the fuzzer never reads /dev/zero or
 * waits on a terminal.  Platforms of more than FUZZ_MAX_HOSTS hosts are
 * skipped too: up to 2^24 are allowed, and 16 million hosts take 1.4 GB
 * and seconds to build, which is not a bug.  The items are split as the
 * parser splits them (',' then the first '=', blanks trimmed).
 */
#define _GNU_SOURCE /* memfd_create (fuzz_common.h) */
#include <ctype.h>
#include <math.h>

#include "fuzz_common.h"
#include "tenbin/model.h"

#define FUZZ_MAX_HOSTS 65536

static char *trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    size_t n = strlen(s);
    while (n > 0 && isspace((unsigned char)s[n - 1]))
        s[--n] = '\0';
    return s;
}

/* 0 if some netgauge= item names another file than the harness's table,
 * or hosts= asks for more than FUZZ_MAX_HOSTS. */
static int spec_safe(const char *spec)
{
    char *copy = fuzz_cstr((const uint8_t *)spec, strlen(spec)), *save = copy;
    int ok = 1;
    for (char *item = copy, *comma; ok && item != NULL; item = comma) {
        comma = strchr(item, ',');
        if (comma != NULL)
            *comma++ = '\0';
        char *eq = strchr(item, '=');
        if (eq == NULL)
            continue;
        *eq = '\0';
        const char *key = trim(item), *val = trim(eq + 1);
        if (strcmp(key, "netgauge") == 0)
            ok = strcmp(val, FUZZ_AUX_PATH) == 0;
        else if (strcmp(key, "hosts") == 0)
            ok = strtod(val, NULL) <= FUZZ_MAX_HOSTS;
    }
    free(save);
    return ok;
}

FUZZ_NETGAUGE_INIT

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 4096) /* a spec is one line */
        return 0;
    char *spec = fuzz_cstr(data, size);
    if (!spec_safe(spec)) {
        free(spec);
        return 0;
    }
    tb_platform *p = NULL;
    char err[512];
    int rc = tb_platform_parse_spec(spec, 42, &p, err, sizeof err);
    fuzz_report(rc, err);
    if (rc == TB_OK) {
        if (p == NULL || p->nhosts == 0 || p->nclusters == 0)
            abort();
        size_t cores = tb_platform_cores(p);
        long last = tb_platform_host_of(p, (long)cores - 1);
        if (last < 0 || (size_t)last >= p->nhosts || tb_platform_host_of(p, (long)cores) != -1)
            abort();
        int c0 = p->hosts[0].cluster, c1 = p->hosts[last].cluster;
        tb_netmsg m;
        tb_net_send(p, 4, c0, c1, 0, 1000, 0.0, -INFINITY, &m);
        (void)tb_net_recv_cost(p, 4, c0, c1, 1000, m.rendezvous);
        /* two messages through both links: nothing comes earlier than its model says */
        tb_netlink rx = {0};
        tb_netrecv r;
        tb_net_recv(p, 4, c0, c1, 0, 1000, m.rendezvous, 0.0, m.arrival, &rx, &r);
        if (!(r.in >= m.arrival && r.taken >= r.in && r.end >= r.taken))
            abort();
        tb_netmsg m2;
        tb_net_send(p, 4, c0, c1, 0, 10, m.send_end, m.link_free, &m2);
        if (!(m2.start >= m.link_free && m2.start >= m.send_end))
            abort();
        tb_net_recv(p, 4, c0, c1, 0, 10, m2.rendezvous, r.end, m2.arrival, &rx, &r);
        if (!(r.in >= m2.arrival && r.taken >= r.in && r.end >= r.taken))
            abort();
        (void)tb_net_lookahead(p, 4);
    } else if (p != NULL || err[0] == '\0') {
        abort(); /* an error leaves *out NULL and says why */
    }
    tb_platform_destroy(&p);
    free(spec);
    return 0;
}
