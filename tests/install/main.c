/*
 * Consumer of an installed tenbin: only the umbrella header, and functions of
 * several modules (core, flow) from the shared library.
 */
#include <stdio.h>

#include <tenbin.h>

int main(void)
{
    const char *msg = tb_strerror(TB_ERR_NOMEM);
    if (msg == NULL || msg[0] == '\0') {
        fprintf(stderr, "consumer: tb_strerror returned nothing\n");
        return 1;
    }
    /* The library found at run time is the one the headers describe. */
    unsigned compiled =
        TB_VERSION_ENCODE(TENBIN_VERSION_MAJOR, TENBIN_VERSION_MINOR, TENBIN_VERSION_PATCH);
    if (tb_version() != compiled) {
        fprintf(stderr, "consumer: tb_version() is %s (0x%x), the headers %s (0x%x)\n",
                tb_version_string(), tb_version(), TENBIN_VERSION, compiled);
        return 1;
    }
    /* A two-task workflow through <tenbin.h> alone (tenbin/flow.h). */
    tb_flow *f = NULL;
    size_t a = 0, b = 0;
    if (tb_flow_create(&f, 0) != TB_OK || tb_flow_add_task(f, "a", 1.0, &a) != TB_OK ||
        tb_flow_add_task(f, "b", 2.0, &b) != TB_OK || tb_flow_add_edge(f, a, b, 8.0) != TB_OK ||
        tb_flow_finalize(f) != TB_OK) {
        fprintf(stderr, "consumer: building a workflow failed: %s\n", f ? tb_flow_error(f) : "");
        tb_flow_destroy(&f);
        return 1;
    }
    size_t ntasks = tb_flow_ntasks(f), nedges = tb_flow_nedges(f);
    tb_flow_destroy(&f);
    if (ntasks != 2 || nedges != 1) {
        fprintf(stderr, "consumer: workflow has %zu tasks, %zu edges (expected 2, 1)\n", ntasks,
                nedges);
        return 1;
    }
    printf("tenbin %s (library %s, %s): TB_ERR_NOMEM -> %s; flow: %zu tasks, %zu edge\n",
           TENBIN_VERSION, tb_version_string(), TENBIN_MPI_FLAVOUR, msg, ntasks, nedges);
    return 0;
}
