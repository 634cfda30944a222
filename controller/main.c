/*
 * karpenter-controller: `run` (the controllers against a cluster) and
 * `simulate` (the same planning, offline, from manifests).
 */
#include "controller/run.h"
#include "controller/simulate.h"

#include <stdio.h>
#include <string.h>

static void usage(FILE *out)
{
    fputs("usage: karpenter-controller simulate -f FILE_OR_DIR [-f ...] [-o json|yaml|table]\n"
          "       karpenter-controller run --cloud-provider aws|kwok [flags]\n"
          "       karpenter-controller --version\n",
          out);
}

int main(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "version") == 0)
        return kp_run_version(stdout, "karpenter-controller");
    if (strcmp(argv[1], "simulate") == 0)
        return kp_simulate_main(argc - 1, argv + 1);
    if (strcmp(argv[1], "run") == 0)
        return kp_run_main(argc - 1, argv + 1);
    fprintf(stderr, "karpenter-controller: unknown command %s\n", argv[1]);
    usage(stderr);
    return 2;
}
