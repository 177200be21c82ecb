/*
 * emu_check.c - `tenbin emu --check PROGRAM`: before a run, which MPI
 * functions the program imports that the emulator does not model.
 *
 * The program's ELF objects are read with libelf: the executable (or a
 * script's interpreter) and the libraries the dynamic loader would load for
 * it (`ld.so --list`, which loads nothing and runs nothing of the program).
 * Each object's undefined dynamic symbols named MPI_* or PMPI_* (C) or
 * mpi_*_ (Fortran) are what it calls in MPI.  Objects that define MPI
 * functions are the MPI library and its bindings, and are skipped.  A
 * Python program loads mpi4py's MPI module at run time; it is read too,
 * where the interpreter finds it, and said to bind all of MPI.
 *
 * Each name is modelled (libtenbin-emu.so defines it, and it is not on the
 * list of functions that stop the run), not emulated (on that list),
 * local (it does not communicate) or unknown: emu/unmodelled.h.
 */
#define _GNU_SOURCE
#include "tenbin/core.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../src/emu/unmodelled.h"
#include "cli.h"

extern char **environ;

static const char *const cmd = "emu --check";

enum { MODELLED, LOCAL, REFUSED, UNKNOWN, NCLASS };

typedef struct imp {
    char *name;  /* C name */
    size_t from; /* index of the first object that imports it */
    int cls;
} imp;

typedef struct check {
    char **objs; /* paths of the objects read */
    size_t nobjs, capobjs;
    imp *imps;
    size_t nimps, capimps;
    char **emu; /* MPI functions libtenbin-emu.so defines */
    size_t nemu, capemu;
    const char *bindings; /* "mpi4py" or NULL */
    size_t bindings_obj;
    int skipped; /* objects of the MPI library skipped */
    int oom;
} check;

static int push_str(char ***v, size_t *n, size_t *cap, const char *s)
{
    if (tb_grow(v, cap, *n + 1, sizeof **v, 16) != TB_OK)
        return TB_ERR_NOMEM;
    if (!((*v)[*n] = strdup(s)))
        return TB_ERR_NOMEM;
    (*n)++;
    return TB_OK;
}

