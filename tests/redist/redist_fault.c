/*
 * redist_fault.c - a program that changes a registered array's data pointer
 * in a way the library cannot follow (tests/cli/jacobi.sh).
 *
 *     mpiexec -n N redist_fault foreign|shared|shape
 *
 * foreign: u is pointed at the program's own memory; shared: u and v both
 * hold v's block; shape: u and w (another shape) are exchanged.  Then a halo
 * exchange: the job must stop with one line naming the array.
 */
#include "tenbin/core.h"
#include "tenbin/redist.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    const char *how = argc > 1 ? argv[1] : "foreign";
    tb_redist_opts cfg;
    tb_redist_opts_init(&cfg);
    cfg.units = 12;
    tb_redist *r;
    if (tb_redist_create(&r, MPI_COMM_WORLD, &cfg) != TB_OK)
        MPI_Abort(MPI_COMM_WORLD, 3);
    double *u = NULL, *v = NULL, *w = NULL;
    tb_redist_array_desc d = {"u", 2, {12, 8}, 0, sizeof(double), MPI_DATATYPE_NULL, 1, 1,
                              (void **)&u};
    tb_redist_array_desc dv = d, dw = d;
    dv.name = "v";
    dv.data = (void **)&v;
    dw.name = "w";
    dw.dims[1] = 4;
    dw.data = (void **)&w;
    if (tb_redist_add_array(r, &d, NULL) != TB_OK || tb_redist_add_array(r, &dv, NULL) != TB_OK ||
        tb_redist_add_array(r, &dw, NULL) != TB_OK)
        MPI_Abort(MPI_COMM_WORLD, 3);
    double *mine = calloc(8 * 14, sizeof *mine);
    double *t = u;
    if (strcmp(how, "foreign") == 0)
        u = mine;
    else if (strcmp(how, "shared") == 0)
        u = v;
    else if (strcmp(how, "shape") == 0) {
        u = w;
        w = t;
    }
    tb_redist_halo_exchange(r);
    printf("redist_fault: the halo exchange returned\n");
    tb_redist_destroy(&r);
    free(mine);
    MPI_Finalize();
    return 0;
}
