/*
 * fuzz_flow_text.c - tb_flow_parse of the text workflow format
 * (hosts / task / edge lines); the checks are in fuzz_flow.h.
 */
#define _GNU_SOURCE /* memfd_create (fuzz_common.h) */
#define FUZZ_FLOW_FORMAT TB_FLOW_FORMAT_TEXT
#include "fuzz_flow.h"
