/*
 * env_table.h - every TENBIN_* environment variable, declared once.
 *
 * X(NAME, TYPE, DEFAULT, HELP): NAME is the full variable name, TYPE one of
 * BOOL, INT, DOUBLE, STRING (tb_opt_type without the TB_OPT_ prefix), DEFAULT
 * the default as text (NULL: unset) and HELP one line for `tenbin env`.
 * No include guard: this file is meant to be expanded where it is included.
 */
#define TB_ENV_MAP(X)                                                                         \
    X("TENBIN_LOG", STRING, "warn", "log level: error, warn, info, debug, trace or 0-4")      \
    X("TENBIN_TRACE", STRING, NULL, "default for --trace: write a Chrome trace JSON to this file")    \
    X("TENBIN_QUIET", BOOL, "0", "no progress lines (as -q)")                                 \
    X("TENBIN_PROGRESS_INTERVAL", DOUBLE, "1.0", "seconds between progress lines")            \
    X("TENBIN_MW_POLICY", STRING, "dynamic", "default master-worker policy: dynamic, single, multi:K, dynamic:paper, dynamic:wait[:SHARE]")  \
    X("TENBIN_MW_CHUNK", STRING, "auto", "tasks per message, or the rule: auto, gss, tss, fac, wf, awf, af") \
    X("TENBIN_MW_WINDOW", INT, "0",                                                           \
      "dynamic masters: assignments the overload test averages over (0: twice the ranks)")    \
    X("TENBIN_MW_TASK_TIMEOUT", DOUBLE, "0",                                                  \
      "real runs: seconds a task may run before the job ends with a line naming it (0: no limit)") \
    X("TENBIN_MW_FORWARD_BYTES", INT, "65536",                                                \
      "secondary masters forward results to the root in batches of about this many bytes")    \
    X("TENBIN_EMU_LIBRARY", STRING, NULL,                                                     \
      "tenbin emu: path of libtenbin-emu.so (default: beside the tenbin executable)")         \
    X("TENBIN_EMU_SLEEP_MAX", DOUBLE, "200e-6",                                               \
      "tenbin emu: longest sleep (s) of an emulated rank waiting for a real message")          \
    X("TENBIN_EMU_COPY_MIN", INT, "1024",                                                     \
      "tenbin emu: sends the model makes eagerly go from a copy above this many bytes")       \
    X("TENBIN_EMU_SHM", INT, "1",                                                             \
      "tenbin emu: ranks on the coordinator's node talk to it through shared memory (0: TCP)") \
    X("TENBIN_EMU_SPIN", DOUBLE, "50e-6",                                                     \
      "tenbin emu: real seconds the coordinator keeps watching after a frame before it sleeps") \
    X("TENBIN_EMU_AHEAD", INT, "32",                                                          \
      "tenbin emu: most answers in advance for a rank's next MPI_ANY_SOURCE receives (0: none)") \
    X("TENBIN_BMI_BOUND", STRING, "sdp",                                                      \
      "tenbin bnb bmi: sdp (the eigenvalue bounds, then the semidefinite one where they do not prune) or eigen (those alone)") \
    X("TENBIN_BMI_SDP_ITERATIONS", INT, "60",                                                 \
      "tenbin bnb bmi: most iterations of a semidefinite bound's solve (fewer: a weaker, still valid bound)") \
    X("TENBIN_CLOCK", STRING, "auto",                                                         \
      "real runs' per-task clock: auto (the time-stamp counter where the kernel keeps time with it) or monotonic") \
    X("TENBIN_MPI_WAIT", STRING, "auto",                                                      \
      "how a rank waits for messages: spin, yield, sleep, or auto (yield when ranks outnumber cores)")
