/*
 * fuzz_bnb_history.c - the history file of `tenbin bnb replay`
 * (tools/bnb_history.c): {"problem": ..., "final": ..., "history": [...]}
 * as `tenbin bnb --history` writes it, checked as deeply as the live view's
 * page relies on it.  A history read must give three texts that parse as
 * JSON (two objects, and the inside of an array of npoints objects), and
 * those texts put together again as a file must read to the same texts.
 * An error leaves nothing behind and says why in one line that names the
 * file.
 */
#define _GNU_SOURCE /* memfd_create (fuzz_common.h) */
#include <cjson/cJSON.h>

#include "../../tools/bnb_history.h"
#include "fuzz_common.h"

FUZZ_QUIET_INIT

static const char name[] = "history.json";

/* text parses as JSON of the given type (an array of n items, if n >= 0). */
static void must_parse(const char *text, int type, long n)
{
    cJSON *v = cJSON_Parse(text);
    if (v == NULL || (v->type & 0xff) != type ||
        (n >= 0 && cJSON_GetArraySize(v) != (int)n)) {
        fprintf(stderr, "fuzz: a re-printed text does not parse as promised: %.200s\n", text);
        abort();
    }
    cJSON_Delete(v);
}

static void round_trip(const tb_bnb_history *h)
{
    tb_buf b = TB_BUF_INIT;
    if (tb_buf_printf(&b, "{\"problem\": %s, \"final\": %s, \"history\": [%s]}\n", h->problem,
                      h->final, h->points) != TB_OK)
        abort();
    tb_bnb_history again;
    char err[512] = "";
    int rc = tb_bnb_history_read((const char *)b.data, b.len, name, &again, err, sizeof err);
    if (rc != TB_OK || again.npoints != h->npoints || strcmp(again.problem, h->problem) != 0 ||
        strcmp(again.final, h->final) != 0 || strcmp(again.points, h->points) != 0) {
        fprintf(stderr, "fuzz: the history put together again reads differently: %s\n", err);
        abort();
    }
    tb_bnb_history_free(&again);
    tb_buf_free(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > FUZZ_MAX)
        return 0;
    tb_bnb_history h;
    memset(&h, 0xa5, sizeof h); /* the reader must set it either way */
    char err[512] = "";
    int rc = tb_bnb_history_read((const char *)data, size, name, &h, err, sizeof err);
    fuzz_report(rc, err);
    if (rc == TB_OK) {
        if (h.problem == NULL || h.final == NULL || h.points == NULL ||
            h.npoints > size / 2)
            abort();
        must_parse(h.problem, cJSON_Object, -1);
        must_parse(h.final, cJSON_Object, -1);
        tb_buf a = TB_BUF_INIT;
        if (tb_buf_printf(&a, "[%s]", h.points) != TB_OK || tb_buf_append(&a, "", 1) != TB_OK)
            abort();
        must_parse((const char *)a.data, cJSON_Array, (long)h.npoints);
        tb_buf_free(&a);
        round_trip(&h);
        tb_bnb_history_free(&h);
    } else if (err[0] == '\0' || strchr(err, '\n') != NULL ||
               strncmp(err, name, sizeof name - 1) != 0) {
        abort(); /* an error says why, in one line naming the file */
    } else if (h.problem != NULL || h.final != NULL || h.points != NULL || h.npoints != 0) {
        abort(); /* and leaves nothing behind */
    }
    return 0;
}
