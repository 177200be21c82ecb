/*
 * fuzz_flow_dax.c - tb_flow_parse of Pegasus DAX (XML,
 * versions 2 and 3); the checks are in fuzz_flow.h.
 */
#define _GNU_SOURCE /* memfd_create (fuzz_common.h) */
#define FUZZ_FLOW_FORMAT TB_FLOW_FORMAT_DAX
#include "fuzz_flow.h"
