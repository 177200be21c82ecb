/*
 * launch.c - the emulator's launcher: the coordinator's listening socket, the
 * MPI launcher started with the emulation library preloaded into every rank,
 * and stopping all of it (the launcher, its ranks and whatever they started).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "emu/coord.h"
#include "tenbin/config.h"

/* Listen on `addr` (a name or a literal), on a port the kernel picks; `to`
 * gets what the ranks connect to, "HOST:PORT" ("[HOST]:PORT" for IPv6).
 * Returns the socket, or -1 with errno set (EADDRNOTAVAIL for a name that
 * does not resolve). */
int tb__emu_listen_on(const char *addr, char *to, size_t n)
{
    struct addrinfo hints = {0}, *res = NULL;
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    if (getaddrinfo(addr, "0", &hints, &res) != 0) {
        errno = EADDRNOTAVAIL;
        return -1;
    }
    int fd = -1, e = EADDRNOTAVAIL;
    for (struct addrinfo *a = res; a && fd < 0; a = a->ai_next) {
        fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
        if (fd < 0) {
            e = errno;
            continue;
        }
        struct sockaddr_storage ss;
        socklen_t len = sizeof ss;
        char host[NI_MAXHOST], port[NI_MAXSERV];
        if (bind(fd, a->ai_addr, a->ai_addrlen) != 0 || listen(fd, 1024) != 0 ||
            getsockname(fd, (struct sockaddr *)&ss, &len) != 0 ||
            getnameinfo((struct sockaddr *)&ss, len, host, sizeof host, port, sizeof port,
                        NI_NUMERICHOST | NI_NUMERICSERV) != 0) {
            e = errno;
            close(fd);
            fd = -1;
            continue;
        }
        snprintf(to, n, strchr(host, ':') ? "[%s]:%s" : "%s:%s", host, port);
    }
    freeaddrinfo(res);
    if (fd < 0)
        errno = e;
    return fd;
}

pid_t tb__emu_launch(const tb_emu_opts *o, char *const argv[], const char *coord_at,
                     const char *platform, const char *shm_env, int *exec_errno)
{
    *exec_errno = 0;
    char np[32], coord_env[128 + NI_MAXHOST], seed[32];
    snprintf(np, sizeof np, "%d", o->ranks);
    snprintf(coord_env, sizeof coord_env, "TENBIN_EMU_COORD=%s", coord_at);
    snprintf(seed, sizeof seed, "TENBIN_EMU_SEED=%llu", (unsigned long long)o->seed);
    size_t plen = strlen(platform) + 32, llen = strlen(o->library) + 32;
    char *plat_env = malloc(plen), *pre_env = malloc(llen);
    size_t nargs = 0;
    while (argv[nargs])
        nargs++;
    char **av = calloc(nargs + 32, sizeof *av);
    if (!plat_env || !pre_env || !av) {
        free(plat_env);
        free(pre_env);
        free(av);
        return -1;
    }
    snprintf(plat_env, plen, "TENBIN_EMU_PLATFORM=%s", platform);
    snprintf(pre_env, llen, "LD_PRELOAD=%s", o->library);
    const char *mpiexec = o->mpiexec ? o->mpiexec : TENBIN_MPIEXEC;
    size_t k = 0;
    av[k++] = (char *)mpiexec;
    av[k++] = "-n";
    av[k++] = np;
    /* The emulation library's knobs, for ranks on other nodes too. */
    char knob[2][96];
    const char *knobs[2] = {"TENBIN_EMU_SLEEP_MAX", "TENBIN_EMU_COPY_MIN"};
    for (int i = 0; i < 2; i++) {
        const char *v = getenv(knobs[i]);
        knob[i][0] = 0;
        if (v && *v && strlen(v) < 64)
            snprintf(knob[i], sizeof knob[i], "%s=%s", knobs[i], v);
    }
    const char *envs[] = {coord_env,
                          plat_env,
                          seed,
                          pre_env,
                          o->trace ? "TENBIN_EMU_TRACE=1" : NULL,
                          knob[0][0] ? knob[0] : NULL,
                          knob[1][0] ? knob[1] : NULL,
                          shm_env};
    for (size_t i = 0; i < sizeof envs / sizeof envs[0]; i++) {
        if (!envs[i])
            continue;
        if (o->openmpi) {
            av[k++] = "-x";
            av[k++] = (char *)envs[i];
        } else {
            /* MPICH: -genv NAME VALUE; split at '=' in a copy. */
            char *copy = strdup(envs[i]);
            if (!copy)
                return -1;
            char *eq = strchr(copy, '=');
            *eq = 0;
            av[k++] = "-genv";
            av[k++] = copy;
            av[k++] = eq + 1;
        }
    }
    for (size_t i = 0; i < nargs; i++)
        av[k++] = argv[i];
    av[k] = NULL;
    fflush(stdout);
    fflush(stderr);
    /* The child tells why exec failed through a pipe that a successful exec
     * closes, so the failure is the caller's one line. */
    int ep[2];
    if (pipe2(ep, O_CLOEXEC) != 0)
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        close(ep[0]);
        setpgid(0, 0);
        execvp(mpiexec, av);
        int e = errno;
        if (write(ep[1], &e, sizeof e) < 0)
            _exit(127);
        _exit(127);
    }
    close(ep[1]);
    if (pid > 0) {
        setpgid(pid, pid);
        int e = 0;
        ssize_t got;
        do
            got = read(ep[0], &e, sizeof e);
        while (got < 0 && errno == EINTR);
        if (got == (ssize_t)sizeof e) {
            *exec_errno = e;
            waitpid(pid, NULL, 0);
            pid = -1;
        }
    }
    close(ep[0]);
    free(plat_env);
    free(pre_env);
    free(av);
    return pid;
}

