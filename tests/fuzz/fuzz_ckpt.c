/*
 * fuzz_ckpt.c - the reader of checkpoint files (tb__ckpt_read and
 * tb__ckpt_next, src/core/ckpt.c): what `--resume FILE` reads for mandel
 * (mw) and bnb.  The seeds are a journal of three records, the same cut in
 * its last record, and a snapshot without records.
 *
 * A file read must give records that lie within the file, then either the
 * end (a torn tail counted in `torn`, never past the file) or an error; an
 * error must say why in one line that names the file.
 */
#define _GNU_SOURCE /* memfd_create (fuzz_common.h) */
#include "core/ckpt.h"
#include "fuzz_common.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fuzz_quiet();
    return 0;
}

static void one_line_naming(const char *err, const char *path)
{
    if (err[0] == '\0' || strchr(err, '\n') != NULL || strncmp(err, path, strlen(path)) != 0)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > FUZZ_MAX)
        return 0;
    const char *path = fuzz_file(data, size);
    tb__ckpt_reader r;
    char err[512] = "";
    int rc = tb__ckpt_read(&r, path, "fuzz", "the run", err, sizeof err);
    fuzz_report(rc, err);
    if (rc != TB_OK) {
        if (rc != TB_ERR_PARSE && rc != TB_ERR_INVALID && rc != TB_ERR_IO && rc != TB_ERR_NOMEM)
            abort();
        one_line_naming(err, path);
        return 0;
    }
    uint64_t key;
    const void *d;
    size_t n;
    int k;
    const char *start = r.data, *end = r.data + r.len;
    while ((k = tb__ckpt_next(&r, &key, &d, &n, err, sizeof err)) == 1)
        if ((const char *)d < start || (const char *)d + n > end)
            abort();
    if (k < 0)
        one_line_naming(err, path);
    else if (r.torn > r.len || (r.torn == 0 && r.at != r.len))
        abort();
    tb__ckpt_reader_free(&r);
    return 0;
}
