/*
 * web.c - the live web view (web.h) on libmicrohttpd: a thread per
 * connection (an event stream waits on the run's next state), at most
 * WEB_CONNECTIONS at once, a timeout for idle ones, nothing served but the
 * routes below.
 *
 *   GET  /              the page (tools/web/index.html, embedded at build time)
 *   GET  /api/state     the latest state, one JSON object
 *   GET  /api/history   every history point so far, a JSON array
 *   GET  /api/problem   what does not change (the problem, its file, e.g. a TSP's
 *                       coordinates), one JSON object
 *   GET  /api/events    Server-Sent Events: the state at each change, at most
 *                       1 s apart; the stream ends after the last state
 *   POST /api/stop      Authorization: Bearer TOKEN (401 without, 403 wrong):
 *                       ask the run to stop
 * Anything else: 404; a known route with another method: 405 with Allow.
 * Request bodies are not read (none is needed): a request with one over
 * WEB_BODY_MAX bytes gets 413.
 */
#define _GNU_SOURCE
#include "web.h"

#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>

#include "tenbin/core.h"

enum { WEB_CONNECTIONS = 32, WEB_TIMEOUT_S = 60, WEB_BODY_MAX = 1 << 16 };

extern const unsigned char tb_web_page[];
extern const size_t tb_web_page_len;

struct tb_web {
    struct MHD_Daemon *d;
    char host[64];
    int port;
    char token[33];
    pthread_mutex_t mu;
    pthread_cond_t cv;
    tb_buf state;   /* the latest state */
    tb_buf history; /* "p1,p2,..." (no brackets) */
    tb_buf problem; /* GET /api/problem */
    uint64_t version;
    int running, closing, stop_asked;
    int streams; /* event streams open */
    tb_web_start_fn start; /* serve mode, or NULL */
    tb_web_quit_fn quit;
    void *serve_arg;
    size_t max_upload;
};

/* A POST /api/start being received. */
typedef struct web_upload {
    tb_buf body;
    int too_big;
} web_upload;

/* One event stream's place. */
typedef struct stream {
    tb_web *w;
    uint64_t sent; /* version of the last state sent */
    tb_buf pend;   /* bytes of the current event not sent yet */
    size_t off;
    int last; /* the run's last state is in pend: end after it */
} stream;

static enum MHD_Result reply(struct MHD_Connection *c, unsigned code, const char *type,
                             const void *data, size_t len, const char *allow)
{
    struct MHD_Response *r =
        MHD_create_response_from_buffer(len, (void *)data, MHD_RESPMEM_MUST_COPY);
    if (!r)
        return MHD_NO;
    MHD_add_response_header(r, "Content-Type", type);
    MHD_add_response_header(r, "Cache-Control", "no-store");
    MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
    if (allow)
        MHD_add_response_header(r, "Allow", allow);
    enum MHD_Result rc = MHD_queue_response(c, code, r);
    MHD_destroy_response(r);
    return rc;
}

static enum MHD_Result reply_json(struct MHD_Connection *c, unsigned code, const char *json)
{
    return reply(c, code, "application/json", json, strlen(json), NULL);
}

/* The next bytes of an event stream: blocks until a new state, or 1 s. */
static ssize_t stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    (void)pos;
    stream *s = cls;
    tb_web *w = s->w;
    if (s->off == s->pend.len) {
        if (s->last)
            return MHD_CONTENT_READER_END_OF_STREAM;
        pthread_mutex_lock(&w->mu);
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += 1;
        while (!w->closing && w->version == s->sent &&
               pthread_cond_timedwait(&w->cv, &w->mu, &until) == 0)
            ;
        if (w->closing && w->version == s->sent) {
            pthread_mutex_unlock(&w->mu);
            return MHD_CONTENT_READER_END_OF_STREAM;
        }
        tb_buf_clear(&s->pend);
        s->off = 0;
        int rc = tb_buf_printf(&s->pend, "data: %.*s\n\n", (int)w->state.len,
                               w->state.len ? (const char *)w->state.data : "{}");
        s->sent = w->version;
        s->last = !w->running && w->version > 0;
        pthread_mutex_unlock(&w->mu);
        if (rc != TB_OK)
            return MHD_CONTENT_READER_END_WITH_ERROR;
    }
    size_t n = s->pend.len - s->off;
    if (n > max)
        n = max;
    memcpy(buf, (const char *)s->pend.data + s->off, n);
    s->off += n;
    return (ssize_t)n;
}

static void stream_free(void *cls)
{
    stream *s = cls;
    pthread_mutex_lock(&s->w->mu);
    s->w->streams--;
    pthread_cond_broadcast(&s->w->cv);
    pthread_mutex_unlock(&s->w->mu);
    tb_buf_free(&s->pend);
    free(s);
}

