/*
 * test_wire.c - the emulator's frames (src/emu/wire.c) over a socket pair:
 * several frames taken by one read, a frame cut across reads, a frame larger
 * than one read, a frame over the limit, a close at a frame boundary and in
 * the middle of one.  And through the shared-memory rings (src/emu/ring.c):
 * frames across the ring's end, a frame larger than the ring, a full ring, a
 * segment opened with the wrong key or rank count, the name gone after
 * unlink.  Known answers: every frame comes out whole, in order, with its
 * bytes.  And the result as JSON (tb_emu_result_json).
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdint.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "emu/ring.h"
#include "tenbin/emu.h"
#include "emu/wire.h"
#include "tb_test.h"

static int sp[2];

static void pair_open(void) { socketpair(AF_UNIX, SOCK_STREAM, 0, sp); }
static void pair_close(void)
{
    close(sp[0]);
    close(sp[1]);
}

/* Write a frame of n bytes, byte i = (seed + i) mod 251. */
static int put(size_t n, unsigned seed)
{
    tb_buf b = TB_BUF_INIT;
    for (size_t i = 0; i < n; i++) {
        uint8_t v = (uint8_t)((seed + i) % 251);
        if (tb_buf_pack_u8(&b, v) != TB_OK)
            return TB_ERR_NOMEM;
    }
    int rc = tb_emu_frame_write(sp[0], &b);
    tb_buf_free(&b);
    return rc;
}

static int is_frame(const tb_buf *f, size_t n, unsigned seed)
{
    if (f->len != n)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (f->data[i] != (uint8_t)((seed + i) % 251))
            return 0;
    return 1;
}

static void test_several_in_one_read(void)
{
    pair_open();
    tb_emu_reader rd = {TB_BUF_INIT};
    tb_buf f;
    TB_ASSERT_EQ_INT(tb_emu_reader_fill(sp[1], &rd, NULL), 0); /* nothing yet */
    TB_ASSERT_EQ_INT(tb_emu_reader_next(&rd, &f, 1 << 20), 0);
    TB_ASSERT_EQ_INT(put(1, 1), TB_OK);
    TB_ASSERT_EQ_INT(put(0, 0), TB_OK);
    TB_ASSERT_EQ_INT(put(300, 7), TB_OK);
    TB_ASSERT(tb_emu_reader_fill(sp[1], &rd, NULL) == 4 + 1 + 4 + 4 + 300);
    TB_ASSERT_EQ_INT(tb_emu_reader_next(&rd, &f, 1 << 20), 1);
    TB_ASSERT(is_frame(&f, 1, 1));
    TB_ASSERT_EQ_INT(tb_emu_reader_next(&rd, &f, 1 << 20), 1);
    TB_ASSERT(is_frame(&f, 0, 0));
    TB_ASSERT_EQ_INT(tb_emu_reader_next(&rd, &f, 1 << 20), 1);
    TB_ASSERT(is_frame(&f, 300, 7));
    TB_ASSERT_EQ_INT(tb_emu_reader_next(&rd, &f, 1 << 20), 0);
    TB_ASSERT(tb_emu_reader_pending(&rd) == 0);
    tb_emu_reader_free(&rd);
    pair_close();
}

static void test_cut_across_reads(void)
{
    pair_open();
    tb_emu_reader rd = {TB_BUF_INIT};
    tb_buf f;
    /* A frame of 10 bytes written in three pieces: 2 bytes of its length,
     * the rest of the length and 3 bytes, the last 7. */
    unsigned char all[14] = {10, 0, 0, 0};
    for (int i = 0; i < 10; i++)
        all[4 + i] = (unsigned char)((5 + i) % 251);
    size_t cuts[] = {0, 2, 7, 14};
    for (int k = 0; k < 3; k++) {
        TB_ASSERT(write(sp[0], all + cuts[k], cuts[k + 1] - cuts[k]) ==
                  (ssize_t)(cuts[k + 1] - cuts[k]));
        TB_ASSERT(tb_emu_reader_fill(sp[1], &rd, NULL) == (long)(cuts[k + 1] - cuts[k]));
        TB_ASSERT_EQ_INT(tb_emu_reader_next(&rd, &f, 1 << 20), k == 2);
    }
    TB_ASSERT(is_frame(&f, 10, 5));
    tb_emu_reader_free(&rd);
    pair_close();
}

