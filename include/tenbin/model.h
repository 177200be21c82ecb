/*
 * tenbin/model.h - the platform model: hosts with speeds (constant, a
 * piecewise trace, or S2's load process), grouped into clusters, and the
 * network as LogGPS parameters per cluster plus wide-area links between
 * clusters.  One platform format serves the simulator, the emulator, the
 * workflow scheduler and the balancers' decisions.
 *
 * Two ways to describe a platform:
 *
 *  - a one-line spec, comma-separated key=value (order free, each key once):
 *        hosts=16,speed=1,L=50us,os=10us,or=10us,g=0,G=0,S=65536
 *    keys: hosts (count), cores (per host, default 1), speed (a value, or a
 *    range a-b drawn uniformly per host from the seed), clusters (hosts are
 *    split into this many equal clusters, default 1), L, os, or, o (sets
 *    both os and or), ob (overhead per rank, S3's o'_b), O (overhead per
 *    byte), g, G (time per byte), S (bytes; above it sends synchronise),
 *    wan-L and wan-G (the links between clusters), load (S2's load process:
 *    1/lambda, the mean seconds between dummy-task arrivals, on every host),
 *    netgauge (a file of Netgauge's LogGP output; explicit keys override it).
 *    Times take the units ns, us, ms, s (none: seconds).
 *
 *  - a JSON file (see docs/platform.md for the full format), e.g.
 *        {"clusters": [{"name": "a", "hosts": 16, "speed": "1-5",
 *                       "network": {"L": "50us", "o": "10us", "G": "8ns"}}],
 *         "wan": {"L": "10ms", "G": "80ns"}}
 *
 * Errors name the place: "spec: key 'hosts': expected a positive integer,
 * got 'x'" or "plat.json: clusters[0].network.L: negative time".
 */
#ifndef TENBIN_MODEL_H
#define TENBIN_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "tenbin/core.h"
#include "tenbin/export.h"