static enum MHD_Result events(tb_web *w, struct MHD_Connection *c)
{
    stream *s = calloc(1, sizeof *s);
    if (!s)
        return MHD_NO;
    s->w = w;
    struct MHD_Response *r =
        MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 4096, stream_read, s, stream_free);
    if (!r) {
        free(s);
        return MHD_NO;
    }
    pthread_mutex_lock(&w->mu);
    w->streams++;
    pthread_mutex_unlock(&w->mu);
    MHD_add_response_header(r, "Content-Type", "text/event-stream");
    MHD_add_response_header(r, "Cache-Control", "no-store");
    enum MHD_Result rc = MHD_queue_response(c, MHD_HTTP_OK, r);
    MHD_destroy_response(r);
    return rc;
}

/* Constant-time comparison of the token. */
static int token_ok(const tb_web *w, const char *auth)
{
    static const char pre[] = "Bearer ";
    if (!auth || strncmp(auth, pre, sizeof pre - 1) != 0)
        return 0;
    const char *t = auth + sizeof pre - 1;
    if (strlen(t) != 32)
        return 0;
    unsigned char d = 0;
    for (int i = 0; i < 32; i++)
        d |= (unsigned char)(t[i] ^ w->token[i]);
    return d == 0;
}

/* The state of a POST /api/quit whose reply is on its way: the quit waits
 * for the reply to be sent (or the connection to fail), or the server could
 * be stopped before the client hears it. */
static char quit_after_reply;

