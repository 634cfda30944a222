/* The `simulate` subcommand (see simulate.c). */
#ifndef KP_CONTROLLER_SIMULATE_H
#define KP_CONTROLLER_SIMULATE_H

/* argv[0] is "simulate". Returns the process exit code. */
int kp_simulate_main(int argc, char **argv);

#endif
