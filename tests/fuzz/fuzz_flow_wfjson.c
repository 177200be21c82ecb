/*
 * fuzz_flow_wfjson.c - tb_flow_parse of WfCommons WfFormat JSON
 * (1.5 and the older inline layout); the checks are in fuzz_flow.h.
 */
#define _GNU_SOURCE /* memfd_create (fuzz_common.h) */
#define FUZZ_FLOW_FORMAT TB_FLOW_FORMAT_WFJSON
#include "fuzz_flow.h"
