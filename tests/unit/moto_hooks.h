/*
 * The moto server for a moto-backed test program: its integration script
 * (tests/integration/moto_run.sh) starts one and passes KP_AWS_MOTO_URL; run
 * on its own, the program starts its own before the first test (installing
 * moto when it is missing) and stops it after the last. Include once, in the
 * program's only .c file, after defining MOTO_PROGRAM ("test_aws_moto").
 */
#ifndef KP_TESTS_MOTO_HOOKS_H
#define KP_TESTS_MOTO_HOOKS_H

#include <criterion/criterion.h>
#include <criterion/hooks.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MOTO_SCRIPT KP_SOURCE_DIR "/scripts/moto-server.sh"

static char moto_dir[128];

ReportHook(PRE_ALL)(struct criterion_test_set *set)
{
    (void)set;
    if (getenv("KP_AWS_MOTO_URL")) return;
    snprintf(moto_dir, sizeof(moto_dir), "/tmp/kp-moto-XXXXXX");
    if (!mkdtemp(moto_dir) || system("bash " MOTO_SCRIPT " install >&2") != 0) {
        fprintf(stderr, MOTO_PROGRAM ": moto is not installed and could not be installed\n");
        exit(1);
    }
    char cmd[512], url[128] = "";
    snprintf(cmd, sizeof(cmd), "bash %s start %s", MOTO_SCRIPT, moto_dir);
    FILE *p = popen(cmd, "r");
    if (!p || !fgets(url, sizeof(url), p) || pclose(p) != 0) {
        fprintf(stderr, MOTO_PROGRAM ": could not start moto (%s)\n", cmd);
        exit(1);
    }
    url[strcspn(url, "\r\n")] = '\0';
    setenv("KP_AWS_MOTO_URL", url, 1);
}

ReportHook(POST_ALL)(struct criterion_global_stats *stats)
{
    (void)stats;
    if (!moto_dir[0]) return;
    char cmd[512];
    snprintf(cmd, sizeof(cmd), "bash %s stop %s && rm -rf %s", MOTO_SCRIPT, moto_dir, moto_dir);
    if (system(cmd) != 0) fprintf(stderr, MOTO_PROGRAM ": stopping moto failed\n");
}

#endif