/* A request is over: free what a POST /api/start gathered, or quit. */
static void completed(void *cls, struct MHD_Connection *c, void **con_cls,
                      enum MHD_RequestTerminationCode toe)
{
    (void)c;
    (void)toe;
    if (*con_cls == &quit_after_reply) {
        tb_web *w = cls;
        w->quit(w->serve_arg);
    } else if (*con_cls && *con_cls != cls) {
        web_upload *up = *con_cls;
        tb_buf_free(&up->body);
        free(up);
    }
    *con_cls = NULL;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url,
                              const char *method, const char *version, const char *upload,
                              size_t *upload_size, void **con_cls)
{
    (void)version;
    (void)upload;
    tb_web *w = cls;
    if (*con_cls == &quit_after_reply) { /* a body sent with the quit: ignored */
        *upload_size = 0;
        return MHD_YES;
    }
    if (*con_cls != NULL && *con_cls != (void *)w) { /* the body of a POST /api/start */
        web_upload *up = *con_cls;
        if (*upload_size > 0) {
            if (up->body.len + *upload_size > w->max_upload)
                up->too_big = 1;
            else if (tb_buf_append(&up->body, upload, *upload_size) != TB_OK)
                up->too_big = 1;
            *upload_size = 0;
            return MHD_YES;
        }
        if (up->too_big)
            return reply_json(c, 413, "{\"error\": \"the upload is too large\"}");
        char msg[1024] = "";
        const char *q[4] = {"problem", "gap", "groups", "name"};
        const char *v[4];
        for (int i = 0; i < 4; i++)
            v[i] = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, q[i]);
        int code = w->start(w->serve_arg, v[0], v[1], v[2], v[3], up->body.data, up->body.len,
                            msg, sizeof msg);
        if (code == 202) {
            /* The run counts from now: a stop that comes before it has begun
             * must still stop it (it was cleared when the run began, and lost). */
            pthread_mutex_lock(&w->mu);
            w->stop_asked = 0;
            w->running = 1;
            pthread_mutex_unlock(&w->mu);
        }
        tb_buf j = TB_BUF_INIT;
        int rc = code == 202 ? tb_buf_printf(&j, "{\"started\": true}")
                             : tb_buf_printf(&j, "{\"error\": ");
        if (code != 202 && rc == TB_OK) {
            rc = tb_buf_json_string(&j, msg);
            if (rc == TB_OK)
                rc = tb_buf_printf(&j, "}");
        }
        enum MHD_Result r =
            rc == TB_OK ? reply(c, (unsigned)code, "application/json", j.data, j.len, NULL) : MHD_NO;
        tb_buf_free(&j);
        return r;
    }
    if (*con_cls == NULL) { /* headers only, so far: answer now, read no body */
        *con_cls = w;
        const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Length");
        if (cl && strtoull(cl, NULL, 10) > WEB_BODY_MAX && strcmp(url, "/api/start") != 0)
            return reply_json(c, 413, "{\"error\": \"request body too large\"}");
        int get = strcmp(method, "GET") == 0, head = strcmp(method, "HEAD") == 0;
        int post = strcmp(method, "POST") == 0;
        if (strcmp(url, "/") == 0 || strcmp(url, "/index.html") == 0) {
            if (!get && !head)
                return reply(c, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain", "", 0, "GET, HEAD");
            return reply(c, MHD_HTTP_OK, "text/html; charset=utf-8", tb_web_page, tb_web_page_len,
                         NULL);
        }
        if (strcmp(url, "/api/state") == 0 || strcmp(url, "/api/history") == 0 ||
            strcmp(url, "/api/problem") == 0) {
            if (!get && !head)
                return reply(c, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain", "", 0, "GET, HEAD");
            tb_buf b = TB_BUF_INIT;
            pthread_mutex_lock(&w->mu);
            int rc;
            if (url[5] == 's')
                rc = w->state.len ? tb_buf_append(&b, w->state.data, w->state.len)
                                  : tb_buf_printf(&b, "{\"running\": true}");
            else if (url[5] == 'p')
                rc = w->problem.len ? tb_buf_append(&b, w->problem.data, w->problem.len)
                                    : tb_buf_printf(&b, "{}");
            else
                rc = tb_buf_printf(&b, "[%.*s]", (int)w->history.len,
                                   w->history.len ? (const char *)w->history.data : "");
            pthread_mutex_unlock(&w->mu);
            enum MHD_Result r = rc == TB_OK
                                    ? reply(c, MHD_HTTP_OK, "application/json", b.data, b.len, NULL)
                                    : MHD_NO;
            tb_buf_free(&b);
            return r;
        }
        if (strcmp(url, "/api/events") == 0) {
            if (!get)
                return reply(c, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain", "", 0, "GET");
            return events(w, c);
        }
        if (strcmp(url, "/api/stop") == 0) {
            if (!post)
                return reply(c, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain", "", 0, "POST");
            const char *auth = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
            if (!auth)
                return reply_json(c, MHD_HTTP_UNAUTHORIZED,
                                  "{\"error\": \"Authorization: Bearer TOKEN is required\"}");
            if (!token_ok(w, auth))
                return reply_json(c, MHD_HTTP_FORBIDDEN, "{\"error\": \"wrong token\"}");
            pthread_mutex_lock(&w->mu);
            int running = w->running;
            w->stop_asked = 1;
            pthread_mutex_unlock(&w->mu);
            return reply_json(c, MHD_HTTP_OK,
                              running ? "{\"stopping\": true}"
                                      : "{\"stopping\": false, \"error\": \"the run has ended\"}");
        }
        if (w->start && (strcmp(url, "/api/start") == 0 || strcmp(url, "/api/quit") == 0)) {
            if (!post)
                return reply(c, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain", "", 0, "POST");
            const char *auth = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
            if (!auth)
                return reply_json(c, MHD_HTTP_UNAUTHORIZED,
                                  "{\"error\": \"Authorization: Bearer TOKEN is required\"}");
            if (!token_ok(w, auth))
                return reply_json(c, MHD_HTTP_FORBIDDEN, "{\"error\": \"wrong token\"}");
            if (url[5] == 'q') {
                *con_cls = &quit_after_reply; /* completed() quits */
                return reply_json(c, MHD_HTTP_OK, "{\"quitting\": true}");
            }
            if (cl && strtoull(cl, NULL, 10) > w->max_upload)
                return reply_json(c, 413, "{\"error\": \"the upload is too large\"}");
            web_upload *up = calloc(1, sizeof *up);
            if (!up)
                return MHD_NO;
            *con_cls = up; /* the body comes in the next calls */
            return MHD_YES;
        }
        return reply_json(c, MHD_HTTP_NOT_FOUND, "{\"error\": \"not found\"}");
    }
    /* A body after an answer was queued: MHD discards it. */
    *upload_size = 0;
    return MHD_YES;
}

int tb_web_start(tb_web **out, const char *spec, int public, char *err, size_t errlen)
{
    *out = NULL;
    char host[64] = "127.0.0.1";
    const char *colon = strrchr(spec, ':'), *port_s = spec;
    if (colon) {
        size_t n = (size_t)(colon - spec);
        if (n == 0 || n >= sizeof host) {
            snprintf(err, errlen, "--web %s: expected [HOST:]PORT", spec);
            return -1;
        }
        memcpy(host, spec, n);
        host[n] = 0;
        port_s = colon + 1;
        if (strcmp(host, "localhost") == 0)
            snprintf(host, sizeof host, "127.0.0.1");
    }
    long port;
    if (tb_parse_long(port_s, 0, 65535, &port) != TB_OK) {
        snprintf(err, errlen, "--web %s: expected [HOST:]PORT with PORT in 0..65535", spec);
        return -1;
    }
    struct sockaddr_in sa = {0};
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)port);
    if (inet_pton(AF_INET, host, &sa.sin_addr) != 1) {
        snprintf(err, errlen, "--web %s: '%s' is not an IPv4 address of this machine", spec, host);
        return -1;
    }
    if ((ntohl(sa.sin_addr.s_addr) >> 24) != 127 && !public) {
        snprintf(err, errlen,
                 "--web %s: %s is not a loopback address; serving the run to the network "
                 "needs --web-public",
                 spec, host);
        return -1;
    }
    tb_web *w = calloc(1, sizeof *w);
    if (!w) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    unsigned char rnd[16];
    if (getrandom(rnd, sizeof rnd, 0) != (ssize_t)sizeof rnd) {
        snprintf(err, errlen, "--web: no random token: %s", strerror(errno));
        free(w);
        return -1;
    }
    for (int i = 0; i < 16; i++)
        snprintf(w->token + 2 * i, 3, "%02x", rnd[i]);
    snprintf(w->host, sizeof w->host, "%s", host);
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->cv, NULL);
    w->running = 1;
    w->d = MHD_start_daemon(
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION, (uint16_t)port, NULL, NULL,
        handle, w, MHD_OPTION_SOCK_ADDR, &sa, MHD_OPTION_CONNECTION_LIMIT,
        (unsigned)WEB_CONNECTIONS, MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)WEB_TIMEOUT_S,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(64 * 1024), MHD_OPTION_NOTIFY_COMPLETED,
        completed, w, MHD_OPTION_END);
    if (!w->d) {
        snprintf(err, errlen,
                 "--web %s: cannot listen on %s:%ld (in use, or not an address of "
                 "this machine)",
                 spec, host, port);
        tb_web_destroy(&w);
        return -1;
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(w->d, MHD_DAEMON_INFO_BIND_PORT);
    w->port = info ? info->port : (int)port;
    *out = w;
    return 0;
}

int tb_web_port(const tb_web *w)
{
    return w->port;
}

const char *tb_web_host(const tb_web *w)
{
    return w->host;
}

const char *tb_web_token(const tb_web *w)
{
    return w->token;
}

void tb_web_publish(tb_web *w, const char *state, size_t len, const char *point, size_t plen,
                    int running)
{
    pthread_mutex_lock(&w->mu);
    tb_buf_clear(&w->state);
    int rc = tb_buf_append(&w->state, state, len);
    if (rc == TB_OK && point && plen) {
        if (w->history.len)
            rc = tb_buf_append(&w->history, ",", 1);
        if (rc == TB_OK)
            rc = tb_buf_append(&w->history, point, plen);
    }
    (void)rc; /* out of memory: the view lags, the run goes on */
    w->running = running;
    w->version++;
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
}

void tb_web_set_problem(tb_web *w, const char *json, size_t len)
{
    pthread_mutex_lock(&w->mu);
    tb_buf_clear(&w->problem);
    (void)tb_buf_append(&w->problem, json, len);
    pthread_mutex_unlock(&w->mu);
}

void tb_web_set_history(tb_web *w, const char *items, size_t len)
{
    pthread_mutex_lock(&w->mu);
    tb_buf_clear(&w->history);
    (void)tb_buf_append(&w->history, items, len);
    pthread_mutex_unlock(&w->mu);
}

void tb_web_set_serve(tb_web *w, tb_web_start_fn start, tb_web_quit_fn quit, void *arg,
                      size_t max_upload)
{
    pthread_mutex_lock(&w->mu);
    w->start = start;
    w->quit = quit;
    w->serve_arg = arg;
    w->max_upload = max_upload;
    pthread_mutex_unlock(&w->mu);
}

int tb_web_stop_asked(tb_web *w)
{
    pthread_mutex_lock(&w->mu);
    int s = w->stop_asked;
    pthread_mutex_unlock(&w->mu);
    return s;
}

void tb_web_destroy(tb_web **wp)
{
    tb_web *w = *wp;
    if (!w)
        return;
    pthread_mutex_lock(&w->mu);
    /* Let the open event streams deliver the last state (they end after
     * it), for at most 2 s. */
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 2;
    while (!w->running && w->streams > 0 &&
           pthread_cond_timedwait(&w->cv, &w->mu, &until) == 0)
        ;
    w->closing = 1;
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
    if (w->d)
        MHD_stop_daemon(w->d);
    pthread_mutex_destroy(&w->mu);
    pthread_cond_destroy(&w->cv);
    tb_buf_free(&w->state);
    tb_buf_free(&w->history);
    tb_buf_free(&w->problem);
    free(w);
    *wp = NULL;
}
