/*
 * ckpt.c - checkpoint files: journals and snapshots (ckpt.h).
 */
#if defined(__linux__)
#define _GNU_SOURCE /* sync_file_range */
#else
#define _POSIX_C_SOURCE 200809L
#endif

#include "core/ckpt.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/errbuf.h"

#include <zlib.h>

static const char magic[8] = {'T', 'E', 'N', 'B', 'I', 'N', 'C', 'K'};
enum { VERSION = 2, REC_HEAD = TB__CKPT_REC_HEAD, REC_TAIL = TB__CKPT_REC_TAIL };
enum { JOURNAL_BLOCK = 1 << 20 };

/* The checksum of the format: zlib's CRC-32 (that of PNG and gzip), over n
 * bytes, continuing from c (0 to start).  Version 1 used FNV-1a, byte by
 * byte: 4x slower, and the largest cost of a journal of big results. */
static uint32_t sum(uint32_t c, const void *data, size_t n)
{
    const unsigned char *p = data;
    while (n > 0) { /* zlib takes an unsigned int */
        unsigned k = n > (1u << 30) ? 1u << 30 : (unsigned)n;
        c = (uint32_t)crc32(c, p, k);
        p += k;
        n -= k;
    }
    return c;
}

int tb__ckpt_header(tb_buf *b, const char *kind, const char *identity)
{
    size_t kl = strlen(kind), il = strlen(identity);
    if (kl > UINT32_MAX || il > UINT32_MAX)
        return TB_ERR_RANGE;
    int rc = tb_buf_append(b, magic, sizeof magic);
    rc |= tb_buf_pack_u32(b, VERSION);
    rc |= tb_buf_pack_u32(b, (uint32_t)kl) | tb_buf_append(b, kind, kl);
    rc |= tb_buf_pack_u32(b, (uint32_t)il) | tb_buf_append(b, identity, il);
    if (rc)
        return TB_ERR_NOMEM;
    return tb_buf_pack_u32(b, sum(0, b->data, b->len));
}

/* Write all of b to f, flush and fsync: 0 or an errno. */
static int put_synced(FILE *f, const tb_buf *b)
{
    if (b->len && fwrite(b->data, 1, b->len, f) != b->len)
        return errno ? errno : EIO;
    if (fflush(f) != 0)
        return errno ? errno : EIO;
    if (fsync(fileno(f)) != 0)
        return errno;
    return 0;
}

static char *tmp_name(const char *path)
{
    size_t n = strlen(path);
    char *t = malloc(n + 5);
    if (t) {
        memcpy(t, path, n);
        memcpy(t + n, ".tmp", 5);
    }
    return t;
}

/* Make a rename durable: fsync the directory that holds path (best effort). */
static void sync_dir(const char *path)
{
    char *d = strdup(path);
    if (!d)
        return;
    char *slash = strrchr(d, '/');
    const char *dir = ".";
    if (slash == d)
        dir = "/";
    else if (slash) {
        *slash = '\0';
        dir = d;
    }
    int fd = open(dir, O_RDONLY);
    if (fd >= 0) {
        fsync(fd);
        close(fd);
    }
    free(d);
}

static int writer_init(tb__ckpt_writer *w, const char *path, int snapshot)
{
    memset(w, 0, sizeof *w);
    w->path = strdup(path);
    w->snapshot = snapshot;
    tb_buf_init(&w->pending);
    return w->path ? TB_OK : TB_ERR_NOMEM;
}

static void writer_free(tb__ckpt_writer *w)
{
    if (w->f)
        fclose(w->f);
    free(w->path);
    tb_buf_free(&w->pending);
    memset(w, 0, sizeof *w);
}

int tb__ckpt_snapshot_open(tb__ckpt_writer *w, const char *path, const char *kind,
                           const char *identity, char *err, size_t errlen)
{
    TB_CHECK(writer_init(w, path, 1));
    char *tmp = tmp_name(path);
    int rc = tmp ? tb__ckpt_header(&w->pending, kind, identity) : TB_ERR_NOMEM;
    if (rc == TB_OK && !(w->f = fopen(tmp, "wb")))
        rc = tb__errf(err, errlen, TB_ERR_IO, "%s: cannot write: %s", tmp, strerror(errno));
    free(tmp);
    if (rc != TB_OK)
        writer_free(w);
    return rc;
}

