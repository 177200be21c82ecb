/*
 * ckpt.h - the one checkpoint file format (internal): what every mechanism
 * writes to stop a run and resume it later (--checkpoint, --resume).
 *
 *   "TENBINCK", u32 version, u32 + bytes kind ("mw-journal", ...),
 *   u32 + bytes identity (what the run was: the program and its input),
 *   u64 FNV-1a of all of that;
 *   then records: u32 len, u64 key, len bytes, u64 FNV-1a of the record.
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

/* What a run resumes from: resume, or NULL when there is none, or when it
 * is also the checkpoint to keep (ckpt) and no file is there yet -- the
 * first run of a job that may be requeued ("--checkpoint F --resume F"). */
const char *tb__ckpt_resume_from(const char *resume, const char *ckpt);

/* Read the checkpoint at path: its kind and identity must be these. */
int tb__ckpt_read(tb__ckpt_reader *r, const char *path, const char *kind, const char *identity,
                  char *err, size_t errlen);
/* The next record: 1 and its key and bytes (valid until tb__ckpt_reader_free),
 * 0 at the end, or an error with err set (a damaged record). */
int tb__ckpt_next(tb__ckpt_reader *r, uint64_t *key, const void **data, size_t *len, char *err,
                  size_t errlen);
void tb__ckpt_reader_free(tb__ckpt_reader *r);

#endif /* TB_CORE_CKPT_H */
