/* `karpenter-controller run` (see run.h). */
#include "controller/run.h"
#include "base/error.h"
#include "base/log.h"
#include "controller/controllers.h"
#include "controller/options.h"
#include "controller/runtime.h"

#include <curl/curl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#define LOGGER "controller"

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
    stop_signal = sig;
}

static void wait_for_signal(kp_runtime *rt)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    while (!stop_signal && !kp_runtime_failed(rt))
        kp_kube_cancel_sleep(NULL, 200);
    KP_LOG(KP_LOG_INFO, LOGGER, stop_signal ? "stopping on signal" : "stopping: leadership lost");
}

int kp_run_main(int argc, char **argv)
{
    kp_ctrl_opts opts;
    int err = kp_ctrl_opts_parse(&opts, argc, argv, NULL, stdout);
    if (err == 1)
        return 0;
    if (err < 0) {
        fprintf(stderr, "karpenter-controller run: %s\n", kp_error_last());
        return 2;
    }
    kp_log_set_level((enum kp_log_level)kp_log_level_parse(opts.log_level));
    curl_global_init(CURL_GLOBAL_DEFAULT);
    kp_runtime *rt = NULL;
    err = kp_runtime_new(&opts, &rt);
    if (!err)
        err = kp_runtime_start(rt);
    if (err < 0) {
        KP_LOG(KP_LOG_ERROR, LOGGER, "cannot start", "error", kp_error_last());
        kp_runtime_free(rt);
        curl_global_cleanup();
        return 1;
    }
    wait_for_signal(rt);
    bool failed = kp_runtime_failed(rt);
    kp_runtime_free(rt);
    curl_global_cleanup();
    return failed ? 1 : 0;
}