/* A new journal: its header written atomically, then opened to append. */
static int journal_new(tb__ckpt_writer *w, const char *kind, const char *identity, char *err,
                       size_t errlen)
{
    tb_buf h;
    tb_buf_init(&h);
    char *tmp = tmp_name(w->path);
    int rc = tmp ? tb__ckpt_header(&h, kind, identity) : TB_ERR_NOMEM;
    FILE *f = NULL;
    if (rc == TB_OK && !(f = fopen(tmp, "wb")))
        rc = tb__errf(err, errlen, TB_ERR_IO, "%s: cannot write: %s", tmp, strerror(errno));
    int e = rc == TB_OK ? put_synced(f, &h) : 0;
    if (f && fclose(f) != 0 && !e)
        e = errno ? errno : EIO;
    if (rc == TB_OK && !e && rename(tmp, w->path) != 0)
        e = errno;
    if (rc == TB_OK && e) {
        remove(tmp);
        rc = tb__errf(err, errlen, TB_ERR_IO, "%s: cannot write: %s", w->path, strerror(e));
    }
    if (rc == TB_OK) {
        sync_dir(w->path);
        if (!(w->f = fopen(w->path, "ab")))
            rc = tb__errf(err, errlen, TB_ERR_IO, "%s: cannot write: %s", w->path,
                          strerror(errno));
    }
    free(tmp);
    tb_buf_free(&h);
    return rc;
}

/* An old journal continued: checked, its torn tail cut off. */
static int journal_continue(tb__ckpt_writer *w, const char *kind, const char *identity,
                            char *err, size_t errlen)
{
    tb__ckpt_reader r;
    TB_CHECK(tb__ckpt_read(&r, w->path, kind, identity, err, errlen));
    uint64_t key;
    const void *d;
    size_t n;
    int rc;
    while ((rc = tb__ckpt_next(&r, &key, &d, &n, err, errlen)) == 1)
        ;
    size_t good = r.len - r.torn;
    w->records = r.records;
    tb__ckpt_reader_free(&r);
    if (rc != TB_OK)
        return rc;
    if (truncate(w->path, (off_t)good) != 0 || !(w->f = fopen(w->path, "ab")))
        return tb__errf(err, errlen, TB_ERR_IO, "%s: cannot write: %s", w->path,
                        strerror(errno));
    return TB_OK;
}

int tb__ckpt_journal_open(tb__ckpt_writer *w, const char *path, const char *kind,
                          const char *identity, int append, char *err, size_t errlen)
{
    TB_CHECK(writer_init(w, path, 0));
    int rc = append ? journal_continue(w, kind, identity, err, errlen)
                    : journal_new(w, kind, identity, err, errlen);
    if (rc != TB_OK)
        writer_free(w);
    return rc;
}

int tb__ckpt_add(tb__ckpt_writer *w, uint64_t key, const void *data, size_t len)
{
    if (len > UINT32_MAX)
        return TB_ERR_RANGE;
    size_t at = w->pending.len;
    int rc = tb_buf_pack_u32(&w->pending, (uint32_t)len);
    rc |= tb_buf_pack_u64(&w->pending, key);
    rc |= tb_buf_append(&w->pending, data, len);
    if (rc == TB_OK)
        rc = tb_buf_pack_u32(&w->pending, sum(0, w->pending.data + at, w->pending.len - at));
    if (rc != TB_OK) {
        w->pending.len = at;
        return TB_ERR_NOMEM;
    }
    w->records++;
    /* A journal's records go on to the file as they come, a block at a
     * time (durable at the next tb__ckpt_sync): the buffer stays small
     * instead of growing, with copies, to all the records of an interval. */
    if (!w->snapshot && w->f && w->pending.len >= JOURNAL_BLOCK) {
        if (fwrite(w->pending.data, 1, w->pending.len, w->f) != w->pending.len ||
            fflush(w->f) != 0)
            return TB_ERR_IO;
        tb_buf_clear(&w->pending);
#if defined(__linux__)
        /* Start writing it to the disk now, without waiting: the next
         * fsync then finds little left to do (a journal of 23 MB spent 46
         * ms in its last fsync). */
        sync_file_range(fileno(w->f), 0, 0, SYNC_FILE_RANGE_WRITE);
#endif
    }
    return TB_OK;
}

