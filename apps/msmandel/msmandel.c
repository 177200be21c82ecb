/*
 * msmandel.c - MASE, the master/slave Mandelbrot explorer of Mizutani, Ino and
 * Hagihara (IEICE 2004, section 5), as one plain MPI program: no Tenbin calls,
 * so that `tenbin emu` can run it unmodified.  Three variants:
 *
 *   si     one master (rank 0), slaves 1..P-1.
 *   ml:PM  PM fixed masters (ranks 0..PM-1); master k owns the k-th contiguous
 *          1/PM of the tasks and the slaves s >= PM with (s - PM) % PM == k;
 *          at the end masters 1..PM-1 send their part of the image to rank 0.
 *   dy     masters that split and merge on the slaves' waiting time (5.3).
 *
 * A task is T consecutive pixels in row-major order (T = 1: one point, as in
 * the paper).  Pixel p = j W + i is c = xmin + (xmax-xmin)(i+0.5)/W +
 * i (ymin + (ymax-ymin)(j+0.5)/H); from z = 0 its count is the number of
 * steps z = z^2 + c taken while |z|^2 <= 4, at most max-iter.  The checksum is
 * the sum of count * (p % 1009 + 1), the same for every variant and P.
 *
 * Messages (MPI_COMM_WORLD, the paper's sizes):
 *   TAG_RESULT  slave -> master, 4T+8 bytes: int64 first pixel, T int32
 *               counts.  First pixel -1: a bare request (counts unused).
 *               Every result is also the request for the next task.
 *   TAG_TASK    master -> slave, 8 bytes, one int64 v, the reply to exactly
 *               one TAG_RESULT:  v >= 0  compute the task starting at pixel v;
 *               v == -1  stop (only rank 0 sends it);  v <= -2  your master
 *               is now rank -(v + 2): send it a bare request.
 *   Each slave alternates strictly: one TAG_RESULT to its master, one reply
 *   from that master.  SI and ML use only these two.
 *
 * DY protocol (additionally):
 *   TAG_SPLIT   master M -> slave x, instead of a TAG_TASK reply: int64
 *               {a, b, k, s_1..s_k}: x is now a secondary master of tasks
 *               [a, b) and of slaves s_1..s_k, with parent M.
 *   TAG_MERGE   secondary x -> parent M: int64 {n, r_1..r_n}, the slaves x
 *               redirected to M; followed by
 *   TAG_DATA    x -> M: the counts of every pixel of [a, b) as int32.
 *
 *   Rank 0 starts as the only master, with all tasks and all slaves.  A master
 *   receives (MPI_Probe / MPI_Iprobe on any source) everything that has arrived
 *   into a FIFO, stamping each request with MPI_Wtime when it sees it, and
 *   replies to the oldest; the slave's waiting time is the reply's time minus
 *   the stamp.  Before giving member x a task it SPLITS if the mean wait of its
 *   last 2n replies exceeds --split-wait, where n >= 4 is its number of slaves,
 *   and at least 4n tasks remain: x gets the upper part of the remaining range
 *   (in proportion k : n-1-k, i.e. half when n is odd) and k = (n-1)/2 of the
 *   other slaves, which M marks "moving to x" and tells so (v = -(x+2)) in the
 *   reply to their next message; results of tasks M gave out still come to M.
 *   A master with no tasks left answers each slave with a redirect to its
 *   parent (the root: stop).  It finishes when it has no tasks, no slaves, no
 *   slave still to redirect, no active secondary, and every slave its
 *   secondaries redirected to it has arrived (a redirected slave may arrive
 *   before or after its secondary's TAG_MERGE: a signed count settles both).
 *   A secondary that finishes MERGES: it sends TAG_MERGE and TAG_DATA to its
 *   parent and becomes the parent's slave again (a bare request), which the
 *   parent expects, as MPI keeps the order of one sender's messages.
 *   Deadlock-free: every blocking send goes to a rank that is blocked in, or
 *   about to post, the matching receive (a slave waiting for its reply, a
 *   master's receive loop, which ends only when nothing is owed to it).
 *
 * Rank 0 prints the summary, with --checksum the checksum, and for DY the
 * largest number of simultaneous masters, the splits and the merges.  The
 * masters are counted from each rank's MPI_Wtime intervals measured from a
 * start-up barrier (Open MPI's clocks have per-process origins), so the count
 * is approximate when ranks are time-sliced and leave the barrier apart.
 */
