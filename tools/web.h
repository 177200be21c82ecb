/*
 * web.h - the live web view of a run (libmicrohttpd): the latest state as
 * JSON, its history, Server-Sent Events, a token-protected stop, and the
 * page embedded in the binary (tools/web/index.html).  The run publishes
 * states from its own thread; the server answers from its own.
 */
#ifndef TENBIN_TOOLS_WEB_H
#define TENBIN_TOOLS_WEB_H

#include <stddef.h>

typedef struct tb_web tb_web;

/* Serve on spec "[HOST:]PORT" (default host 127.0.0.1; port 0: any free
 * one).  A host other than a loopback address needs public != 0.  0, or -1
 * with the reason in err. */
int tb_web_start(tb_web **out, const char *spec, int public, char *err, size_t errlen);
int tb_web_port(const tb_web *w);
const char *tb_web_host(const tb_web *w);
/* The bearer token POST /api/stop needs (32 hex digits). */
const char *tb_web_token(const tb_web *w);
/* A new state (one JSON object) and its history point (one JSON object,
 * appended to /api/history); running = 0 for the last one.  Copied. */
void tb_web_publish(tb_web *w, const char *state, size_t len, const char *point, size_t plen,
                    int running);
/* What does not change during the run (GET /api/problem: one JSON object,
 * e.g. the TSP's coordinates); copied. */
void tb_web_set_problem(tb_web *w, const char *json, size_t len);
/* Replace the history by items, the inside of a JSON array; copied. */
void tb_web_set_history(tb_web *w, const char *items, size_t len);
/* `tenbin bnb serve`: POST /api/start?problem=P&gap=G&groups=N&name=FILE with
 * the instance as the body (at most max_upload bytes, else 413) and the
 * token calls start from the server's thread: it returns the HTTP status
 * (202 started, 400 with the parser's message in msg, 409 busy).  POST
 * /api/quit with the token calls quit.  Without this, both are 404. */
typedef int (*tb_web_start_fn)(void *arg, const char *problem, const char *gap,
                               const char *groups, const char *name, const void *body,
                               size_t len, char *msg, size_t msglen);
typedef void (*tb_web_quit_fn)(void *arg);
void tb_web_set_serve(tb_web *w, tb_web_start_fn start, tb_web_quit_fn quit, void *arg,
                      size_t max_upload);
/* Whether a stop was asked (POST /api/stop with the token) since the run
 * was accepted (POST /api/start, which clears it). */
int tb_web_stop_asked(tb_web *w);
/* Stop serving (closes the event streams) and free. */
void tb_web_destroy(tb_web **w);

#endif
