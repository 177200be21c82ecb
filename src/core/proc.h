/*
 * proc.h - what the library needs to know about programs it starts (flow
 * run's task commands, the emulator's MPI program).
 */
#ifndef TB_CORE_PROC_H
#define TB_CORE_PROC_H

/* Whether exec can run prog: a path (with a '/') to an executable file, or
 * a name found as a regular executable file in a PATH directory (an empty
 * entry is the current directory; no PATH: /usr/local/bin:/usr/bin:/bin, as
 * execvp).  Looked up before the work, so that a wrong program is one clear
 * line instead of the failure of every task that runs it. */
int tb__runnable(const char *prog);

#endif /* TB_CORE_PROC_H */