static void test_larger_than_a_read(void)
{
    pair_open();
    int sz = 1 << 20;
    setsockopt(sp[0], SOL_SOCKET, SO_SNDBUF, &sz, sizeof sz);
    setsockopt(sp[1], SOL_SOCKET, SO_RCVBUF, &sz, sizeof sz);
    tb_emu_reader rd = {TB_BUF_INIT};
    tb_buf f;
    size_t n = 150000; /* more than the 64 KiB a fill reserves */
    TB_ASSERT_EQ_INT(put(n, 3), TB_OK);
    TB_ASSERT_EQ_INT(put(5, 9), TB_OK);
    int got = 0, fills = 0;
    while (got < 2 && fills < 100) {
        long r = tb_emu_reader_fill(sp[1], &rd, NULL);
        TB_ASSERT(r >= 0);
        fills++;
        while (tb_emu_reader_next(&rd, &f, 1 << 20) == 1) {
            TB_ASSERT(got == 0 ? is_frame(&f, n, 3) : is_frame(&f, 5, 9));
            got++;
        }
    }
    TB_ASSERT_EQ_INT(got, 2);
    TB_ASSERT(fills > 1);
    tb_emu_reader_free(&rd);
    pair_close();
}

static void test_over_the_limit(void)
{
    pair_open();
    tb_emu_reader rd = {TB_BUF_INIT};
    tb_buf f;
    TB_ASSERT_EQ_INT(put(100, 0), TB_OK);
    TB_ASSERT(tb_emu_reader_fill(sp[1], &rd, NULL) > 0);
    TB_ASSERT_EQ_INT(tb_emu_reader_next(&rd, &f, 99), TB_ERR_RANGE);
    tb_emu_reader_free(&rd);
    pair_close();
}

static void test_close(void)
{
    /* At a frame boundary: the frame, then a clean close. */
    pair_open();
    tb_emu_reader rd = {TB_BUF_INIT};
    tb_buf f;
    int closed = -1;
    TB_ASSERT_EQ_INT(put(4, 2), TB_OK);
    close(sp[0]);
    TB_ASSERT(tb_emu_reader_fill(sp[1], &rd, &closed) == 8);
    TB_ASSERT_EQ_INT(tb_emu_reader_next(&rd, &f, 1 << 20), 1);
    TB_ASSERT(is_frame(&f, 4, 2));
    TB_ASSERT(tb_emu_reader_fill(sp[1], &rd, &closed) == -1);
    TB_ASSERT_EQ_INT(closed, 1);
    close(sp[1]);
    tb_emu_reader_free(&rd);
    /* In the middle of one: an error, not a clean close. */
    pair_open();
    unsigned char half[6] = {10, 0, 0, 0, 1, 2};
    TB_ASSERT(write(sp[0], half, sizeof half) == (ssize_t)sizeof half);
    close(sp[0]);
    TB_ASSERT(tb_emu_reader_fill(sp[1], &rd, &closed) == 6);
    TB_ASSERT_EQ_INT(tb_emu_reader_next(&rd, &f, 1 << 20), 0);
    TB_ASSERT(tb_emu_reader_fill(sp[1], &rd, &closed) == -1);
    TB_ASSERT_EQ_INT(closed, 0);
    TB_ASSERT(tb_emu_reader_pending(&rd) == 6);
    close(sp[1]);
    tb_emu_reader_free(&rd);
}

/* A frame of n bytes, byte i = (seed + i) mod 251, appended to q framed. */
static int framed(tb_buf *q, size_t n, unsigned seed)
{
    tb_buf b = TB_BUF_INIT;
    int rc = TB_OK;
    for (size_t i = 0; i < n && rc == TB_OK; i++)
        rc = tb_buf_pack_u8(&b, (uint8_t)((seed + i) % 251));
    if (rc == TB_OK)
        rc = tb_emu_frame_append(q, &b);
    tb_buf_free(&b);
    return rc;
}