#include <mpi.h>

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { TAG_RESULT = 1, TAG_TASK = 2, TAG_SPLIT = 3, TAG_MERGE = 4, TAG_DATA = 5 };
enum { VAR_SI, VAR_ML, VAR_DY };

#define STOP ((int64_t)-1)
#define REDIRECT(r) (-(int64_t)(r) - 2)
#define MAX_SIDE 65536
#define MAX_PIXELS ((int64_t)1 << 26)
#define MAX_TASK ((int64_t)1 << 24)
#define MAX_ITER 1000000000

typedef struct {
    int variant, masters; /* masters: PM of ml:PM */
    int64_t width, height, task;
    int32_t max_iter;
    double xmin, xmax, ymin, ymax, split_wait;
    int checksum, quiet, help;
} options;

typedef struct {
    options o;
    int rank, size;
    int64_t npix, ntasks;
    int32_t *msg; /* the 4T+8-byte result message */
    int msg_bytes;
    double t0;
    /* DY statistics: splits made, merges received, master intervals. */
    int64_t splits, merges;
    double *epochs; /* start, end pairs */
    int nepochs, cap_epochs;
} ctx;

static void fatal(const ctx *c, const char *what)
{
    fprintf(stderr, "msmandel: rank %d: internal error: %s\n", c->rank, what);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

static void *xcalloc(const ctx *c, size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size);
    if (!p)
        fatal(c, "out of memory");
    return p;
}

/* ---- options ----------------------------------------------------------- */

