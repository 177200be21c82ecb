/*
 * unsupported.c - the communicating MPI calls the emulator does not model
 * (the list is in emu/unmodelled.h; `tenbin emu --check` reads it too).
 *
 * Each stops the run with one line naming it ("MPI_Comm_spawn is not
 * emulated") instead of letting it run unseen by the virtual clocks, which
 * would give a silently wrong prediction.  This file does not include mpi.h:
 * the functions never return, so their parameters do not matter, and one
 * macro covers every signature.
 */
#define EMU_API __attribute__((visibility("default")))

#include "emu/unmodelled.h" /* TB_EMU_UNSUPPORTED: the one list */

void tb__emu_unsupported(const char *name) __attribute__((noreturn));

#define TB_EMU_DEFINE(name)                                                                    \
    EMU_API void name(void);                                                                   \
    void name(void) { tb__emu_unsupported(#name); }
TB_EMU_UNSUPPORTED(TB_EMU_DEFINE)