static void free_strs(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

static void check_free(check *c)
{
    free_strs(c->objs, c->nobjs);
    free_strs(c->emu, c->nemu);
    for (size_t i = 0; i < c->nimps; i++)
        free(c->imps[i].name);
    free(c->imps);
}

/* The C name of MPI symbol `sym` into out (size n), or 0 if it is none:
 * MPI_X and PMPI_X are MPI_X; Fortran's mpi_x_ (or MPI_X_, pmpi_x__) is
 * MPI_X with the case of C (MPI_ and a capital, then lower case). */
static int c_name(const char *sym, char *out, size_t n)
{
    if (sym[0] == 'P' || sym[0] == 'p')
        sym++;
    if (strncasecmp(sym, "mpi_", 4) != 0 || !sym[4] || n < 8)
        return 0;
    if (strncmp(sym, "MPI_", 4) == 0 && isupper((unsigned char)sym[4]) &&
        islower((unsigned char)sym[5])) {
        snprintf(out, n, "%s", sym);
        return 1;
    }
    /* Fortran (or an all-capital constant such as MPI_DUP_FN). */
    size_t len = strlen(sym);
    int fortran = sym[len - 1] == '_';
    while (len > 4 && sym[len - 1] == '_')
        len--;
    if (len >= n)
        return 0;
    memcpy(out, sym, len);
    out[len] = 0;
    if (!fortran)
        return 1;
    out[0] = 'M', out[1] = 'P', out[2] = 'I';
    for (size_t i = 4; i < len; i++)
        out[i] = (char)(i == 4 ? toupper((unsigned char)out[i]) : tolower((unsigned char)out[i]));
    /* MPI_T_ and the f08 suffixes keep their capitals only in C. */
    if (strncmp(out, "MPI_T_", 6) == 0 || strncmp(out, "MPI_t_", 6) == 0)
        out[4] = 'T';
    return 1;
}

/* Calls fn(ctx, name, defined) for each dynamic symbol of the ELF file at
 * path that names a function or object; TB_ERR_PARSE if it is not ELF. */
static int each_symbol(const char *path, void (*fn)(void *, const char *, int), void *ctx,
                       char *interp, size_t ninterp)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return TB_ERR_IO;
    Elf *e = elf_begin(fd, ELF_C_READ, NULL);
    if (!e || elf_kind(e) != ELF_K_ELF) {
        if (e)
            elf_end(e);
        close(fd);
        return TB_ERR_PARSE;
    }
    if (interp) {
        interp[0] = 0;
        size_t nph = 0;
        if (elf_getphdrnum(e, &nph) == 0) {
            for (size_t i = 0; i < nph; i++) {
                GElf_Phdr ph;
                if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_INTERP && ph.p_filesz > 0 &&
                    ph.p_filesz < ninterp &&
                    pread(fd, interp, ph.p_filesz, (off_t)ph.p_offset) == (ssize_t)ph.p_filesz)
                    interp[ph.p_filesz - 1] = 0;
            }
        }
    }
    Elf_Scn *scn = NULL;
    while ((scn = elf_nextscn(e, scn))) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM || sh.sh_entsize == 0)
            continue;
        Elf_Data *d = elf_getdata(scn, NULL);
        size_t n = d ? sh.sh_size / sh.sh_entsize : 0;
        for (size_t i = 0; i < n; i++) {
            GElf_Sym s;
            if (!gelf_getsym(d, (int)i, &s))
                continue;
            const char *name = elf_strptr(e, sh.sh_link, s.st_name);
            int type = GELF_ST_TYPE(s.st_info);
            if (name && *name && (type == STT_FUNC || type == STT_OBJECT || type == STT_NOTYPE))
                fn(ctx, name, s.st_shndx != SHN_UNDEF);
        }
    }
    elf_end(e);
    close(fd);
    return TB_OK;
}

/* ---- one object ---- */

typedef struct scan {
    char **names;
    size_t n, cap;
    int defines_mpi;
    int oom;
} scan;

static void scan_sym(void *ctx, const char *sym, int defined)
{
    scan *s = ctx;
    char name[128];
    if (!c_name(sym, name, sizeof name))
        return;
    if (defined) {
        s->defines_mpi = 1;
        return;
    }
    if (push_str(&s->names, &s->n, &s->cap, name) != TB_OK)
        s->oom = 1;
}

static void emu_sym(void *ctx, const char *sym, int defined)
{
    check *c = ctx;
    if (defined && strncmp(sym, "MPI_", 4) == 0 && push_str(&c->emu, &c->nemu, &c->capemu, sym))
        c->oom = 1;
}

static int add_import(check *c, const char *name, size_t from)
{
    for (size_t i = 0; i < c->nimps; i++)
        if (strcmp(c->imps[i].name, name) == 0)
            return TB_OK;
    if (tb_grow(&c->imps, &c->capimps, c->nimps + 1, sizeof *c->imps, 64) != TB_OK)
        return TB_ERR_NOMEM;
    char *dup = strdup(name);
    if (!dup)
        return TB_ERR_NOMEM;
    c->imps[c->nimps++] = (imp){dup, from, UNKNOWN};
    return TB_OK;
}

/* Reads the object at path; its imports join c's unless it is part of MPI
 * (it defines MPI functions) and `always` is 0. */
static int read_object(check *c, const char *path, int always, char *interp, size_t ninterp)
{
    scan s = {0};
    int rc = each_symbol(path, scan_sym, &s, interp, ninterp);
    if (rc == TB_OK && s.oom)
        rc = TB_ERR_NOMEM;
    if (rc == TB_OK && s.defines_mpi && !always) {
        c->skipped++;
    } else if (rc == TB_OK) {
        rc = push_str(&c->objs, &c->nobjs, &c->capobjs, path);
        for (size_t i = 0; rc == TB_OK && i < s.n; i++)
            rc = add_import(c, s.names[i], c->nobjs - 1);
    }
    free_strs(s.names, s.n);
    return rc;
}

