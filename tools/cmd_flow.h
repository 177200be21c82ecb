/*
 * cmd_flow.h - the parts of `tenbin flow` in more than one file.
 */
#ifndef TB_CMD_FLOW_H
#define TB_CMD_FLOW_H

/* `tenbin flow experiment` (cmd_flow_experiment.c); argv[0] = "experiment". */
int tb_cmd_flow_experiment(int argc, char **argv);

/* `tenbin flow run` (cmd_flow_run.c), under mpiexec; argv[0] = "run". */
int tb_cmd_flow_run(int argc, char **argv);

struct tb_flow;
struct tb_flow_schedule;
struct tb_flow_sched_ops;
/* The scheduler called name, or NULL after printing the choices. */
const struct tb_flow_sched_ops *tb_cli_flow_sched(const char *cmd, const char *name);
/* The schedule as a Gantt SVG and/or a Chrome trace (either may be NULL);
 * 0, or -1 after printing why. */
int tb_cli_flow_write(const char *cmd, const char *gantt, const char *trace,
                      const struct tb_flow *f, const struct tb_flow_schedule *s);

#endif