static int parse_int(const char *s, int64_t lo, int64_t hi, int64_t *out)
{
    if (*s < '0' || *s > '9')
        return -1;
    errno = 0;
    char *end;
    long long v = strtoll(s, &end, 10);
    if (errno || *end || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

static int parse_real(const char *s, double *out)
{
    errno = 0;
    char *end;
    double v = strtod(s, &end);
    if (end == s || *end || errno || !isfinite(v))
        return -1;
    *out = v;
    return 0;
}

static int parse_variant(const char *s, options *o)
{
    int64_t pm;
    if (strcmp(s, "si") == 0) {
        o->variant = VAR_SI;
        o->masters = 1;
    } else if (strcmp(s, "dy") == 0) {
        o->variant = VAR_DY;
        o->masters = 1;
    } else if (strncmp(s, "ml:", 3) == 0 && parse_int(s + 3, 1, 1 << 20, &pm) == 0) {
        o->variant = VAR_ML;
        o->masters = (int)pm;
    } else {
        return -1;
    }
    return 0;
}

/* Fills o; on a bad command line writes one line to err and returns -1. */
static int parse_options(int argc, char **argv, options *o, char *err, size_t errlen)
{
    *o = (options){.variant = VAR_SI, .masters = 1, .width = 256, .height = 256, .task = 64,
                   .max_iter = 1000, .xmin = -2.0, .xmax = 0.5, .ymin = -1.25, .ymax = 1.25,
                   .split_wait = 2e-5};
    for (int a = 1; a < argc; a++) {
        const char *arg = argv[a];
        if (strcmp(arg, "--checksum") == 0) {
            o->checksum = 1;
            continue;
        }
        if (strcmp(arg, "--quiet") == 0 || strcmp(arg, "-q") == 0) {
            o->quiet = 1;
            continue;
        }
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            o->help = 1;
            continue;
        }
        if (strncmp(arg, "--", 2) != 0) {
            snprintf(err, errlen, "msmandel: unexpected argument '%s'", arg);
            return -1;
        }
        static const char *const valued[] = {"--variant", "--width", "--height", "--max-iter",
                                             "--task", "--xmin", "--xmax", "--ymin", "--ymax",
                                             "--split-wait"};
        size_t nv = sizeof valued / sizeof valued[0], k, len = 0;
        const char *val = NULL;
        for (k = 0; k < nv; k++) {
            len = strlen(valued[k]);
            if (strncmp(arg, valued[k], len) == 0 && (arg[len] == '\0' || arg[len] == '='))
                break;
        }
        if (k == nv) {
            snprintf(err, errlen, "msmandel: unknown option '%s'", arg);
            return -1;
        }
        if (arg[len] == '=') {
            val = arg + len + 1;
        } else if (a + 1 < argc) {
            val = argv[++a];
        } else {
            snprintf(err, errlen, "msmandel: option '%s' needs a value", valued[k]);
            return -1;
        }
        const char *name = valued[k];
        int64_t iv = 0;
        int bad = 0;
        const char *want = NULL;
        switch (k) {
        case 0:
            bad = parse_variant(val, o);
            want = "si, ml:PM (PM >= 1) or dy";
            break;
        case 1:
        case 2:
        case 3:
        case 4: {
            static const int64_t hi[] = {MAX_SIDE, MAX_SIDE, MAX_ITER, MAX_TASK};
            bad = parse_int(val, 1, hi[k - 1], &iv);
            want = "a positive integer";
            if (bad && parse_int(val, 1, INT64_MAX, &iv) == 0) {
                snprintf(err, errlen, "msmandel: %s: expected a positive integer of at most %" PRId64
                         ", got '%s'", name, hi[k - 1], val);
                return -1;
            }
            if (k == 1)
                o->width = iv;
            else if (k == 2)
                o->height = iv;
            else if (k == 3)
                o->max_iter = (int32_t)iv;
            else
                o->task = iv;
            break;
        }
        case 5:
        case 6:
        case 7:
        case 8: {
            double *dst[] = {&o->xmin, &o->xmax, &o->ymin, &o->ymax};
            bad = parse_real(val, dst[k - 5]);
            want = "a finite number";
            break;
        }
        default:
            bad = parse_real(val, &o->split_wait) || o->split_wait < 0.0;
            want = "seconds >= 0";
            break;
        }
        if (bad) {
            snprintf(err, errlen, "msmandel: %s: expected %s, got '%s'", name, want, val);
            return -1;
        }
    }
    if (!(o->xmin < o->xmax) || !(o->ymin < o->ymax)) {
        snprintf(err, errlen, "msmandel: the region is empty: need xmin < xmax and ymin < ymax");
        return -1;
    }
    if (o->width * o->height > MAX_PIXELS) {
        snprintf(err, errlen, "msmandel: the image has %" PRId64 " pixels, at most %" PRId64,
                 o->width * o->height, MAX_PIXELS);
        return -1;
    }
    return 0;
}

static void usage(void)
{
    printf("usage: msmandel [--variant si|ml:PM|dy] [--width W] [--height H] [--max-iter N]\n"
           "                [--task T] [--xmin X] [--xmax X] [--ymin Y] [--ymax Y]\n"
           "                [--split-wait SECONDS] [--checksum] [--quiet]\n"
           "Master/slave Mandelbrot (MASE): si one master, ml:PM PM fixed masters,\n"
           "dy masters that split and merge on the slaves' waiting time.\n"
           "  --task T          pixels per task, row-major (default 64)\n"
           "  --split-wait S    dy: split when the mean wait exceeds S seconds (2e-5)\n"
           "  --checksum        print sum of count * (pixel %% 1009 + 1)\n"
           "  --quiet           no summary lines\n");
}

/* ---- the work ---------------------------------------------------------- */

static int32_t mandel_point(const options *o, int64_t p)
{
    int64_t i = p % o->width, j = p / o->width;
    double cr = o->xmin + (o->xmax - o->xmin) * ((double)i + 0.5) / (double)o->width;
    double ci = o->ymin + (o->ymax - o->ymin) * ((double)j + 0.5) / (double)o->height;
    double zr = 0.0, zi = 0.0;
    int32_t n = 0;
    while (n < o->max_iter && zr * zr + zi * zi <= 4.0) {
        double t = zr * zr - zi * zi + cr;
        zi = 2.0 * zr * zi + ci;
        zr = t;
        n++;
    }
    return n;
}

/* Pixels of the tasks [a, b). */
static int64_t task_pixels(const ctx *c, int64_t a, int64_t b)
{
    int64_t hi = b * c->o.task < c->npix ? b * c->o.task : c->npix;
    return hi > a * c->o.task ? hi - a * c->o.task : 0;
}

static int64_t msg_first(const int32_t *m)
{
    int64_t v;
    memcpy(&v, m, sizeof v);
    return v;
}

static void msg_set_first(int32_t *m, int64_t v)
{
    memcpy(m, &v, sizeof v);
}

/* Stores a received result into img, which holds pixels [base, base + n). */
static void store_result(const ctx *c, int32_t *img, int64_t base, int64_t n)
{
    int64_t first = msg_first(c->msg);
    if (first < 0)
        return;
    int64_t len = c->npix - first < c->o.task ? c->npix - first : c->o.task;
    if (first < base || first + len > base + n || first % c->o.task)
        fatal(c, "a result for a task this master does not hold");
    memcpy(img + (first - base), c->msg + 2, (size_t)len * sizeof(int32_t));
}

static void send_int64(int64_t v, int to, int tag)
{
    MPI_Send(&v, 1, MPI_INT64_T, to, tag, MPI_COMM_WORLD);
}

static void send_request(ctx *c, int master)
{
    msg_set_first(c->msg, -1);
    MPI_Send(c->msg, c->msg_bytes, MPI_BYTE, master, TAG_RESULT, MPI_COMM_WORLD);
}

/* ---- SI and ML --------------------------------------------------------- */

/* The paper's master: answer each request with the next task of [a, b), then
 * with stop, until each of the nslaves slaves has been stopped. */
static void si_master(ctx *c, int64_t a, int64_t b, int nslaves, int32_t *img)
{
    int64_t next = a, base = a * c->o.task, n = task_pixels(c, a, b);
    while (nslaves > 0) {
        MPI_Status st;
        MPI_Recv(c->msg, c->msg_bytes, MPI_BYTE, MPI_ANY_SOURCE, TAG_RESULT, MPI_COMM_WORLD, &st);
        store_result(c, img, base, n);
        int64_t v = STOP;
        if (next < b)
            v = next++ * c->o.task;
        else
            nslaves--;
        send_int64(v, st.MPI_SOURCE, TAG_TASK);
    }
}

static void dy_master(ctx *c, int parent, const int64_t *split, int32_t *root_img);

/* A slave: request, then compute what the master answers until stopped. */
static void slave(ctx *c, int master)
{
    int64_t *split = NULL;
    send_request(c, master);
    for (;;) {
        MPI_Status st;
        if (c->o.variant == VAR_DY) {
            MPI_Probe(master, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
            if (st.MPI_TAG == TAG_SPLIT) {
                int n;
                MPI_Get_count(&st, MPI_INT64_T, &n);
                if (n < 3 || n > c->size + 3)
                    fatal(c, "a malformed split message");
                if (!split)
                    split = xcalloc(c, (size_t)c->size + 3, sizeof *split);
                MPI_Recv(split, n, MPI_INT64_T, master, TAG_SPLIT, MPI_COMM_WORLD, &st);
                dy_master(c, master, split, NULL);
                send_request(c, master);
                continue;
            }
            if (st.MPI_TAG != TAG_TASK)
                fatal(c, "a slave got an unexpected message");
        }
        int64_t v;
        MPI_Recv(&v, 1, MPI_INT64_T, master, TAG_TASK, MPI_COMM_WORLD, &st);
        if (v == STOP)
            break;
        if (v < STOP) {
            master = (int)(-(v + 2));
            if (master < 0 || master >= c->size || master == c->rank)
                fatal(c, "a redirect to a bad rank");
            send_request(c, master);
            continue;
        }
        if (v >= c->npix || v % c->o.task)
            fatal(c, "a bad task");
        int64_t len = c->npix - v < c->o.task ? c->npix - v : c->o.task;
        msg_set_first(c->msg, v);
        for (int64_t k = 0; k < len; k++)
            c->msg[2 + k] = mandel_point(&c->o, v + k);
        MPI_Send(c->msg, c->msg_bytes, MPI_BYTE, master, TAG_RESULT, MPI_COMM_WORLD);
    }
    free(split);
}

/* ML (SI is ml:1): master k holds tasks [k N / PM, (k+1) N / PM). */
static void run_ml(ctx *c, int32_t *img)
{
    int pm = c->o.masters;
    if (c->rank >= pm) {
        slave(c, (c->rank - pm) % pm);
        return;
    }
    int k = c->rank, nslaves = 0;
    for (int s = pm; s < c->size; s++)
        nslaves += (s - pm) % pm == k;
    int64_t a = c->ntasks * k / pm, b = c->ntasks * (k + 1) / pm;
    int64_t n = task_pixels(c, a, b);
    int32_t *part = k == 0 ? img : xcalloc(c, (size_t)n, sizeof *part);
    si_master(c, a, b, nslaves, part);
    if (k > 0) {
        MPI_Send(part, (int)n, MPI_INT32_T, 0, TAG_DATA, MPI_COMM_WORLD);
        free(part);
        return;
    }
    for (int m = 1; m < pm; m++) {
        int64_t ma = c->ntasks * m / pm, mb = c->ntasks * (m + 1) / pm;
        MPI_Recv(img + ma * c->o.task, (int)task_pixels(c, ma, mb), MPI_INT32_T, m, TAG_DATA,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
}

/* ---- DY ---------------------------------------------------------------- */

typedef struct {
    int parent;              /* -1: the root */
    int64_t next, end;       /* tasks not yet given out */
    int64_t base, npx;       /* pixels held: [base, base + npx) */
    int32_t *img;
    char *member;            /* [P] slaves owed a reply that stay here */
    int *moving;             /* [P] -1, or the secondary a slave moves to */
    int64_t *child_a, *child_b; /* [P] tasks of an active secondary, -1 */
    int members, moving_n, children;
    int64_t balance;         /* slaves listed by merges minus returned arrivals */
    int *q_rank;             /* FIFO of ranks awaiting a reply, with stamps */
    double *q_stamp;
    int q_head, q_len;
    double *waits;           /* ring of the last 2P waiting times */
    int w_pos, w_n;
    int64_t *returned;       /* [1 + P]: count, then slaves sent to parent */
    int64_t *list;           /* [3 + P] scratch for split and merge lists */
} dy_state;

static void dy_enqueue(const ctx *c, dy_state *s, int r, double stamp)
{
    if (s->q_len >= c->size)
        fatal(c, "the request queue overflowed");
    int at = (s->q_head + s->q_len) % c->size;
    s->q_rank[at] = r;
    s->q_stamp[at] = stamp;
    s->q_len++;
}

/* A child finished: its returned-slave list, its pixels, then itself. */
static void dy_take_merge(ctx *c, dy_state *s, const MPI_Status *probed)
{
    MPI_Status st;
    int x = probed->MPI_SOURCE, n;
    MPI_Get_count(probed, MPI_INT64_T, &n);
    if (x < 0 || x >= c->size || s->child_a[x] < 0 || n < 1 || n > c->size + 1)
        fatal(c, "an unexpected merge");
    MPI_Recv(s->list, n, MPI_INT64_T, x, TAG_MERGE, MPI_COMM_WORLD, &st);
    if (s->list[0] != n - 1)
        fatal(c, "a malformed merge message");
    s->balance += s->list[0];
    int64_t first = s->child_a[x] * c->o.task;
    int64_t np = task_pixels(c, s->child_a[x], s->child_b[x]);
    MPI_Recv(s->img + (first - s->base), (int)np, MPI_INT32_T, x, TAG_DATA, MPI_COMM_WORLD, &st);
    s->child_a[x] = s->child_b[x] = -1;
    s->children--;
    s->member[x] = 1; /* its bare request follows */
    s->members++;
    c->merges++;
}

/* Receives the message st announced. */
static void dy_receive(ctx *c, dy_state *s, const MPI_Status *st, double stamp)
{
    int r = st->MPI_SOURCE;
    if (st->MPI_TAG == TAG_MERGE) {
        dy_take_merge(c, s, st);
        return;
    }
    if (st->MPI_TAG != TAG_RESULT)
        fatal(c, "a master got an unexpected message");
    MPI_Recv(c->msg, c->msg_bytes, MPI_BYTE, r, TAG_RESULT, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    store_result(c, s->img, s->base, s->npx);
    if (s->child_a[r] >= 0)
        fatal(c, "a request from an active secondary master");
    if (!s->member[r] && s->moving[r] < 0) {
        /* A slave a secondary returned to us, maybe ahead of the merge. */
        s->balance--;
        s->member[r] = 1;
        s->members++;
    }
    dy_enqueue(c, s, r, stamp);
}

static int dy_should_split(const ctx *c, const dy_state *s)
{
    int n = s->members, w = 2 * n;
    if (n < 4 || s->end - s->next < 4 * (int64_t)n || s->w_n < w)
        return 0;
    double sum = 0.0;
    int cap = 2 * c->size;
    for (int k = 1; k <= w; k++)
        sum += s->waits[(s->w_pos - k + cap) % cap];
    return sum / w > c->o.split_wait;
}

/* Makes member x the master of the upper part of the remaining tasks and of
 * k = (n-1)/2 of the other slaves (the highest ranks). */
static void dy_split(ctx *c, dy_state *s, int x)
{
    int others = s->members - 1, k = others / 2;
    int64_t rem = s->end - s->next;
    int64_t give = rem * k / others;
    if (give < 1)
        give = 1;
    int64_t mid = s->end - give;
    s->member[x] = 0;
    s->members--;
    s->list[0] = mid;
    s->list[1] = s->end;
    s->list[2] = k;
    int moved = 0;
    for (int r = c->size - 1; r >= 0 && moved < k; r--) {
        if (r == x || !s->member[r])
            continue;
        s->member[r] = 0;
        s->members--;
        s->moving[r] = x;
        s->moving_n++;
        s->list[3 + moved++] = r;
    }
    s->child_a[x] = mid;
    s->child_b[x] = s->end;
    s->children++;
    s->end = mid;
    s->w_n = 0;
    c->splits++;
    MPI_Send(s->list, 3 + k, MPI_INT64_T, x, TAG_SPLIT, MPI_COMM_WORLD);
}

/* Answers the oldest request. */
static void dy_reply(ctx *c, dy_state *s)
{
    int r = s->q_rank[s->q_head];
    double wait = MPI_Wtime() - s->q_stamp[s->q_head];
    s->q_head = (s->q_head + 1) % c->size;
    s->q_len--;
    int cap = 2 * c->size;
    s->waits[s->w_pos] = wait;
    s->w_pos = (s->w_pos + 1) % cap;
    s->w_n++;
    int64_t v;
    if (s->moving[r] >= 0) {
        v = REDIRECT(s->moving[r]);
        s->moving[r] = -1;
        s->moving_n--;
    } else if (!s->member[r]) {
        fatal(c, "a reply owed to no slave");
        return;
    } else if (s->next < s->end) {
        if (dy_should_split(c, s)) {
            dy_split(c, s, r);
            return;
        }
        v = s->next++ * c->o.task;
    } else {
        s->member[r] = 0;
        s->members--;
        if (s->parent < 0) {
            v = STOP;
        } else {
            v = REDIRECT(s->parent);
            if (s->returned[0] >= c->size)
                fatal(c, "too many slaves returned");
            s->returned[1 + s->returned[0]++] = r;
        }
    }
    send_int64(v, r, TAG_TASK);
}

static int dy_done(const dy_state *s)
{
    return s->next >= s->end && s->members == 0 && s->moving_n == 0 && s->children == 0 &&
           s->balance == 0;
}

static void add_epoch(ctx *c, double start, double end)
{
    if (c->nepochs == c->cap_epochs) {
        c->cap_epochs = c->cap_epochs ? 2 * c->cap_epochs : 8;
        c->epochs = realloc(c->epochs, (size_t)c->cap_epochs * 2 * sizeof *c->epochs);
        if (!c->epochs)
            fatal(c, "out of memory");
    }
    c->epochs[2 * c->nepochs] = start;
    c->epochs[2 * c->nepochs + 1] = end;
    c->nepochs++;
}

/* One master epoch: the root's (split NULL, the whole image) or a
 * secondary's (split = {a, b, k, slaves...} from parent). */
static void dy_master(ctx *c, int parent, const int64_t *split, int32_t *root_img)
{
    double start = MPI_Wtime() - c->t0;
    size_t P = (size_t)c->size;
    dy_state s = {.parent = parent};
    s.member = xcalloc(c, P, 1);
    s.moving = xcalloc(c, P, sizeof *s.moving);
    s.child_a = xcalloc(c, P, sizeof *s.child_a);
    s.child_b = xcalloc(c, P, sizeof *s.child_b);
    s.q_rank = xcalloc(c, P, sizeof *s.q_rank);
    s.q_stamp = xcalloc(c, P, sizeof *s.q_stamp);
    s.waits = xcalloc(c, 2 * P, sizeof *s.waits);
    s.returned = xcalloc(c, P + 1, sizeof *s.returned);
    s.list = xcalloc(c, P + 3, sizeof *s.list);
    for (size_t r = 0; r < P; r++) {
        s.moving[r] = -1;
        s.child_a[r] = s.child_b[r] = -1;
    }
    if (split) {
        s.next = split[0];
        s.end = split[1];
        for (int64_t k = 0; k < split[2]; k++) {
            int r = (int)split[3 + k];
            if (r < 0 || r >= c->size || r == c->rank || s.member[r])
                fatal(c, "a bad slave in a split message");
            s.member[r] = 1;
            s.members++;
        }
    } else {
        s.next = 0;
        s.end = c->ntasks;
        for (int r = 1; r < c->size; r++)
            s.member[r] = 1;
        s.members = c->size - 1;
    }
    if (s.next < 0 || s.end > c->ntasks || s.next > s.end)
        fatal(c, "a bad task range");
    s.base = s.next * c->o.task;
    s.npx = task_pixels(c, s.next, s.end);
    s.img = root_img ? root_img : xcalloc(c, (size_t)s.npx, sizeof *s.img);

    while (!dy_done(&s)) {
        MPI_Status st;
        int flag = 1;
        if (s.q_len == 0) {
            MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
            dy_receive(c, &s, &st, MPI_Wtime());
        }
        /* Take in everything that has arrived, so that each request is
         * stamped when it is first seen. */
        while (flag) {
            MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
            if (flag)
                dy_receive(c, &s, &st, MPI_Wtime());
        }
        if (s.q_len > 0)
            dy_reply(c, &s);
    }

    if (parent >= 0) {
        int n = (int)s.returned[0];
        MPI_Send(s.returned, 1 + n, MPI_INT64_T, parent, TAG_MERGE, MPI_COMM_WORLD);
        MPI_Send(s.img, (int)s.npx, MPI_INT32_T, parent, TAG_DATA, MPI_COMM_WORLD);
        free(s.img);
    }
    add_epoch(c, start, MPI_Wtime() - c->t0);
    free(s.member);
    free(s.moving);
    free(s.child_a);
    free(s.child_b);
    free(s.q_rank);
    free(s.q_stamp);
    free(s.waits);
    free(s.returned);
    free(s.list);
}

static int cmp_event(const void *pa, const void *pb)
{
    const double *a = pa, *b = pb;
    if (a[0] != b[0])
        return a[0] < b[0] ? -1 : 1;
    return (a[1] > b[1]) - (a[1] < b[1]); /* ends (-1) before starts (+1) */
}

/* Collective: the most master intervals that overlap, on rank 0. */
static int masters_max(ctx *c)
{
    int n = c->nepochs * 2, *counts = NULL, *displs = NULL, total = 0, best = 0;
    double *all = NULL;
    if (c->rank == 0) {
        counts = xcalloc(c, (size_t)c->size, sizeof *counts);
        displs = xcalloc(c, (size_t)c->size, sizeof *displs);
        for (int r = 0; r < c->size; r++)
            displs[r] = r;
    }
    int one = 1;
    int *ones = c->rank == 0 ? xcalloc(c, (size_t)c->size, sizeof *ones) : NULL;
    for (int r = 0; c->rank == 0 && r < c->size; r++)
        ones[r] = 1;
    MPI_Gatherv(&n, one, MPI_INT, counts, ones, displs, MPI_INT, 0, MPI_COMM_WORLD);
    if (c->rank == 0) {
        for (int r = 0; r < c->size; r++) {
            displs[r] = total;
            total += counts[r];
        }
        all = xcalloc(c, (size_t)total, sizeof *all);
    }
    MPI_Gatherv(c->epochs, n, MPI_DOUBLE, all, counts, displs, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (c->rank == 0) {
        double *ev = xcalloc(c, (size_t)total, 2 * sizeof *ev);
        for (int e = 0; e < total; e++) {
            ev[2 * e] = all[e];
            ev[2 * e + 1] = e % 2 ? -1.0 : 1.0;
        }
        qsort(ev, (size_t)total, 2 * sizeof *ev, cmp_event);
        int cur = 0;
        for (int e = 0; e < total; e++) {
            cur += (int)ev[2 * e + 1];
            best = cur > best ? cur : best;
        }
        free(ev);
    }
    free(all);
    free(counts);
    free(displs);
    free(ones);
    return best;
}

/* ---- main -------------------------------------------------------------- */

static const char *variant_name(const options *o, char *buf, size_t len)
{
    if (o->variant == VAR_ML)
        snprintf(buf, len, "ml:%d", o->masters);
    else
        snprintf(buf, len, "%s", o->variant == VAR_DY ? "dy" : "si");
    return buf;
}

/* Checks the command line against the run; 0, or the exit status. */
static int check_run(ctx *c, int argc, char **argv)
{
    char err[512] = "";
    if (parse_options(argc, argv, &c->o, err, sizeof err) != 0) {
        if (c->rank == 0)
            fprintf(stderr, "%s\n", err);
        return 2;
    }
    if (c->o.help) {
        if (c->rank == 0)
            usage();
        return -1;
    }
    if (c->size < 2) {
        if (c->rank == 0)
            fprintf(stderr, "msmandel: a master needs at least one slave: run on 2 or more ranks\n");
        return 2;
    }
    if (c->o.variant == VAR_ML && (int64_t)c->size < 2 * (int64_t)c->o.masters) {
        if (c->rank == 0)
            fprintf(stderr,
                    "msmandel: --variant ml:%d needs at least %d ranks (each master needs a "
                    "slave), but there are %d\n",
                    c->o.masters, 2 * c->o.masters, c->size);
        return 2;
    }
    return 0;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    ctx c = {0};
    MPI_Comm_rank(MPI_COMM_WORLD, &c.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &c.size);
    int status = check_run(&c, argc, argv);
    if (status != 0) {
        fflush(stdout);
        fflush(stderr);
        MPI_Finalize();
        return status < 0 ? 0 : status;
    }
    c.npix = c.o.width * c.o.height;
    c.ntasks = (c.npix + c.o.task - 1) / c.o.task;
    c.msg_bytes = (int)(4 * c.o.task + 8);
    c.msg = xcalloc(&c, (size_t)c.o.task + 2, sizeof *c.msg);
    int32_t *img = c.rank == 0 ? xcalloc(&c, (size_t)c.npix, sizeof *img) : NULL;

    MPI_Barrier(MPI_COMM_WORLD); /* a common start: DY compares master intervals */
    c.t0 = MPI_Wtime();
    if (c.o.variant == VAR_DY) {
        if (c.rank == 0)
            dy_master(&c, -1, NULL, img);
        else
            slave(&c, 0);
    } else {
        run_ml(&c, img);
    }
    double wall = MPI_Wtime() - c.t0;

    int mmax = 0;
    int64_t stats[2] = {c.splits, c.merges}, total[2] = {0, 0};
    if (c.o.variant == VAR_DY) {
        mmax = masters_max(&c);
        MPI_Reduce(stats, total, 2, MPI_INT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
    }
    if (c.rank == 0) {
        char name[32];
        if (!c.o.quiet) {
            printf("msmandel: variant %s %" PRId64 " x %" PRId64 ", %d ranks, %" PRId64
                   " tasks, wall %.6f s\n",
                   variant_name(&c.o, name, sizeof name), c.o.width, c.o.height, c.size, c.ntasks,
                   wall);
            if (c.o.variant == VAR_DY)
                printf("msmandel: masters max %d, splits %" PRId64 ", merges %" PRId64 "\n", mmax,
                       total[0], total[1]);
        }
        if (c.o.checksum) {
            uint64_t sum = 0;
            for (int64_t p = 0; p < c.npix; p++)
                sum += (uint64_t)img[p] * (uint64_t)(p % 1009 + 1);
            printf("checksum: %" PRIu64 "\n", sum);
        }
        fflush(stdout);
    }
    free(img);
    free(c.msg);
    free(c.epochs);
    MPI_Finalize();
    return 0;
}