/* ---- finding things ---- */

/* Runs argv, its standard output into *out (NUL-terminated); its exit
 * status, or -1. */
static int run_capture(char *const argv[], tb_buf *out)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0)
        return -1;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, p[1], 1);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    pid_t pid;
    int rc = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(p[1]);
    if (rc != 0) {
        close(p[0]);
        return -1;
    }
    char buf[4096];
    ssize_t k;
    int oom = 0;
    while ((k = read(p[0], buf, sizeof buf)) > 0 || (k < 0 && errno == EINTR))
        if (k > 0 && tb_buf_append(out, buf, (size_t)k) != TB_OK)
            oom = 1;
    close(p[0]);
    int st;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    if (oom || tb_buf_append(out, "", 1) != TB_OK)
        return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The libraries the dynamic loader `interp` loads for exe ("ld.so --list"):
 * each read as an object. */
static int read_libraries(check *c, const char *interp, const char *exe)
{
    tb_buf out = TB_BUF_INIT;
    char *argv[] = {(char *)interp, "--list", (char *)exe, NULL};
    int st = run_capture(argv, &out);
    if (st != 0) {
        tb_buf_free(&out);
        tb_cli_error(cmd, "%s: its dynamic loader %s could not list its libraries", exe, interp);
        return TB_ERR_IO;
    }
    int rc = TB_OK;
    for (char *line = (char *)out.data, *next; rc == TB_OK && line && *line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = 0;
        char *arrow = strstr(line, "=> ");
        char *path = arrow ? arrow + 3 : line + strspn(line, " \t");
        if (strncmp(path, "not found", 9) == 0) {
            tb_cli_error(cmd, "%s: a library it needs is not found (%s)", exe,
                         line + strspn(line, " \t"));
            rc = TB_ERR_IO;
            break;
        }
        char *end = strstr(path, " (");
        if (end)
            *end = 0;
        if (path[0] != '/' || strcmp(path, interp) == 0)
            continue; /* linux-vdso, the loader itself */
        rc = read_object(c, path, 0, NULL, 0);
        if (rc == TB_ERR_IO || rc == TB_ERR_PARSE)
            rc = TB_OK; /* not readable: the loader says it is there; its imports are unknown */
    }
    tb_buf_free(&out);
    return rc;
}

/* For a Python interpreter, where it finds mpi4py's MPI module (without
 * importing it: that would start MPI). */
static void read_mpi4py(check *c, const char *python)
{
    tb_buf out = TB_BUF_INIT;
    char *argv[] = {(char *)python, "-c",
                    "import importlib.util as u\n"
                    "try:\n s = u.find_spec('mpi4py.MPI')\n"
                    "except Exception:\n s = None\n"
                    "print(s.origin if s and s.origin else '')",
                    NULL};
    if (run_capture(argv, &out) == 0) {
        char *path = (char *)out.data;
        path[strcspn(path, "\n")] = 0;
        if (path[0] == '/' && read_object(c, path, 1, NULL, 0) == TB_OK) {
            c->bindings = "mpi4py";
            c->bindings_obj = c->nobjs - 1;
        }
    }
    tb_buf_free(&out);
}

/* ---- report ---- */

static const char *const class_key[NCLASS] = {"modelled", "local", "not_emulated", "unknown"};

static int by_name(const void *a, const void *b)
{
    return strcmp(((const imp *)a)->name, ((const imp *)b)->name);
}

