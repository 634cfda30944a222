/* `karpenter-controller run` (see run.h). */
#include "controller/run.h"
#include "base/error.h"
#include "base/log.h"
#include "base/version.h"
#include "controller/controllers.h"
#include "controller/options.h"
#include "controller/runtime.h"

#include <curl/curl.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LOGGER "controller"

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
    stop_signal = sig;
}

/* Installed first thing, so a SIGTERM while the caches fill (up to a
 * minute) stops the process cleanly instead of killing it mid-write. */
static void catch_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
}

static bool signalled(void)
{
    return stop_signal != 0;
}

static void wait_for_signal(kp_runtime *rt)
{
    while (!stop_signal && !kp_runtime_failed(rt))
        kp_kube_cancel_sleep(NULL, 200);
    KP_LOG(KP_LOG_INFO, LOGGER, stop_signal ? "stopping on signal" : "stopping: leadership lost");
}

/* LOG_OUTPUT_PATHS / LOG_ERROR_OUTPUT_PATHS: "stdout", "stderr" or files
 * (appended to). The files stay open for the process's life. */
static int open_paths(const char *list, const char *setting, FILE **out, size_t max, size_t *n)
{
    char buf[1024];
    snprintf(buf, sizeof(buf), "%s", list);
    *n = 0;
    for (char *save = NULL, *p = strtok_r(buf, ",", &save); p; p = strtok_r(NULL, ",", &save)) {
        while (*p == ' ')
            p++;
        if (!*p)
            continue;
        if (*n == max)
            return kp_error_set(KP_EINVALID, "%s: at most %zu paths", setting, max);
        FILE *f = !strcmp(p, "stdout") ? stdout : !strcmp(p, "stderr") ? stderr : fopen(p, "a");
        if (!f)
            return kp_error_set(KP_EINVALID, "%s: cannot open %s: %s", setting, p, strerror(errno));
        out[(*n)++] = f;
    }
    if (!*n)
        return kp_error_set(KP_EINVALID, "%s: no path given", setting);
    return 0;
}

static int setup_logging(const kp_ctrl_opts *o)
{
    FILE *outs[KP_LOG_MAX_OUTPUTS], *errs[1];
    size_t n_outs, n_errs;
    int err = open_paths(o->log_output_paths, "LOG_OUTPUT_PATHS", outs, KP_LOG_MAX_OUTPUTS, &n_outs);
    if (!err)
        err = open_paths(o->log_error_output_paths, "LOG_ERROR_OUTPUT_PATHS", errs, 1, &n_errs);
    if (err < 0)
        return err;
    kp_log_set_level((enum kp_log_level)kp_log_level_parse(o->log_level));
    kp_log_set_outputs(outs, n_outs, errs[0]);
    return 0;
}

static void announce(const kp_ctrl_opts *o)
{
    KP_LOG(KP_LOG_INFO, LOGGER, "starting karpenter-controller", "version", kp_version(), "commit", kp_commit(),
           "cloudProvider", o->cloud_provider);
    for (int i = 0; i < o->n_warnings; i++)
        KP_LOG(KP_LOG_WARN, LOGGER, o->warnings[i]);
}

int kp_run_version(FILE *out, const char *program)
{
    fprintf(out, "%s %s (commit %s, %s, %s)\n", program, kp_version(), kp_commit(), kp_compiler(), kp_arch());
    return 0;
}

int kp_run_main(int argc, char **argv)
{
    catch_signals();
    kp_ctrl_opts opts;
    int err = kp_ctrl_opts_parse(&opts, argc, argv, NULL, stdout);
    if (err == 1)
        return 0;
    if (err == 0 && opts.show_version)
        return kp_run_version(stdout, "karpenter-controller");
    if (err == 0)
        err = setup_logging(&opts);
    if (err < 0) {
        fprintf(stderr, "karpenter-controller run: %s\n", kp_error_last());
        return 2;
    }
    announce(&opts);
    curl_global_init(CURL_GLOBAL_DEFAULT);
    kp_runtime *rt = NULL;
    err = kp_runtime_new(&opts, &rt);
    if (!err)
        err = kp_runtime_start(rt, signalled);
    if (err < 0 && !stop_signal)
        KP_LOG(KP_LOG_ERROR, LOGGER, "cannot start", "error", kp_error_last());
    if (err == 0)
        wait_for_signal(rt);
    else if (stop_signal)
        KP_LOG(KP_LOG_INFO, LOGGER, "stopping on signal during start-up");
    bool failed = (err < 0 && !stop_signal) || (rt && kp_runtime_failed(rt));
    kp_runtime_free(rt);
    curl_global_cleanup();
    return failed ? 1 : 0;
}
