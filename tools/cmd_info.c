/*
 * cmd_info.c - `tenbin info [--env]`: what this build is and how it is
 * configured.
 */
#include "tenbin/core.h"

#include <getopt.h>
#include <string.h>

#include "cli.h"
#include "tenbin/config.h"

static void info_usage(FILE *out)
{
    fprintf(out, "usage: tenbin info [--env]\n\n"
                 "  --env       list every TENBIN_* environment variable with its type,\n"
                 "              default, current value and meaning\n"
                 "  -h, --help  this text\n");
}

int tb_cmd_info(int argc, char **argv)
{
    static const struct option opts[] = {
        {"env", no_argument, NULL, 'e'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int env = 0, c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        switch (c) {
        case 'e':
            env = 1;
            break;
        case 'h':
            info_usage(stdout);
            return TB_EXIT_OK;
        default:
            tb_cli_error("info", "unknown option '%s' (tenbin info --help)", argv[optind - 1]);
            return TB_EXIT_USAGE;
        }
    }
    if (optind < argc) {
        tb_cli_error("info", "unexpected argument '%s'", argv[optind]);
        return TB_EXIT_USAGE;
    }
    if (env) {
        tb_env_print(stdout);
        return TB_EXIT_OK;
    }
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(lib, &len);
    char *nl = strchr(lib, '\n');
    if (nl)
        *nl = '\0';
    int major = 0, minor = 0;
    MPI_Get_version(&major, &minor);
    printf("tenbin %s\n", TENBIN_VERSION);
    /* The shared library found at run time may be another build. */
    printf("library       %s (the libtenbin loaded)\n", tb_version_string());
    printf("mpi flavour   %s (built with)\n", TENBIN_MPI_FLAVOUR);
    printf("mpi library   %s\n", lib);
    printf("mpi standard  %d.%d\n", major, minor);
    printf("environment   %zu TENBIN_* variables (tenbin info --env)\n", tb_env_count());
    return TB_EXIT_OK;
}