/* Signal every descendant of root and its process group (a launcher puts
 * each rank in a group of its own; a rank that has not said hello, e.g.
 * one still in a wrapper script, is known only as a descendant).  Linux's
 * /proc; without it, nothing. */
static void kill_descendants(pid_t root, int sig)
{
    DIR *d = opendir("/proc");
    if (!d)
        return;
    size_t n = 0, cap = 0;
    pid_t(*pp)[3] = NULL; /* pid, parent, group */
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        char *end;
        long pid = strtol(e->d_name, &end, 10);
        if (*end || pid <= 0)
            continue;
        char path[64], line[512];
        snprintf(path, sizeof path, "/proc/%ld/stat", pid);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        size_t len = fread(line, 1, sizeof line - 1, f);
        fclose(f);
        line[len] = 0;
        const char *rp = strrchr(line, ')'); /* the name may hold spaces */
        int ppid, pgid;
        char st;
        if (!rp || sscanf(rp + 1, " %c %d %d", &st, &ppid, &pgid) != 3)
            continue;
        if (n == cap) {
            size_t nc = cap ? 2 * cap : 256;
            void *g = realloc(pp, nc * sizeof *pp);
            if (!g)
                break;
            pp = g;
            cap = nc;
        }
        pp[n][0] = (pid_t)pid;
        pp[n][1] = (pid_t)ppid;
        pp[n][2] = (pid_t)pgid;
        n++;
    }
    closedir(d);
    /* Breadth first from root: mark, then signal (children before their
     * parent could reap them and their pids be reused is not a concern
     * here: a parent that reaps is not stopped yet). */
    unsigned char *in = calloc(n ? n : 1, 1);
    int grew = 1;
    while (in && grew) {
        grew = 0;
        for (size_t i = 0; i < n; i++) {
            if (in[i])
                continue;
            int parent_in = pp[i][1] == root;
            for (size_t k = 0; !parent_in && k < n; k++)
                parent_in = in[k] && pp[k][0] == pp[i][1];
            if (parent_in) {
                in[i] = 1;
                grew = 1;
            }
        }
    }
    for (size_t i = 0; in && i < n; i++)
        if (in[i]) {
            if (pp[i][2] > 1 && pp[i][2] != getpgrp())
                kill(-pp[i][2], sig);
            kill(pp[i][0], sig);
        }
    free(in);
    free(pp);
}

void tb__emu_kill_all(coord *c, pid_t child, int sig)
{
    if (child > 0) {
        kill_descendants(child, sig);
        kill(-child, sig);
        kill(child, sig);
    }
    for (int i = 0; i < c->P; i++)
        if (c->r[i].hello && !c->r[i].done && c->r[i].pid > 0)
            kill(c->r[i].pid, sig);
}

/* Wait for the launcher to end after kill_all, escalating to SIGKILL. */
int tb__emu_reap(coord *c, pid_t child)
{
    int status = 0;
    /* 5 s: a launcher stopping hundreds of ranks on a loaded machine is
     * slow, and SIGKILL would leave it no chance to stop them itself. */
    for (int i = 0; i < 250; i++) {
        pid_t w = waitpid(child, &status, WNOHANG);
        if (w == child)
            return status;
        struct timespec ts = {0, 20000000};
        nanosleep(&ts, NULL);
    }
    tb__emu_kill_all(c, child, SIGKILL);
    waitpid(child, &status, 0);
    return status;
}
