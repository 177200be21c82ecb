/*
 * fuzz_emu_frames.c - the frames the emulator's coordinator reads from the
 * ranks of an emulated program (src/emu/decide.c, proto.h: HELLO, REPORT,
 * FINAL, FAIL, BELL), fed to it as 4 ranks' connections and a stray would
 * bring them (tb__emu_coord_feed), with the coordinator's decisions and its
 * deadlock check after each.  They come from Tenbin's own library inside
 * the user's program, but that program may write over them: a frame that
 * makes no sense must end the run with a line, never crash the coordinator.
 *
 * An input is a sequence of records: u8 connection (mod 5), u16 length
 * (little endian), the frame (u8 type, then its fields).
 */
#define _GNU_SOURCE /* memfd_create (fuzz_common.h) */
#include "emu/proto.h"
#include "fuzz_common.h"

FUZZ_QUIET_INIT

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 1 << 16)
        return 0;
    char err[600] = "";
    int rc = tb__emu_coord_feed(4, data, size, err, sizeof err);
    fuzz_report(rc, err);
    if (rc != TB_OK && (err[0] == '\0' || strchr(err, '\n') != NULL))
        abort(); /* an error says why, on one line */
    return 0;
}
