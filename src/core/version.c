/*
 * version.c - the version of the library itself (tb_version), read from the
 * configuration it was built with, not from the caller's headers.
 */
#include "tenbin/config.h"
#include "tenbin/core.h"

/* The encoding has 8 bits for each of minor and patch. */
_Static_assert(TENBIN_VERSION_MINOR < 256 && TENBIN_VERSION_PATCH < 256,
               "TB_VERSION_ENCODE cannot hold this version");

unsigned tb_version(void)
{
    return TB_VERSION_ENCODE(TENBIN_VERSION_MAJOR, TENBIN_VERSION_MINOR, TENBIN_VERSION_PATCH);
}

const char *tb_version_string(void)
{
    return TENBIN_VERSION;
}