int tb__ckpt_sync(tb__ckpt_writer *w, char *err, size_t errlen)
{
    if (!w->f || w->snapshot)
        return TB_ERR_STATE;
    if (w->pending.len == 0)
        return TB_OK;
    int e = put_synced(w->f, &w->pending);
    if (e)
        return tb__errf(err, errlen, TB_ERR_IO, "%s: cannot write: %s", w->path, strerror(e));
    tb_buf_clear(&w->pending);
    return TB_OK;
}

int tb__ckpt_close(tb__ckpt_writer *w, int commit, char *err, size_t errlen)
{
    if (!w->path)
        return TB_OK;
    int rc = TB_OK;
    if (!w->snapshot) {
        if (commit)
            rc = tb__ckpt_sync(w, err, errlen);
    } else {
        char *tmp = tmp_name(w->path);
        int e = commit ? put_synced(w->f, &w->pending) : 0;
        if (fclose(w->f) != 0 && !e)
            e = errno ? errno : EIO;
        w->f = NULL;
        if (commit && !e && tmp && rename(tmp, w->path) != 0)
            e = errno;
        if (!commit || e || !tmp) {
            if (tmp)
                remove(tmp);
            if (commit)
                rc = tb__errf(err, errlen, TB_ERR_IO, "%s: cannot write: %s", w->path,
                              strerror(e ? e : ENOMEM));
        } else {
            sync_dir(w->path);
        }
        free(tmp);
    }
    writer_free(w);
    return rc;
}

int tb__ckpt_rename(const char *tmp, const char *path, char *err, size_t errlen)
{
    if (rename(tmp, path) != 0)
        return tb__errf(err, errlen, TB_ERR_IO, "%s: cannot write: %s", path, strerror(errno));
    sync_dir(path);
    return TB_OK;
}

/* ---- reading ------------------------------------------------------------- */

const char *tb_checkpoint_resume_from(const char *resume, const char *ckpt)
{
    if (resume && ckpt && strcmp(resume, ckpt) == 0 && access(resume, F_OK) != 0 &&
        errno == ENOENT)
        return NULL;
    return resume;
}

static uint32_t get_u32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t get_u64(const unsigned char *p)
{
    return (uint64_t)get_u32(p) | (uint64_t)get_u32(p + 4) << 32;
}

/* A length-prefixed string of the header at *at: its bytes and length. */
static int get_str(const unsigned char *u, size_t len, size_t *at, const char **s, size_t *n)
{
    if (len - *at < 4)
        return 0;
    *n = get_u32(u + *at);
    *at += 4;
    if (len - *at < *n)
        return 0;
    *s = (const char *)u + *at;
    *at += *n;
    return 1;
}

int tb__ckpt_header_check(const char *path, const void *data, size_t len, const char *kind,
                          const char *identity, size_t *end, char *err, size_t errlen)
{
    const unsigned char *u = data;
    size_t at = sizeof magic;
    const char *k = NULL, *id = NULL;
    size_t kl = 0, il = 0;
    int rc = TB_OK;
    if (len < sizeof magic + 4 || memcmp(u, magic, sizeof magic) != 0) {
        rc = tb__errf(err, errlen, TB_ERR_PARSE, "%s: not a Tenbin checkpoint", path);
    } else if (get_u32(u + at) != VERSION) {
        rc = tb__errf(err, errlen, TB_ERR_PARSE,
                      "%s: a checkpoint of format version %u; this Tenbin reads version %d",
                      path, get_u32(u + at), VERSION);
    } else if (at += 4, !get_str(u, len, &at, &k, &kl) || !get_str(u, len, &at, &id, &il) ||
               len - at < 4) {
        rc = tb__errf(err, errlen, TB_ERR_PARSE, "%s: truncated in its header", path);
    } else if (get_u32(u + at) != sum(0, u, at)) {
        rc = tb__errf(err, errlen, TB_ERR_PARSE, "%s: its header is damaged", path);
    } else if (kl != strlen(kind) || memcmp(k, kind, kl) != 0) {
        rc = tb__errf(err, errlen, TB_ERR_INVALID, "%s: a checkpoint of %.*s, not of %s", path,
                      (int)(kl > 64 ? 64 : kl), k, kind);
    } else if (il != strlen(identity) || memcmp(id, identity, il) != 0) {
        rc = tb__errf(err, errlen, TB_ERR_INVALID,
                      "%s: a checkpoint of another run (%.*s), not of this one (%s)", path,
                      (int)(il > 200 ? 200 : il), id, identity);
    }
    if (rc == TB_OK)
        *end = at + 4;
    return rc;
}

