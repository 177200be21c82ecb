/*
 * tenbin.h - umbrella header: adaptive load balancing and scheduling on
 * heterogeneous, shared and wide-area clusters, on MPI.
 */
#ifndef TENBIN_H
#define TENBIN_H

#include "tenbin/bnb.h"
#include "tenbin/core.h"
#include "tenbin/emu.h"
#include "tenbin/mw.h"
#include "tenbin/redist.h"

#endif /* TENBIN_H */
