/*
 * ring.c - frames through shared memory between the emulator's coordinator
 * and the ranks on its node (see ring.h).
 */
#define _GNU_SOURCE
#include "emu/ring.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/futex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

_Static_assert(sizeof(tb_emu_ring) % 64 == 0, "rings keep their cache lines apart");
_Static_assert((TB_EMU_RING_BYTES & (TB_EMU_RING_BYTES - 1)) == 0, "a power of two");

static size_t shm_bytes(int ranks)
{
    return sizeof(tb_emu_shm) + 2 * (size_t)ranks * sizeof(tb_emu_ring) +
           ((size_t)ranks + 63) / 64 * sizeof(uint64_t);
}

int tb_emu_shm_create(int ranks, tb_emu_shm **out, size_t *bytes, char *name, size_t namelen,
                      char *env, size_t envlen)
{
    *out = NULL;
    uint64_t key = 0;
    int fd = -1;
    for (int tries = 0; tries < 8 && fd < 0; tries++) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        key = ((uint64_t)ts.tv_nsec << 20) ^ (uint64_t)ts.tv_sec ^ ((uint64_t)getpid() << 40) ^
              (uint64_t)(uintptr_t)&ts ^ (uint64_t)tries;
        snprintf(name, namelen, "/tenbin-emu-%ld-%016" PRIx64, (long)getpid(), key);
        fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        if (fd < 0 && errno != EEXIST)
            return TB_ERR_IO;
    }
    if (fd < 0)
        return TB_ERR_IO;
    size_t n = shm_bytes(ranks);
    /* posix_fallocate, not ftruncate alone: pages a full /dev/shm cannot
     * give would be SIGBUS in whoever touches them first. */
    if (posix_fallocate(fd, 0, (off_t)n) != 0) {
        close(fd);
        shm_unlink(name);
        return TB_ERR_IO;
    }
    void *m = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (m == MAP_FAILED) {
        shm_unlink(name);
        return TB_ERR_IO;
    }
    tb_emu_shm *s = m; /* zero-filled: every ring empty, nobody sleeping */
    s->key = key;
    s->ranks = (uint32_t)ranks;
    s->ring_bytes = TB_EMU_RING_BYTES;
    atomic_store(&s->coord_sleeping, TB_EMU_AWAKE);
    atomic_thread_fence(memory_order_seq_cst);
    s->magic = TB_EMU_SHM_MAGIC;
    snprintf(env, envlen, "%s:%016" PRIx64, name, key);
    *out = s;
    *bytes = n;
    return TB_OK;
}

tb_emu_shm *tb_emu_shm_open(const char *env, int ranks, size_t *bytes)
{
    if (!env || !*env)
        return NULL;
    const char *colon = strrchr(env, ':');
    char name[128];
    if (!colon || (size_t)(colon - env) >= sizeof name)
        return NULL;
    memcpy(name, env, (size_t)(colon - env));
    name[colon - env] = 0;
    uint64_t key = strtoull(colon + 1, NULL, 16);
    int fd = shm_open(name, O_RDWR | O_CLOEXEC, 0);
    if (fd < 0)
        return NULL;
    size_t n = shm_bytes(ranks);
    struct stat st;
    if (fstat(fd, &st) != 0 || (size_t)st.st_size != n) {
        close(fd);
        return NULL;
    }
    void *m = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (m == MAP_FAILED)
        return NULL;
    tb_emu_shm *s = m;
    if (s->magic != TB_EMU_SHM_MAGIC || s->key != key || s->ranks != (uint32_t)ranks ||
        s->ring_bytes != TB_EMU_RING_BYTES) {
        munmap(m, n);
        return NULL;
    }
    *bytes = n;
    return s;
}

void tb_emu_shm_unmap(tb_emu_shm *s, size_t bytes)
{
    if (s)
        munmap(s, bytes);
}

void tb_emu_shm_unlink(const char *name)
{
    if (name && *name)
        shm_unlink(name);
}

size_t tb_emu_ring_put(tb_emu_ring *r, const void *p, size_t n)
{
    uint64_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
    uint64_t tail = atomic_load_explicit(&r->tail, memory_order_acquire);
    size_t room = TB_EMU_RING_BYTES - (size_t)(head - tail);
    if (n > room)
        n = room;
    size_t at = (size_t)(head & (TB_EMU_RING_BYTES - 1));
    size_t first = TB_EMU_RING_BYTES - at < n ? TB_EMU_RING_BYTES - at : n;
    memcpy(r->data + at, p, first);
    memcpy(r->data, (const unsigned char *)p + first, n - first);
    atomic_store_explicit(&r->head, head + n, memory_order_release);
    return n;
}

long tb_emu_ring_fill(tb_emu_ring *r, tb_emu_reader *rd)
{
    uint64_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
    uint64_t head = atomic_load_explicit(&r->head, memory_order_acquire);
    size_t n = (size_t)(head - tail);
    if (n == 0)
        return 0;
    tb_buf *b = &rd->raw;
    if (b->pos > 0) { /* drop what was handed out */
        memmove(b->data, b->data + b->pos, b->len - b->pos);
        b->len -= b->pos;
        b->pos = 0;
    }
    if (tb_buf_reserve(b, n) != TB_OK)
        return -1;
    size_t at = (size_t)(tail & (TB_EMU_RING_BYTES - 1));
    size_t first = TB_EMU_RING_BYTES - at < n ? TB_EMU_RING_BYTES - at : n;
    memcpy(b->data + b->len, r->data + at, first);
    memcpy(b->data + b->len + first, r->data, n - first);
    b->len += n;
    atomic_store_explicit(&r->tail, head, memory_order_release);
    return (long)n;
}

void tb_emu_futex_wait(_Atomic uint32_t *w, uint32_t v, long ns)
{
    struct timespec ts = {ns / 1000000000L, ns % 1000000000L};
    syscall(SYS_futex, (uint32_t *)w, FUTEX_WAIT, v, ns < 0 ? NULL : &ts, NULL, 0);
}

void tb_emu_futex_wake(_Atomic uint32_t *w, int n)
{
    syscall(SYS_futex, (uint32_t *)w, FUTEX_WAKE, n, NULL, NULL, 0);
}

void tb_emu_ring_ring(tb_emu_ring *r)
{
    /* The head stored above, then the reader's flag read: the reader stores
     * its flag, then reads the head (tb_emu_ring_sleep).  With a full fence
     * on both sides one of the two sees the other. */
    atomic_thread_fence(memory_order_seq_cst);
    if (atomic_load_explicit(&r->sleeping, memory_order_relaxed)) {
        atomic_fetch_add(&r->bell, 1);
        tb_emu_futex_wake(&r->bell, 1);
    }
}

int tb_emu_ring_sleep(tb_emu_ring *r, long ns)
{
    uint32_t v = atomic_load(&r->bell);
    atomic_store_explicit(&r->sleeping, 1, memory_order_relaxed);
    atomic_thread_fence(memory_order_seq_cst);
    if (tb_emu_ring_used(r) == 0)
        tb_emu_futex_wait(&r->bell, v, ns);
    atomic_store_explicit(&r->sleeping, 0, memory_order_relaxed);
    return tb_emu_ring_used(r) > 0;
}
