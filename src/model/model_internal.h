/*
 * model_internal.h - helpers shared inside the platform model (src/model).
 * Not part of the public API; tests may call them.
 */
#ifndef TENBIN_MODEL_INTERNAL_H
#define TENBIN_MODEL_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "core/errbuf.h"
#include "tenbin/model.h"

#define TB__MODEL_MAX_HOSTS (1L << 24)   /* hosts in a platform */
#define TB__MODEL_MAX_CORES (1L << 20)   /* cores of one host */
#define TB__MODEL_MAX_FILE (64 << 20)    /* bytes of a platform file */
#define TB__MODEL_DEFAULT_S 65536.0      /* LogGPS S when not given */
#define TB__MODEL_WHY 256                /* room for the reason in a message */

/* What a host is made from before its speed is drawn. */
typedef struct tb__model_tmpl {
    double speed_lo, speed_hi; /* equal for a fixed speed */
    int cores;
    double load;               /* 1/lambda in seconds; 0: no load process */
    size_t ntrace;             /* speed factors of the base speed over time */
    const double *trace_time;
    const double *trace_factor;
} tb__model_tmpl;

/* Value parsers: on error return TB_ERR_PARSE or TB_ERR_RANGE and write the
 * reason ("negative time, got '-5us'") into why[TB__MODEL_WHY]. */
int tb__model_parse_time(const char *s, double *out, char *why);
int tb__model_parse_speed(const char *s, double *lo, double *hi, char *why);
int tb__model_parse_count(const char *s, long max, long *out, char *why);

void tb__model_net_defaults(tb_loggps *n);
void tb__model_tmpl_defaults(tb__model_tmpl *t);
/* Fill h from t, drawing a speed range from rng. */
int tb__model_fill_host(tb_host *h, const tb__model_tmpl *t, tb_rng *rng, int cluster,
                        const char *name);
/* A platform with nhosts zeroed hosts and nclusters zeroed clusters. */
int tb__model_alloc(tb_platform **out, size_t nhosts, size_t nclusters, uint64_t seed);

/* The platform described by a parsed JSON document (a cJSON *); file names
 * the document in messages. */
int tb__model_from_json(const void *root, const char *file, uint64_t seed, tb_platform **out,
                        char *err, size_t errlen);

/* The shortest mean time between a load process's events: shorter would
 * mean billions of speed changes per simulated second. */
#define TB__MODEL_LOAD_MIN 1e-9

#endif /* TENBIN_MODEL_INTERNAL_H */