#ifdef __cplusplus
extern "C" {
#endif

/* LogGPS parameters of one class of links (seconds, bytes). */
typedef struct tb_loggps {
    double L;   /* latency */
    double os;  /* send overhead (o'_a of S3 for the sender) */
    double or_; /* receive overhead */
    double ob;  /* overhead per rank of the run: o = o_a + ob*P + O*k (S3) */
    double O;   /* overhead per byte */
    double g;   /* gap between consecutive sends of one rank */
    double G;   /* time per byte */
    double S;   /* messages above S bytes synchronise with the receiver */
} tb_loggps;

/* How a host's speed changes over time. */
typedef enum tb_speed_kind {
    TB_SPEED_CONSTANT, /* base speed always */
    TB_SPEED_TRACE,    /* piecewise constant: speed[i] from time[i] on */
    TB_SPEED_LOAD      /* S2: base / (1 + dummies), dummies arrive at rate lambda */
} tb_speed_kind;

typedef struct tb_host {
    char name[32];
    double speed;        /* base relative speed (> 0) */
    int cores;           /* ranks it can run at full speed */
    int cluster;         /* index into the platform's clusters */
    tb_speed_kind kind;
    size_t ntrace;       /* TRACE: points, time ascending, time[0] == 0; the
                            speeds are absolute (base speed x the file's factor) */
    double *trace_time;
    double *trace_speed;
    double lambda;       /* LOAD: arrival rate of dummy tasks (1/s) */
} tb_host;

typedef struct tb_cluster {
    char name[32];
    tb_loggps net;       /* links inside the cluster */
    double uplink_L;     /* added to the wide-area L for a message leaving or entering it */
} tb_cluster;

typedef struct tb_platform {
    size_t nhosts;
    tb_host *hosts;
    size_t nclusters;
    tb_cluster *clusters;
    tb_loggps wan;       /* links between clusters: L and G used; o from the ends */
    uint64_t seed;       /* of the random parts (speed ranges, load processes) */
} tb_platform;

/*
 * Parse a one-line spec.  seed draws speed ranges.  On error returns
 * TB_ERR_PARSE or TB_ERR_RANGE and writes one line into err (if not NULL).
 */
TB_API int tb_platform_parse_spec(const char *spec, uint64_t seed, tb_platform **out, char *err,
                                  size_t errlen);
/* Load a JSON platform file; errors as above, with the file name and the
 * JSON path (or line:column for a syntax error); TB_ERR_IO if the file
 * cannot be read. */
TB_API int tb_platform_load(const char *path, uint64_t seed, tb_platform **out, char *err,
                            size_t errlen);
/* A file if `arg` names one that exists (stat), else a spec; TB_ERR_IO if
 * it is neither (no such file and no '=' in it). */
TB_API int tb_platform_open(const char *arg, uint64_t seed, tb_platform **out, char *err,
                            size_t errlen);
TB_API void tb_platform_destroy(tb_platform **p);
/* Total cores (the most ranks it runs at full speed). */
TB_API size_t tb_platform_cores(const tb_platform *p);
/* Host of rank r when ranks fill the hosts' cores in order; -1 if r does
 * not fit. */
TB_API long tb_platform_host_of(const tb_platform *p, long rank);

/* CPU time the sender (os + ob*P + O*bytes) and the receiver
 * (or + ob*P + O*bytes) spend on a message of `bytes` bytes, with P ranks in
 * the run (S3's o = o_a + o'_b*P + O*k).  The wire time, L + (k-1)G (the
 * WAN's L and G between clusters), is the transport's to add. */
TB_API double tb_loggps_send_overhead(const tb_loggps *n, int P, size_t bytes);
TB_API double tb_loggps_recv_overhead(const tb_loggps *n, int P, size_t bytes);

/*
 * One message under the platform's network model: the arithmetic the
 * simulator (src/sim) and the emulator (libtenbin-emu) share, so that a
 * message pattern costs the same in both.  Ranks are identified by the
 * cluster of their host (tb_platform_host_of, then the host's cluster).
 *
 * A send of k bytes by a rank whose clock is `clock` and whose link is free
 * from `link_free` (-INFINITY before its first message):
 *   start     = max(clock, link_free)
 *   send_end  = start + os + ob*P + O*k             (the sender's clock after it)
 *   arrival   = send_end + L + (k-1)*G              (eager: k <= S)
 *             = send_end + L                        (rendezvous, k > S: the request)
 *   link_free = start + g + (k-1)*G                 (out->link_free, for its next send)
 * with g, os, ob, O, S of the sender's cluster and L, G of the sender's
 * cluster, or of the wide-area link when the clusters differ.  This is
 * LogGP's gap: a sender's consecutive messages, of any size and either
 * protocol, start at least g + (k_prev-1)G apart, k_prev the size of the
 * earlier one (its bytes hold the link that long; Netgauge's PRTT(n,0,s) -
 * PRTT(1,0,s) = (n-1)(g + (s-1)G)).  A message to oneself (self != 0) does
 * not use the link (starts at `clock`, leaves link_free as it was), arrives
 * at send_end and is never a rendezvous.  The callers keep messages between
 * one pair of ranks in order: an arrival before the pair's previous one is
 * raised to it.
 */
typedef struct tb_netmsg {
    double start;     /* when the send starts */
    double send_end;  /* the sender's clock after its overhead */
    double arrival;   /* when the receiver can take it, if its link is free (tb_net_recv) */
    double link_free; /* the earliest start of the sender's next message */
    int rendezvous;   /* above S bytes: the data moves when the receiver takes it */
} tb_netmsg;

TB_API void tb_net_send(const tb_platform *p, int P, int src_cluster, int dst_cluster, int self,
                        size_t bytes, double clock, double link_free, tb_netmsg *out);

/*
 * The receiving side of a rank's link, which carries one message at a time:
 * a message of k bytes needs it for g + (k-1)G (g of the receiver's cluster,
 * G of the link the message came over) and may use it from arrival - g -
 * (k-1)G on (when its first byte could come in, after its gap); it is through
 * once the link has had that much free time since then.  So arrivals at one
 * receiver, from any senders, are at least g + (k-1)G apart, k the later
 * message's size, and several senders into one receiver are bounded by its
 * link.  The link is given to messages in the order the receiver takes them:
 * one taken earlier keeps its time, one taken later fills the free time
 * around it.  Zero-initialise it ({0}); it keeps the last TB_NET_SPANS busy
 * spans (an older one is forgotten, as if the link had been free then).
 */
#define TB_NET_SPANS 16
typedef struct tb_netspan {
    double from, to; /* busy from..to */
} tb_netspan;
typedef struct tb_netlink {
    int n;                          /* spans kept, ascending, disjoint */
    tb_netspan span[TB_NET_SPANS];  /* (the count and the first three share a cache line) */
} tb_netlink;

typedef struct tb_netrecv {
    double in;    /* when the message is through the receiver's link (>= arrival) */
    double taken; /* when the receiver takes it: max(clock, in) */
    double end;   /* the receiver's clock after: taken + tb_net_recv_cost */
} tb_netrecv;

/* Taking a message (its tb_netmsg's arrival and rendezvous) at the receiver's
 * clock `clock`: passes it through `link` (above) and charges the receiver.
 * A rendezvous request passes as a message of one byte; its data, pulled
 * when the receiver takes the request, holds the link from taken + 2L to
 * taken + 2L + (k-1)G.  A message to oneself (self != 0) does not use the
 * link. */
TB_API void tb_net_recv(const tb_platform *p, int P, int src_cluster, int dst_cluster, int self,
                        size_t bytes, int rendezvous, double clock, double arrival,
                        tb_netlink *link, tb_netrecv *out);
/* The most any message of the platform needs the receiving link for: the
 * largest g, plus (k-1)G for the largest eager message (k <= S of its
 * sender's cluster) over the slowest link it may take; INFINITY when that
 * has no bound (S infinite and G > 0). */
TB_API double tb_net_need_max(const tb_platform *p);
/* Forget the link's spans that end before `t`.  Changes nothing that the
 * link will answer if every message later passed through it has arrival -
 * need >= t (need: g + (k-1)G as above, at most tb_net_need_max) and the
 * data of every later rendezvous arrives after t: a receiver that takes its
 * messages in order of arrival, from time A on, may forget before A -
 * tb_net_need_max.  The link then stays a span or two long, in one cache
 * line, instead of TB_NET_SPANS. */
TB_API void tb_net_forget(tb_netlink *link, double t);
/* What taking a message costs the receiver: or + ob*P + O*k of its own
 * cluster and, for a rendezvous, 2L + (k-1)G more (clear to send back, then
 * the data), with the link's L and G. */
TB_API double tb_net_recv_cost(const tb_platform *p, int P, int src_cluster, int dst_cluster,
                               size_t bytes, int rendezvous);
/* Rendezvous: when the sender's data has left if the receiver took the
 * request at time `taken`: taken + L + (k-1)G (the clear to send travels L,
 * the data (k-1)G). */
TB_API double tb_net_rdv_send_end(const tb_platform *p, int src_cluster, int dst_cluster,
                                  size_t bytes, double taken);
/* The least time between a rank's clock when it sends and the message's
 * arrival anywhere else: min over clusters of os + ob*P, plus the least L of
 * any link.  The lookahead of the emulator's synchronisation. */
TB_API double tb_net_lookahead(const tb_platform *p, int P);

/*
 * Read the table Netgauge's LogGP pattern writes (`netgauge -m mpi -x loggp
 * -o FILE`: '#' comments, then per message size the columns size n
 * PRTT(1,0,s) PRTT(n,0,s) PRTT(n,PRTT(1,0,s),s) L o_s o_r g G lsqu(g,G), times
 * in microseconds) and derive L, os, or_, g and G in seconds: os and or_ and
 * g from the smallest size, G as the least-squares slope of the gap between
 * back-to-back messages over the larger half of the sizes, L as half the
 * smallest round trip minus both overheads (docs/platform.md, "Reading
 * Netgauge output").  ob and O are 0, S 65536.  *out is written only on
 * success.  Errors: TB_ERR_IO (cannot read), TB_ERR_PARSE (no data rows, a
 * row that does not parse, one size only), TB_ERR_RANGE (a negative value, a
 * negative fitted G), with one line in err: "FILE:LINE: column 7 (o_s):
 * negative value, got '-1'".
 */
TB_API int tb_loggps_read_netgauge(const char *path, tb_loggps *out, char *err, size_t errlen);

/*
 * LogGPS parameters from measurements (what `tenbin probe` takes on real
 * MPI; docs/platform.md, "Measuring a platform").  Seconds and bytes.
 *
 * Per message size s (ascending, at least two sizes, the first the size
 * the per-message parameters are read at): half a ping-pong round trip, the
 * time inside MPI_Send, inside MPI_Recv of a message that has arrived, and
 * the gap between back-to-back sends, (PRTT(n,0,s) - PRTT(1,0,s)) / (n - 1)
 * as Netgauge measures it; each a median with its standard error.  Per run
 * size P (one or more): the send and receive overheads of the first size
 * with P ranks.  eager: the largest size sent without waiting for the
 * receiver (the rendezvous threshold S), 0 if not measured.
 *
 * The fit (model: a message of k bytes costs the sender os + ob P + O k,
 * travels L + (k-1) G, costs the receiver or + ob P + O k; back-to-back
 * sends are g + (k-1) G apart):
 *   O  = least-squares slope of (os + or)/2 over the eager sizes (>= 0)
 *   ob = least-squares slope of the first size's (os + or)/2 over P (>= 0;
 *        0 with one P)
 *   os, or = the mean over the runs of the overhead less ob P + O s0
 *   G  = least-squares slope of the gap over the larger half of the sizes
 *   g  = gap(s0) - (s0 - 1) G,  L = half_rtt(s0) - os(P0) - or(P0) - (s0 - 1) G
 *        (P0 the run the sizes were measured in), both at least 0
 *   S  = eager (65536 if 0)
 * err holds each parameter's standard error (propagated as if independent).
 */
typedef struct tb_probe_size {
    double bytes;
    double half_rtt, os, or_, gap;             /* medians */
    double e_half_rtt, e_os, e_or, e_gap;      /* their standard errors */
} tb_probe_size;

typedef struct tb_probe_run {
    int P;
    double os, or_, e_os, e_or;
} tb_probe_run;

typedef struct tb_probe_fit {
    tb_loggps net;
    tb_loggps err;
} tb_probe_fit;

/* P0 is the run size the per-size measurements come from.  Errors:
 * TB_ERR_RANGE with one line in err (fewer than two sizes, sizes not
 * ascending, a negative or non-finite value, no run, G < 0). */
TB_API int tb_probe_fit_loggps(const tb_probe_size *sizes, size_t nsizes, int P0,
                               const tb_probe_run *runs, size_t nruns, double eager,
                               tb_probe_fit *out, char *err, size_t errlen);

/*
 * Cursor over a host's speed: piecewise-constant segments in time order,
 * generated lazily and deterministically (the load process from the
 * platform's seed and the host index).
 */
typedef struct tb_speed_cursor {
    const tb_host *host;
    double t0, t1;       /* current segment [t0, t1) */
    double speed;        /* speed on it */
    size_t i;            /* TRACE: index */
    int dummies;         /* LOAD: dummy tasks present */
    double *leave;       /* LOAD: departure times of the dummies */
    int cap;
    double next_arrival;
    tb_rng rng;
    tb_rng rng0;         /* LOAD: initial state, to replay from time 0 */
} tb_speed_cursor;

/* TB_ERR_RANGE if host is not in p, TB_ERR_INVALID if its speed is not
 * usable (speed or lambda <= 0, a trace not starting at 0 or ending at 0). */
TB_API int tb_speed_cursor_init(tb_speed_cursor *c, const tb_platform *p, size_t host);
TB_API void tb_speed_cursor_free(tb_speed_cursor *c);
/* Move to the segment that contains time t >= 0.  Meant for t that never
 * decreases; an earlier t than the current segment replays from time 0 (same
 * segments, just slower). */
TB_API int tb_speed_cursor_seek(tb_speed_cursor *c, double t);
/* Time at which `work` seconds (at speed 1) started at t are finished: the
 * exact sum over the segments.  The cursor is left at t (the segments up to
 * *end are generated on a copy), so start times that never decrease never
 * replay. */
TB_API int tb_speed_finish_time(tb_speed_cursor *c, double t, double work, double *end);

#ifdef __cplusplus
}
#endif
#endif /* TENBIN_MODEL_H */
