/*
 * ckpt.h - the one checkpoint file format (internal): what every mechanism
 * writes to stop a run and resume it later (--checkpoint, --resume).
 *
 *   "TENBINCK", u32 version, u32 + bytes kind ("mw-journal", ...),
 *   u32 + bytes identity (what the run was: the program and its input),
 *   u32 CRC-32 of all of that (zlib's: that of PNG and gzip);
 *   then records: u32 len, u64 key, len bytes, u32 CRC-32 of the record.
 *
 * Two ways to write one:
 *   - a journal: the header once (written atomically), then records appended
 *     and made durable by tb__ckpt_sync (fsync); a record torn by a kill is
 *     the file's last one, and a reader drops it;
 *   - a snapshot: the whole file to PATH.tmp, fsync, rename: a reader sees
 *     the old snapshot or the new one, never a mix.
 * A reader refuses, with one line naming the file, what is not a Tenbin
 * checkpoint, a checkpoint of another kind or of another run (identity),
 * and a record damaged anywhere but at the very end.
 */
#ifndef TB_CORE_CKPT_H
#define TB_CORE_CKPT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "tenbin/core.h"

typedef struct tb__ckpt_writer {
    FILE *f;
    char *path;  /* the file; a snapshot writes path.tmp until it is closed */
    int snapshot;
    tb_buf pending; /* records not written yet */
    uint64_t records;
} tb__ckpt_writer;

/* A new journal at path (any old file there is replaced), or, with
 * `append`, the journal already there (checked as tb__ckpt_read would, its
 * torn last record cut off) continued.  err gets one line on failure. */
int tb__ckpt_journal_open(tb__ckpt_writer *w, const char *path, const char *kind,
                          const char *identity, int append, char *err, size_t errlen);
/* A snapshot to be written at path when closed. */
int tb__ckpt_snapshot_open(tb__ckpt_writer *w, const char *path, const char *kind,
                           const char *identity, char *err, size_t errlen);
/* Add one record (kept in memory until tb__ckpt_sync or close). */
int tb__ckpt_add(tb__ckpt_writer *w, uint64_t key, const void *data, size_t len);
/* Journal: write what was added and fsync. */
int tb__ckpt_sync(tb__ckpt_writer *w, char *err, size_t errlen);
/* Journal: sync and close.  Snapshot: write, fsync, rename over path
 * (commit != 0), or drop the temporary file (commit == 0). */
int tb__ckpt_close(tb__ckpt_writer *w, int commit, char *err, size_t errlen);

typedef struct tb__ckpt_reader {
    char *data;
    size_t len, at;
    uint64_t records;
    size_t torn;   /* bytes of a torn last record that were dropped */
    const char *path;
} tb__ckpt_reader;

/* Read the checkpoint at path: its kind and identity must be these. */
int tb__ckpt_read(tb__ckpt_reader *r, const char *path, const char *kind, const char *identity,
                  char *err, size_t errlen);
/* The next record: 1 and its key and bytes (valid until tb__ckpt_reader_free),
 * 0 at the end, or an error with err set (a damaged record). */
int tb__ckpt_next(tb__ckpt_reader *r, uint64_t *key, const void **data, size_t *len, char *err,
                  size_t errlen);
void tb__ckpt_reader_free(tb__ckpt_reader *r);

/*
 * The pieces, for writers that put records in place themselves (several
 * ranks writing one file at their own offsets, src/redist/ckpt.c).
 */
enum { TB__CKPT_REC_HEAD = 12, TB__CKPT_REC_TAIL = 4 };
/* Append the header of a checkpoint of this kind and identity to b. */
int tb__ckpt_header(tb_buf *b, const char *kind, const char *identity);
/* Check a header at data[0..len) as tb__ckpt_read does; *end: where the
 * records begin.  path is for the message. */
int tb__ckpt_header_check(const char *path, const void *data, size_t len, const char *kind,
                          const char *identity, size_t *end, char *err, size_t errlen);
/* A record is head (TB__CKPT_REC_HEAD bytes: its length and key), its
 * bytes, and tail (TB__CKPT_REC_TAIL bytes: the checksum of head and bytes). */
void tb__ckpt_record_head(unsigned char *head, uint64_t key, uint32_t len);
void tb__ckpt_record_tail(unsigned char *tail, const unsigned char *head, const void *data,
                          size_t len);
/* A snapshot written (and synced) at tmp by its writers becomes path:
 * rename, then fsync the directory. */
int tb__ckpt_rename(const char *tmp, const char *path, char *err, size_t errlen);
/* 1 if rec[0..size) is exactly one whole, intact record (its key and the
 * length of its bytes out), else 0. */
int tb__ckpt_record_check(const void *rec, size_t size, uint64_t *key, size_t *len);
/* The length of a record's bytes, as its head (TB__CKPT_REC_HEAD bytes)
 * says: what to read next (unchecked until tb__ckpt_record_check). */
size_t tb__ckpt_record_len(const unsigned char *head);

#endif /* TB_CORE_CKPT_H */