static void test_ring_frames(void)
{
    tb_emu_shm *s = NULL;
    size_t bytes = 0;
    char name[128], env[200];
    if (tb_emu_shm_create(3, &s, &bytes, name, sizeof name, env, sizeof env) != TB_OK) {
        printf("skip ring_frames: no POSIX shared memory here\n");
        return;
    }
    /* The rank's side maps the same segment; a wrong key or size is refused. */
    size_t b2 = 0;
    tb_emu_shm *r = tb_emu_shm_open(env, 3, &b2);
    TB_ASSERT(r != NULL && b2 == bytes);
    TB_ASSERT(tb_emu_shm_open(env, 4, &b2) == NULL);
    char bad[200];
    snprintf(bad, sizeof bad, "%s:%016x", name, 12345u);
    TB_ASSERT(tb_emu_shm_open(bad, 3, &b2) == NULL);
    TB_ASSERT(tb_emu_shm_open("no-colon", 3, &b2) == NULL);
    TB_ASSERT(tb_emu_shm_open(NULL, 3, &b2) == NULL);

    /* Rank 2 writes through its mapping, the coordinator reads through its
     * own: 40 frames of growing sizes go round the 16 KiB ring many times,
     * one of them larger than the ring, pushed in pieces as room appears. */
    tb_emu_ring *w = tb_emu_shm_up(r, 2), *rd_ring = tb_emu_shm_up(s, 2);
    tb_buf q = TB_BUF_INIT;
    for (unsigned k = 0; k < 40; k++)
        TB_ASSERT_EQ_INT(framed(&q, k == 20 ? 3 * TB_EMU_RING_BYTES : 97 * k, k), TB_OK);
    tb_emu_reader rd = {TB_BUF_INIT};
    tb_buf f;
    size_t sent = 0;
    unsigned got = 0;
    int rounds = 0;
    while (got < 40 && rounds < 100000) {
        sent += tb_emu_ring_put(w, q.data + sent, q.len - sent);
        TB_ASSERT(tb_emu_ring_used(rd_ring) <= TB_EMU_RING_BYTES);
        TB_ASSERT(tb_emu_ring_fill(rd_ring, &rd) >= 0);
        while (tb_emu_reader_next(&rd, &f, 1 << 20) == 1) {
            TB_ASSERT(is_frame(&f, got == 20 ? 3 * TB_EMU_RING_BYTES : 97 * got, got));
            got++;
        }
        rounds++;
    }
    TB_ASSERT_EQ_INT(got, 40);
    TB_ASSERT(sent == q.len);
    TB_ASSERT(tb_emu_ring_used(rd_ring) == 0);
    /* A full ring takes nothing more until it is read. */
    tb_emu_ring *d = tb_emu_shm_down(s, 0);
    unsigned char big[TB_EMU_RING_BYTES + 10] = {0};
    TB_ASSERT(tb_emu_ring_put(d, big, sizeof big) == TB_EMU_RING_BYTES);
    TB_ASSERT(tb_emu_ring_put(d, big, 1) == 0);
    /* Rings of other ranks are untouched. */
    TB_ASSERT(tb_emu_ring_used(tb_emu_shm_up(s, 0)) == 0);
    TB_ASSERT(tb_emu_ring_used(tb_emu_shm_down(s, 2)) == 0);
    /* A sleeper with bytes waiting does not sleep. */
    TB_ASSERT_EQ_INT(tb_emu_ring_sleep(d, 1000000000L), 1);
    tb_emu_reader_free(&rd);
    tb_buf_free(&q);
    tb_emu_shm_unmap(r, b2);
    tb_emu_shm_unlink(name);
    TB_ASSERT(tb_emu_shm_open(env, 3, &b2) == NULL); /* the name is gone */
    tb_emu_shm_unmap(s, bytes);
}

/* The emulator's result as JSON: it parses, NaN and infinities are null,
 * a host name is escaped. */
static void test_result_json(void)
{
    tb_emu_rank k[2];
    memset(k, 0, sizeof k);
    k[0].compute_s = 0.5;
    k[0].idle_s = NAN;
    k[1].rank = 1;
    k[1].end_s = -INFINITY;
    snprintf(k[1].host_name, sizeof k[1].host_name, "h\"1");
    k[1].bytes_sent = UINT64_MAX;
    tb_emu_result r;
    memset(&r, 0, sizeof r);
    r.ranks = 2;
    r.rank = k;
    r.makespan_s = INFINITY;
    r.wall_s = 1.25;
    tb_buf b = TB_BUF_INIT;
    TB_ASSERT_OK(tb_emu_result_json(&r, "{\"platform\": \"hosts=2\", \"master\": 0}", &b));
    TB_ASSERT_OK(tb_buf_append(&b, "", 1));
    const char *t = (const char *)b.data;
    TB_ASSERT(strncmp(t, "{\"platform\": \"hosts=2\", \"master\": 0, \"predicted_makespan_s\": null, "
                         "\"wall_s\": 1.25, ", 82) == 0);
    TB_ASSERT(strstr(t, "\"bytes_sent\": 18446744073709551615,") != NULL);
    cJSON *j = cJSON_Parse(t);
    TB_ASSERT(j != NULL);
    cJSON *ranks = cJSON_GetObjectItem(j, "ranks");
    TB_ASSERT_EQ_INT(cJSON_GetArraySize(ranks), 2);
    TB_ASSERT(cJSON_IsNull(cJSON_GetObjectItem(cJSON_GetArrayItem(ranks, 0), "idle_s")));
    TB_ASSERT(cJSON_IsNull(cJSON_GetObjectItem(cJSON_GetArrayItem(ranks, 1), "end_s")));
    TB_ASSERT_STR_EQ(cJSON_GetObjectItem(cJSON_GetArrayItem(ranks, 1), "host")->valuestring, "h\"1");
    cJSON_Delete(j);
    tb_buf_free(&b);
}