/* The names of class cls, by the object that imports them, wrapped. */
static void print_list(const check *c, int cls, const char *title)
{
    size_t n = 0;
    for (size_t i = 0; i < c->nimps; i++)
        n += c->imps[i].cls == cls;
    if (n == 0)
        return;
    printf("  %s:\n", title);
    for (size_t o = 0; o < c->nobjs; o++) {
        int col = 0;
        for (size_t i = 0; i < c->nimps; i++) {
            if (c->imps[i].cls != cls || c->imps[i].from != o)
                continue;
            if (col == 0)
                col = printf("    in %s:\n     ", c->objs[o]) - (int)strlen(c->objs[o]) - 9;
            if (col + 1 + (int)strlen(c->imps[i].name) > 100) {
                printf("\n     ");
                col = 5;
            }
            col += printf(" %s", c->imps[i].name);
        }
        if (col)
            printf("\n");
    }
}

static int print_json(const check *c, const char *program, int ok)
{
    tb_buf b = TB_BUF_INIT;
    int rc = tb_buf_printf(&b, "{\"program\":");
    rc |= tb_buf_json_string(&b, program);
    rc |= tb_buf_printf(&b, ",\"emulable\":%s,\"bindings\":", ok ? "true" : "false");
    rc |= c->bindings ? tb_buf_json_string(&b, c->bindings) : tb_buf_printf(&b, "null");
    rc |= tb_buf_printf(&b, ",\"objects\":[");
    for (size_t i = 0; i < c->nobjs; i++) {
        rc |= tb_buf_printf(&b, i ? "," : "");
        rc |= tb_buf_json_string(&b, c->objs[i]);
    }
    rc |= tb_buf_printf(&b, "]");
    for (int k = 0; k < NCLASS; k++) {
        rc |= tb_buf_printf(&b, ",\"%s\":[", class_key[k]);
        int first = 1;
        for (size_t i = 0; i < c->nimps; i++) {
            if (c->imps[i].cls != k)
                continue;
            rc |= tb_buf_printf(&b, first ? "" : ",");
            rc |= tb_buf_json_string(&b, c->imps[i].name);
            first = 0;
        }
        rc |= tb_buf_printf(&b, "]");
    }
    rc |= tb_buf_printf(&b, "}\n");
    if (rc == TB_OK)
        fwrite(b.data, 1, b.len, stdout);
    tb_buf_free(&b);
    return rc;
}

