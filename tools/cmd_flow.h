/*
 * cmd_flow.h - the parts of `tenbin flow` in more than one file.
 */
#ifndef TB_CMD_FLOW_H
#define TB_CMD_FLOW_H

/* `tenbin flow experiment` (cmd_flow_experiment.c); argv[0] = "experiment". */
int tb_cmd_flow_experiment(int argc, char **argv);

#endif