/* A sweep: each variant's least makespan, its P and saturation point (the
 * first P within the tolerance), the best variant (the first on a tie), and
 * the JSON, null where a run failed or a variant has no prediction. */
static void test_sweep_json(void)
{
    static const long P[] = {2, 4, 8};
    tb_emu_sweep_point pt[3][3] = {
        {{1, 10, 1, 0.25, 0.125, 8.625}, {1, 5.05, 1, 1, 1, 2.05}, {1, 5, 1, 1, 1, NAN}},
        {{0, 0, 0, 0, 0, 0}, {1, 4, 1, 1, 1, 1}, {1, 4, 2, 1, 1, 0}},
        {{0, 0, 0, 0, 0, 0}, {0, 0, 0, 0, 0, 0}, {0, 0, 0, 0, 0, 0}},
    };
    tb_emu_sweep_variant v[3] = {{.masters = 1, .point = pt[0]},
                                 {.masters = 2, .point = pt[1]},
                                 {.masters = 4, .point = pt[2]}};
    tb_emu_sweep_result s = {.tolerance = 0.02, .ranks = P, .nranks = 3, .variant = v,
                             .nvariants = 3, .failed_runs = 4};
    tb_emu_sweep_saturation(&s);
    TB_ASSERT(v[0].least_s == 5 && v[0].best_P == 8 && v[0].saturation_P == 4);
    TB_ASSERT(v[1].least_s == 4 && v[1].best_P == 4 && v[1].saturation_P == 4);
    TB_ASSERT(isinf(v[2].least_s) && v[2].best_P == 0 && v[2].saturation_P == 0);
    TB_ASSERT_EQ_INT((int)s.best, 1);
    tb_buf b = TB_BUF_INIT;
    TB_ASSERT_OK(tb_emu_sweep_result_json(&s, "{\"command\": \"emu sweep\"}", &b));
    TB_ASSERT_OK(tb_buf_append(&b, "", 1));
    const char *t = (const char *)b.data;
    static const char head[] = "{\"command\": \"emu sweep\", \"tolerance\": 0.02, \"ranks\": [2, 4, 8], "
        "\"variants\": [{\"masters\": 1, \"makespan_s\": [10, 5.05, 5], "
        "\"master_compute_s\": [1, 1, 1], \"master_send_s\": [0.25, 1, 1], "
        "\"master_recv_s\": [0.125, 1, 1], \"master_idle_s\": [8.625, 2.05, null], "
        "\"saturation_P\": 4, \"best_P\": 8, \"best_makespan_s\": 5}, ";
    TB_ASSERT(strncmp(t, head, sizeof head - 1) == 0);
    TB_ASSERT(strstr(t, "{\"masters\": 2, \"makespan_s\": [null, 4, 4], ") != NULL);
    TB_ASSERT(strstr(t, "\"saturation_P\": null, \"best_P\": null, \"best_makespan_s\": null}], "
                        "\"best_masters\": 2, \"failed_runs\": 4}") != NULL);
    TB_ASSERT(t[strlen(t) - 1] == '}');
    cJSON *j = cJSON_Parse(t);
    TB_ASSERT(j != NULL);
    cJSON_Delete(j);
    /* without master counts (the program as given): masters and best_masters null */
    tb_emu_sweep_variant one = {.masters = 0, .point = pt[0]};
    tb_emu_sweep_result s1 = {.tolerance = 0.5, .ranks = P, .nranks = 3, .variant = &one,
                              .nvariants = 1};
    tb_emu_sweep_saturation(&s1);
    TB_ASSERT(one.saturation_P == 4);
    tb_buf_clear(&b);
    TB_ASSERT_OK(tb_emu_sweep_result_json(&s1, NULL, &b));
    TB_ASSERT_OK(tb_buf_append(&b, "", 1));
    t = (const char *)b.data;
    static const char head1[] = "{\"tolerance\": 0.5, \"ranks\": [2, 4, 8], "
                                "\"variants\": [{\"masters\": null, ";
    TB_ASSERT(strncmp(t, head1, sizeof head1 - 1) == 0);
    TB_ASSERT(strstr(t, "], \"best_masters\": null, \"failed_runs\": 0}") != NULL);
    tb_buf_free(&b);
}

static const tb_test tests[] = {
    {"several_in_one_read", test_several_in_one_read},
    {"cut_across_reads", test_cut_across_reads},
    {"larger_than_a_read", test_larger_than_a_read},
    {"over_the_limit", test_over_the_limit},
    {"close", test_close},
    {"ring_frames", test_ring_frames},
    {"result_json", test_result_json},
    {"sweep_json", test_sweep_json},
    {NULL, NULL},
};
TB_TEST_MAIN(tests)
