/*
 * test_queue.c - a master's task queue (src/mw/queue.c) on its own: tasks
 * leave the head in order with their exact records, explicit ones before
 * the generator's ranges; a give takes from the tail within its byte budget
 * (at least one task) and a take puts back exactly what was given; every
 * task leaves exactly once however the queue is split; a generator failure
 * consumes its task and leaves the message as it was; the marked tasks of a
 * resumed run are left out, in order.
 */
#define _POSIX_C_SOURCE 200809L
#include "mw/queue.h"

#include <string.h>

#include "../tb_test.h"
#include "tenbin/core.h"

typedef struct gen_ctx {
    uint64_t calls;
    uint64_t fail_id; /* UINT64_MAX: none */
} gen_ctx;

/* Task i: its id in 8 bytes, then i % 7 bytes of i's low byte. */
static int gen(void *ctx, uint64_t id, tb_buf *task)
{
    gen_ctx *g = ctx;
    g->calls++;
    if (id == g->fail_id)
        return TB_ERR_IO;
    TB_CHECK(tb_buf_append(task, &id, sizeof id));
    for (uint64_t k = 0; k < id % 7; k++)
        TB_CHECK(tb_buf_append(task, &(unsigned char){(unsigned char)id}, 1));
    return TB_OK;
}

/* Pop one task and check that its record is task id's (the generator's
 * bytes, or for an explicit task the 3 bytes "e", id's low byte, "!"). */
static void pop_expect(tb__queue *q, tb_buf *msg, uint64_t want, int explicit_task)
{
    size_t at = msg->len;
    uint64_t id = UINT64_MAX;
    TB_ASSERT_EQ_INT(tb__queue_pop_record(q, msg, &id), TB_OK);
    TB_ASSERT_EQ_U64(id, want);
    uint64_t got;
    uint32_t len;
    memcpy(&got, msg->data + at, 8);
    memcpy(&len, msg->data + at + 8, 4);
    TB_ASSERT_EQ_U64(got, want);
    const unsigned char *p = msg->data + at + 12;
    if (explicit_task) {
        TB_ASSERT_EQ_U64(len, 3);
        TB_ASSERT(p[0] == 'e' && p[1] == (unsigned char)want && p[2] == '!');
    } else {
        TB_ASSERT_EQ_U64(len, 8 + want % 7);
        memcpy(&got, p, 8);
        TB_ASSERT_EQ_U64(got, want);
        for (uint64_t k = 0; k < want % 7; k++)
            TB_ASSERT_EQ_INT(p[8 + k], (unsigned char)want);
    }
    TB_ASSERT_EQ_U64(msg->len - at, 12 + (size_t)len);
}

static void push_explicit(tb__queue *q, uint64_t id)
{
    unsigned char b[3] = {'e', (unsigned char)id, '!'};
    TB_ASSERT_EQ_INT(tb__queue_push(q, id, b, sizeof b), TB_OK);
}

static void test_order_and_records(void)
{
    gen_ctx g = {0, UINT64_MAX};
    tb__queue q;
    tb__queue_init(&q, gen, &g);
    tb_buf msg = TB_BUF_INIT;
    TB_ASSERT_EQ_INT(tb__queue_push_range(&q, 100, 103), TB_OK);
    TB_ASSERT_EQ_INT(tb__queue_push_range(&q, 7, 9), TB_OK);
    push_explicit(&q, 1);
    push_explicit(&q, 2);
    TB_ASSERT_EQ_U64(tb__queue_count(&q), 7);
    /* explicit tasks first, then the ranges in the order they came */
    pop_expect(&q, &msg, 1, 1);
    pop_expect(&q, &msg, 2, 1);
    for (uint64_t id = 100; id < 103; id++)
        pop_expect(&q, &msg, id, 0);
    pop_expect(&q, &msg, 7, 0);
    pop_expect(&q, &msg, 8, 0);
    TB_ASSERT_EQ_U64(tb__queue_count(&q), 0);
    TB_ASSERT_EQ_U64(g.calls, 5);
    uint64_t id;
    TB_ASSERT_EQ_INT(tb__queue_pop_record(&q, &msg, &id), TB_ERR_STATE);
    tb_buf_free(&msg);
    tb__queue_free(&q);
}

static void test_give_take_exactly_once(void)
{
    gen_ctx g = {0, UINT64_MAX};
    tb__queue a, b;
    tb__queue_init(&a, gen, &g);
    tb__queue_init(&b, gen, &g);
    tb_buf msg = TB_BUF_INIT, give = TB_BUF_INIT;
    enum { N = 300 };
    unsigned char seen[N + 50] = {0};
    TB_ASSERT_EQ_INT(tb__queue_push_range(&a, 0, N), TB_OK);
    for (uint64_t id = N; id < N + 50; id++)
        push_explicit(&a, id);
    /* Pop a few, give a third away, pop, give back and forth: every task
     * leaves exactly once, from one queue or the other. */
    uint64_t left = N + 50, id;
    for (int round = 0; left > 0; round++) {
        tb__queue *from = round % 2 ? &b : &a, *to = round % 2 ? &a : &b;
        for (int k = 0; k < 7 && tb__queue_count(from) > 0; k++) {
            tb_buf_clear(&msg);
            TB_ASSERT_EQ_INT(tb__queue_pop_record(from, &msg, &id), TB_OK);
            TB_ASSERT(id < N + 50 && !seen[id]);
            seen[id] = 1;
            left--;
        }
        uint64_t before = tb__queue_count(from), given = 0;
        tb_buf_clear(&give);
        TB_ASSERT_EQ_INT(tb__queue_give(from, before / 3, 1 << 20, &give, &given), TB_OK);
        TB_ASSERT_EQ_U64(given, before / 3);
        TB_ASSERT_EQ_U64(tb__queue_count(from), before - given);
        uint64_t had = tb__queue_count(to);
        TB_ASSERT_EQ_INT(tb__queue_take(to, give.data, give.len), TB_OK);
        TB_ASSERT_EQ_U64(tb__queue_count(to), had + given);
        TB_ASSERT_EQ_U64(tb__queue_count(&a) + tb__queue_count(&b), left);
    }
    for (uint64_t i = 0; i < N + 50; i++)
        TB_ASSERT(seen[i]);
    TB_ASSERT_EQ_U64(g.calls, N);
    tb_buf_free(&give);
    tb_buf_free(&msg);
    tb__queue_free(&a);
    tb__queue_free(&b);
}

