/*
 * tenbin/emu.h - predict how an unmodified MPI program runs on a modelled
 * platform (S3, "M/S Emulator"; docs/emulator.md).
 *
 * tb_emu_run launches the program under the MPI Tenbin was built with, with
 * P ranks and libtenbin-emu.so preloaded (LD_PRELOAD).  The library keeps a
 * virtual clock per rank: compute between MPI calls is the thread's CPU time
 * divided by the host's speed at that virtual time, and messages cost what
 * the platform's LogGPS model says (the simulator's arithmetic,
 * tb_net_send).  Real MPI still carries every byte.  This process is the
 * coordinator: it decides, in virtual time, which message an
 * MPI_ANY_SOURCE receive, a probe or a wait-any sees, with conservative
 * synchronisation, so that the first message in virtual time wins even when
 * it really arrives last.
 *
 * Not thread-safe: one run at a time per process (it waits for its child).
 */
#ifndef TENBIN_EMU_H
#define TENBIN_EMU_H

#include <stddef.h>
#include <stdint.h>

#include "tenbin/core.h"
#include "tenbin/export.h"

#ifdef __cplusplus
extern "C" {
#endif

/* tb_emu_opts_init sets size and the defaults. */
typedef struct tb_emu_opts {
    size_t size;            /* sizeof(tb_emu_opts), set by tb_emu_opts_init */
    const char *platform;   /* spec or file (tb_platform_open); required */
    uint64_t seed;          /* of the platform's random parts */
    int ranks;              /* P >= 1; must fit the platform's cores */
    const char *library;    /* path of libtenbin-emu.so; required */
    const char *mpiexec;    /* launcher; NULL: the one Tenbin was built with */
    int openmpi;            /* the launcher is Open MPI's (-x to pass the
                               environment), else MPICH's (-genv); default: that of
                               the MPI Tenbin was built with */
    int trace;              /* collect each rank's events (tb_emu_result.trace) */
    double timeout;         /* seconds of real time before the run is stopped
                               as hung; <= 0: none */
    const char *listen;     /* address of this machine the coordinator listens
                               on, which every rank's node must reach (name or
                               IPv4/IPv6 literal); NULL: 127.0.0.1, one node */
} tb_emu_opts;

TB_API void tb_emu_opts_init(tb_emu_opts *o);

typedef struct tb_emu_rank {
    int rank;
    int host;               /* index in the platform */
    char host_name[32];
    double end_s;           /* its clock at MPI_Finalize */
    double compute_s;       /* CPU time between MPI calls, scaled by speed */
    double send_s;          /* send overheads, gaps, waiting for a receiver */
    double recv_s;          /* receive overheads and failed probes */
    double idle_s;          /* waiting for messages, and for the run's end */
    uint64_t messages_sent, bytes_sent, messages_received;
} tb_emu_rank;

typedef struct tb_emu_result {
    int ranks;
    double makespan_s;      /* latest MPI_Finalize, virtual time from MPI_Init */
    double wall_s;          /* real seconds the emulation took */
    uint64_t decisions;     /* questions the coordinator answered */
    tb_emu_rank *rank;      /* [ranks] */
    tb_buf *trace;          /* [ranks] serialized events (tb_trace_write_pieces) */
    uint64_t unchecked;     /* wildcard decisions made while the candidate's
                               sender was held in a real send, so that a message
                               it would relay through a third rank could not be
                               ruled out (docs/emulator.md); 0: every decision
                               is exact */
    double startup_s;       /* real seconds from the launch until every rank
                               was out of MPI_Init (the launcher's start-up) */
    double run_s;           /* real seconds from then until the last rank
                               entered MPI_Finalize: the emulation proper */
    uint64_t answered_ahead; /* wildcard receives answered in advance, with an
                                earlier decision (no question of their own) */
    uint64_t unchecked_rendezvous; /* of unchecked, those made only without ranks
                                      held in a rendezvous send of the model to
                                      the deciding rank: they cannot act before it
                                      takes their message, in the model too, so
                                      these are exact unless it had posted that
                                      receive ahead (MPI_Irecv; docs/emulator.md) */
} tb_emu_result;

/*
 * Run argv[0] with argv as its arguments (argv NULL-terminated), emulated.
 * The program's stdout and stderr pass through.  On success *out holds the
 * result (free with tb_emu_result_free).  On failure nothing is returned and
 * err holds one line: the platform does not parse or P does not fit
 * (TB_ERR_PARSE, TB_ERR_RANGE, TB_ERR_SIZE), the program could not be started
 * or ended badly (crash, MPI_Abort, non-zero exit, an MPI call that is not
 * emulated, a rank that never called MPI_Init or MPI_Finalize: TB_ERR_IO or
 * TB_ERR_STATE), the timeout passed (TB_ERR_TIMEOUT).  Every process of the
 * run is gone when it returns.
 */
TB_API int tb_emu_run(const tb_emu_opts *o, char *const argv[], tb_emu_result **out, char *err,
                      size_t errlen);
TB_API void tb_emu_result_free(tb_emu_result **r);

/*
 * Append the result to out as one JSON object on one line (no newline):
 * predicted_makespan_s, wall_s, startup_wall_s, run_wall_s, decisions,
 * answered_ahead, unchecked_decisions, unchecked_rendezvous, ranks
 * ([{rank, host, compute_s, send_s, recv_s, idle_s, end_s, messages_sent,
 * bytes_sent, messages_received}]).  extra: NULL, or the text of a JSON
 * object whose members come first (the caller's platform, options).  NaN
 * and infinities are null.  As tb_mw_summary_json (tenbin/mw.h):
 * TB_ERR_PARSE, TB_ERR_INVALID (extra repeats a key), TB_ERR_NOMEM.
 */
TB_API int tb_emu_result_json(const tb_emu_result *r, const char *extra, tb_buf *out);

/*
 * A sweep (`tenbin emu sweep`): one program emulated at every rank count P
 * of ranks[], once per variant (a master count M, or the program as given).
 * The caller runs the points (tb_emu_run) and fills them in; the arrays
 * are the caller's.
 */
typedef struct tb_emu_sweep_point {
    int ok;                 /* predicted; 0: the run failed (the rest unset) */
    double makespan_s;      /* the run's predicted makespan */
    double compute_s, send_s, recv_s, idle_s; /* the master rank's (tb_emu_rank) */
} tb_emu_sweep_point;

typedef struct tb_emu_sweep_variant {
    long masters;           /* M; 0: the program as given (no master count) */
    tb_emu_sweep_point *point; /* [nranks], in the order of ranks */
    /* set by tb_emu_sweep_saturation: */
    double least_s;         /* the least makespan predicted; INFINITY: none */
    long best_P;            /* the P of least_s (the smallest on a tie); 0: none */
    long saturation_P;      /* the smallest P within tolerance of least_s; 0: none */
} tb_emu_sweep_variant;

typedef struct tb_emu_sweep_result {
    double tolerance;       /* saturation: within this fraction of least_s */
    const long *ranks;      /* [nranks] the rank counts P, ascending */
    size_t nranks;
    tb_emu_sweep_variant *variant; /* [nvariants] */
    size_t nvariants;
    int failed_runs;        /* runs that failed, or could not be started */
    size_t best;            /* set by tb_emu_sweep_saturation: the variant of
                               the least makespan (the first on a tie) */
} tb_emu_sweep_result;

/*
 * Each variant's least makespan, its P, and its saturation point: the
 * smallest P whose makespan is within tolerance of the least (adding ranks
 * beyond it gains at most that much); then the best variant.
 */
TB_API void tb_emu_sweep_saturation(tb_emu_sweep_result *s);

/*
 * Append the sweep (after tb_emu_sweep_saturation) to out as one JSON
 * object on one line (no newline): tolerance, ranks, variants ([{masters
 * (null when 0), makespan_s, master_compute_s, master_send_s, master_recv_s,
 * master_idle_s (arrays by P, null where the run failed), saturation_P,
 * best_P, best_makespan_s (null when no run of it was predicted)}]),
 * best_masters (null without master counts or predictions), failed_runs.
 * extra, NaN and errors as tb_emu_result_json.
 */
TB_API int tb_emu_sweep_result_json(const tb_emu_sweep_result *s, const char *extra,
                                    tb_buf *out);

#ifdef __cplusplus
}
#endif
#endif /* TENBIN_EMU_H */