int tb__ckpt_read(tb__ckpt_reader *r, const char *path, const char *kind, const char *identity,
                  char *err, size_t errlen)
{
    memset(r, 0, sizeof *r);
    r->path = path;
    char why[256];
    int rc = tb_read_file(path, SIZE_MAX, &r->data, &r->len, why, sizeof why);
    if (rc != TB_OK)
        return tb__errf(err, errlen, rc, "%s", why);
    size_t end = 0;
    rc = tb__ckpt_header_check(path, r->data, r->len, kind, identity, &end, err, errlen);
    if (rc != TB_OK) {
        tb__ckpt_reader_free(r);
        return rc;
    }
    r->at = end;
    return TB_OK;
}

void tb__ckpt_record_head(unsigned char *head, uint64_t key, uint32_t len)
{
    for (int i = 0; i < 4; i++)
        head[i] = (unsigned char)(len >> (8 * i));
    for (int i = 0; i < 8; i++)
        head[4 + i] = (unsigned char)(key >> (8 * i));
}

void tb__ckpt_record_tail(unsigned char *tail, const unsigned char *head, const void *data,
                          size_t len)
{
    uint32_t h = sum(sum(0, head, REC_HEAD), data, len);
    for (int i = 0; i < 4; i++)
        tail[i] = (unsigned char)(h >> (8 * i));
}

size_t tb__ckpt_record_len(const unsigned char *head) { return get_u32(head); }

int tb__ckpt_record_check(const void *rec, size_t size, uint64_t *key, size_t *len)
{
    const unsigned char *p = rec;
    if (size < REC_HEAD + REC_TAIL || get_u32(p) != size - REC_HEAD - REC_TAIL)
        return 0;
    size_t n = size - REC_HEAD - REC_TAIL;
    if (get_u32(p + REC_HEAD + n) != sum(0, p, REC_HEAD + n))
        return 0;
    *key = get_u64(p + 4);
    *len = n;
    return 1;
}

int tb__ckpt_next(tb__ckpt_reader *r, uint64_t *key, const void **data, size_t *len, char *err,
                  size_t errlen)
{
    if (r->at == r->len)
        return 0;
    size_t left = r->len - r->at;
    const unsigned char *p = (const unsigned char *)r->data + r->at;
    size_t n = left >= REC_HEAD ? get_u32(p) : 0;
    if (left < REC_HEAD || left - REC_HEAD < n || left - REC_HEAD - n < REC_TAIL) {
        r->torn = left; /* cut short by a kill while it was written */
        return 0;
    }
    size_t size = REC_HEAD + n + REC_TAIL;
    if (get_u32(p + REC_HEAD + n) != sum(0, p, REC_HEAD + n)) {
        if (size == left) {
            r->torn = left;
            return 0;
        }
        return tb__errf(err, errlen, TB_ERR_PARSE,
                        "%s: record %" PRIu64 " (at byte %zu) is damaged: the file was changed "
                        "or its disk failed",
                        r->path, r->records + 1, r->at);
    }
    *key = get_u64(p + 4);
    *data = p + REC_HEAD;
    *len = n;
    r->at += size;
    r->records++;
    return 1;
}

void tb__ckpt_reader_free(tb__ckpt_reader *r)
{
    free(r->data);
    r->data = NULL;
    r->len = r->at = 0;
}