static void test_give_budget(void)
{
    gen_ctx g = {0, UINT64_MAX};
    tb__queue q;
    tb__queue_init(&q, gen, &g);
    tb_buf give = TB_BUF_INIT;
    for (uint64_t id = 0; id < 10; id++)
        push_explicit(&q, id);
    uint64_t given = 0;
    /* 4 + 4 bytes of counts, 15 a record: 40 bytes hold two */
    TB_ASSERT_EQ_INT(tb__queue_give(&q, 10, 40, &give, &given), TB_OK);
    TB_ASSERT_EQ_U64(given, 2);
    TB_ASSERT(give.len <= 40);
    /* a budget too small for one still moves one */
    tb_buf_clear(&give);
    TB_ASSERT_EQ_INT(tb__queue_give(&q, 5, 1, &give, &given), TB_OK);
    TB_ASSERT_EQ_U64(given, 1);
    TB_ASSERT_EQ_U64(tb__queue_count(&q), 7);
    /* from the tail: the head is still task 0 */
    tb_buf msg = TB_BUF_INIT;
    pop_expect(&q, &msg, 0, 1);
    tb_buf_free(&msg);
    tb_buf_free(&give);
    tb__queue_free(&q);
}

static void test_generator_failure(void)
{
    gen_ctx g = {0, 5};
    tb__queue q;
    tb__queue_init(&q, gen, &g);
    tb_buf msg = TB_BUF_INIT;
    TB_ASSERT_EQ_INT(tb__queue_push_range(&q, 4, 7), TB_OK);
    pop_expect(&q, &msg, 4, 0);
    size_t len = msg.len;
    uint64_t id = 0;
    TB_ASSERT_EQ_INT(tb__queue_pop_record(&q, &msg, &id), TB_ERR_TASK);
    TB_ASSERT_EQ_U64(id, 5);
    TB_ASSERT_EQ_INT(q.gen_error, TB_ERR_IO);
    TB_ASSERT_EQ_U64(msg.len, len); /* nothing of it written */
    TB_ASSERT_EQ_U64(tb__queue_count(&q), 1); /* consumed */
    pop_expect(&q, &msg, 6, 0);
    /* a clear drops everything */
    TB_ASSERT_EQ_INT(tb__queue_push_range(&q, 0, 3), TB_OK);
    push_explicit(&q, 9);
    tb__queue_clear(&q);
    TB_ASSERT_EQ_U64(tb__queue_count(&q), 0);
    tb_buf_free(&msg);
    tb__queue_free(&q);
}

static int is_marked(const unsigned char *marked, uint64_t id)
{
    return marked[id / 8] >> (id % 8) & 1;
}

static void test_resume_marks(void)
{
    gen_ctx g = {0, UINT64_MAX};
    tb__queue q;
    tb__queue_init(&q, gen, &g);
    unsigned char marked[3] = {0};
    uint64_t done[] = {0, 3, 4, 5, 17, 19};
    for (size_t i = 0; i < sizeof done / sizeof done[0]; i++)
        marked[done[i] / 8] |= (unsigned char)(1u << (done[i] % 8));
    TB_ASSERT_EQ_INT(tb__queue_push_unmarked(&q, 20, marked), TB_OK);
    TB_ASSERT_EQ_U64(tb__queue_count(&q), 14);
    tb_buf msg = TB_BUF_INIT;
    for (uint64_t id = 0; id < 20; id++) {
        if (is_marked(marked, id))
            continue;
        pop_expect(&q, &msg, id, 0);
    }
    TB_ASSERT_EQ_U64(tb__queue_count(&q), 0);
    /* explicit tasks: the marked ones dropped, the order kept */
    for (uint64_t id = 0; id < 20; id++)
        push_explicit(&q, id);
    tb__queue_drop_marked(&q, marked);
    TB_ASSERT_EQ_U64(tb__queue_count(&q), 14);
    for (uint64_t id = 0; id < 20; id++) {
        if (is_marked(marked, id))
            continue;
        pop_expect(&q, &msg, id, 1);
    }
    tb_buf_free(&msg);
    tb__queue_free(&q);
}

static const tb_test tests[] = {
    {"order_and_records", test_order_and_records},
    {"give_take_exactly_once", test_give_take_exactly_once},
    {"give_budget", test_give_budget},
    {"generator_failure", test_generator_failure},
    {"resume_marks", test_resume_marks},
    {NULL, NULL},
};

TB_TEST_MAIN(tests)