int tb_cli_emu_check(char **argv, const char *lib, int json)
{
    char exe[PATH_MAX], script[PATH_MAX] = "", interp[PATH_MAX];
    if (!tb_which(argv[0], exe, sizeof exe)) {
        tb_cli_error(cmd, "%s: no such program (or not executable)", argv[0]);
        return TB_EXIT_USAGE;
    }
    if (elf_version(EV_CURRENT) == EV_NONE) {
        tb_cli_error(cmd, "libelf: %s", elf_errmsg(-1));
        return TB_EXIT_FAIL;
    }
    /* A script: its interpreter is the program that imports MPI. */
    FILE *f = fopen(exe, "r");
    char line[PATH_MAX] = "";
    if (f) {
        if (!fgets(line, sizeof line, f))
            line[0] = 0;
        fclose(f);
    }
    if (line[0] == '#' && line[1] == '!') {
        snprintf(script, sizeof script, "%s", exe);
        char *w = line + 2 + strspn(line + 2, " \t");
        w[strcspn(w, " \t\r\n")] = 0;
        char *arg = w + strlen(w) + 1;
        if (strcmp(strrchr(w, '/') ? strrchr(w, '/') + 1 : w, "env") == 0) {
            arg += strspn(arg, " \t");
            arg[strcspn(arg, " \t\r\n")] = 0;
            w = arg;
        }
        if (!*w || !tb_which(w, exe, sizeof exe)) {
            tb_cli_error(cmd, "%s: its interpreter %s is not found", script, w);
            return TB_EXIT_FAIL;
        }
    }
    check c = {0};
    int rc = each_symbol(lib, emu_sym, &c, NULL, 0);
    if (rc != TB_OK || c.oom || c.nemu == 0) {
        tb_cli_error(cmd, "%s: cannot read the emulation library's functions", lib);
        check_free(&c);
        return TB_EXIT_FAIL;
    }
    rc = read_object(&c, exe, 1, interp, sizeof interp);
    if (rc == TB_ERR_PARSE) {
        tb_cli_error(cmd,
                     "%s: not an ELF executable or a script (the emulator preloads a library "
                     "into dynamically linked programs)",
                     exe);
        check_free(&c);
        return TB_EXIT_FAIL;
    }
    if (rc != TB_OK) {
        tb_cli_error(cmd, "%s: cannot read it: %s", exe, tb_strerror(rc));
        check_free(&c);
        return TB_EXIT_FAIL;
    }
    if (!interp[0]) {
        tb_cli_error(cmd,
                     "%s: statically linked: the emulator preloads a library into the "
                     "program, which only a dynamically linked one loads",
                     exe);
        check_free(&c);
        return TB_EXIT_FAIL;
    }
    rc = read_libraries(&c, interp, exe);
    const char *base = strrchr(exe, '/') ? strrchr(exe, '/') + 1 : exe;
    if (rc == TB_OK && strncmp(base, "python", 6) == 0)
        read_mpi4py(&c, exe);
    if (rc != TB_OK) {
        if (rc == TB_ERR_NOMEM)
            tb_cli_error(cmd, "out of memory");
        check_free(&c);
        return TB_EXIT_FAIL;
    }
    /* Classify. */
    static const char *const refused[] = {
#define TB_EMU_NAME(name) #name,
        TB_EMU_UNSUPPORTED(TB_EMU_NAME)
#undef TB_EMU_NAME
    };
    size_t count[NCLASS] = {0};
    for (size_t i = 0; i < c.nimps; i++) {
        imp *m = &c.imps[i];
        int cls = UNKNOWN;
        for (size_t k = 0; k < sizeof refused / sizeof *refused && cls == UNKNOWN; k++)
            if (strcmp(m->name, refused[k]) == 0)
                cls = REFUSED;
        for (size_t k = 0; k < c.nemu && cls == UNKNOWN; k++)
            if (strcmp(m->name, c.emu[k]) == 0)
                cls = MODELLED;
        if (cls == UNKNOWN && tb_emu_is_local(m->name))
            cls = LOCAL;
        m->cls = cls;
        count[cls]++;
    }
    qsort(c.imps, c.nimps, sizeof *c.imps, by_name);
    int ok = count[REFUSED] == 0 && count[UNKNOWN] == 0;
    const char *program = script[0] ? script : exe;
    int status = ok && c.nimps > 0 ? TB_EXIT_OK : TB_EXIT_FAIL;
    if (json) {
        rc = print_json(&c, program, ok && c.nimps > 0);
        check_free(&c);
        return rc == TB_OK ? status : TB_EXIT_FAIL;
    }
    printf("tenbin emu --check %s\n", program);
    printf("  read %zu object%s (%s%s), skipped %d of the MPI library\n", c.nobjs,
           c.nobjs == 1 ? "" : "s", exe, c.nobjs > 1 ? " and the libraries it loads" : "",
           c.skipped);
    if (c.bindings)
        printf("  %s binds all of MPI (%s): which of its functions the script calls is known "
               "only when it runs\n",
               c.bindings, c.objs[c.bindings_obj]);
    printf("  %zu MPI functions imported: %zu modelled, %zu local (they do not communicate: "
           "run as they are), %zu not emulated, %zu unknown to the emulator\n",
           c.nimps, count[MODELLED], count[LOCAL], count[REFUSED], count[UNKNOWN]);
    print_list(&c, REFUSED, "not emulated (the run stops with one line at the first call of one)");
    print_list(&c, UNKNOWN,
               "unknown to the emulator (they would run unseen by the virtual "
               "clocks: the prediction could be wrong)");
    if (c.nimps == 0)
        printf("no MPI function imported: not an MPI program, or it loads MPI in a way that "
               "cannot be read before it runs\n");
    else if (ok)
        printf("can be emulated: every MPI function it imports is modelled or local\n");
    else
        printf("can be emulated only if it never calls the functions above\n");
    check_free(&c);
    return status;
}
