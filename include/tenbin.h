/*
 * tenbin.h - umbrella header: adaptive load balancing and scheduling on
 * heterogeneous, shared and wide-area clusters, on MPI.
 *
 * Includes every public module (one header per module under tenbin/) and
 * tenbin/config.h, the compile-time version (TENBIN_VERSION_MAJOR, ...) and
 * the MPI flavour the library was built with; tb_version() (tenbin/core.h)
 * is the version of the library a program runs with.
 */
#ifndef TENBIN_H
#define TENBIN_H

#include "tenbin/config.h"

#include "tenbin/bnb.h"
#include "tenbin/core.h"
#include "tenbin/emu.h"
#include "tenbin/flow.h"
#include "tenbin/model.h"
#include "tenbin/mw.h"
#include "tenbin/redist.h"

#endif /* TENBIN_H */
