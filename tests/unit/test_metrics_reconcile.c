/*
 * controller-runtime's and client-go's figures for a reconciler
 * (controller/reconcile_metrics.c) over a real work queue: adds without
 * duplicates, depth, time waited, results, retries, busy workers, work in
 * progress computed at scrape time, and the scheduler's unfinished work.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/error.h"
#include "controller/reconcile_metrics.h"
#include "kube/workqueue.h"

static kp_metrics *registry;
static kp_ctrl_metrics m;

static void setup(void)
{
    registry = kp_metrics_new();
    cr_assert_eq(kp_ctrl_metrics_init(&m, registry), 0, "%s", kp_error_last());
}

static void teardown(void)
{
    kp_ctrl_metrics_fini(&m);
    registry = kp_metrics_free(registry);
}

TestSuite(metrics_reconcile, .init = setup, .fini = teardown);

static double value(kp_metric *f, const char *const *labels)
{
    return kp_metric_series_value(kp_metric_with(f, labels));
}

static char *scrape(void)
{
    kp_buf out = KP_BUF_INIT(1 << 22);
    cr_assert_eq(kp_metrics_write(registry, &out), 0);
    return kp_buf_detach(&out);
}

Test(metrics_reconcile, a_queue_and_its_reconciles)
{
    kp_workqueue_opts o = KP_WORKQUEUE_OPTS_INIT;
    kp_workqueue *q = kp_workqueue_new(&o);
    kp_reconcile_stats *s = kp_reconcile_metrics_controller(m.reconciles, "nodeclaim.lifecycle", q, 2);
    const char *nc[] = {"nodeclaim.lifecycle", "nodeclaim.lifecycle"}, *ncp[] = {"nodeclaim.lifecycle",
                                                                                   "nodeclaim.lifecycle", ""};
    const char *c[] = {"nodeclaim.lifecycle"};
    kp_workqueue_add(q, "a");
    kp_workqueue_add(q, "a"); /* already waiting: not an add */
    kp_workqueue_add(q, "b");
    cr_expect_eq(value(m.wq_adds, nc), 2);
    cr_expect_eq(value(m.wq_depth, ncp), 2);
    cr_expect_eq(value(m.max_concurrent, c), 2);

    char *key = NULL;
    cr_assert_eq(kp_workqueue_get(q, 1000, &key), 0);
    cr_expect_eq(value(m.wq_depth, ncp), 1);
    cr_expect_eq(value(m.wq_queue_duration, nc), 1, "one wait observed");
    int slot = kp_reconcile_begin(s);
    cr_expect_eq(value(m.active_workers, c), 1);
    usleep(20000);
    char *text = scrape(); /* the unfinished work is measured when read */
    const char *line = strstr(text, "\nworkqueue_unfinished_work_seconds{name=\"nodeclaim.lifecycle\",controller="
                                    "\"nodeclaim.lifecycle\"} ");
    cr_assert(line, "%s", text);
    cr_expect_gt(strtod(strchr(line + 1, '}') + 2, NULL), 0.01);
    free(text);
    kp_reconcile_end(s, slot, KP_RECONCILE_ERROR, true);
    kp_workqueue_done(q, key);
    free(key);
    cr_expect_eq(value(m.active_workers, c), 0);
    cr_expect_eq(value(m.reconcile_errors, c), 1);
    cr_expect_eq(value(m.wq_retries, nc), 1);
    cr_expect_eq(value(m.reconcile_total, (const char *const[]){"nodeclaim.lifecycle", "error"}), 1);
    cr_expect_eq(value(m.reconcile_total, (const char *const[]){"nodeclaim.lifecycle", "success"}), 0,
                 "every result starts at 0");
    cr_expect_eq(value(m.reconcile_time, c), 1);
    cr_expect_eq(value(m.reconcile_panics, c), 0);
    kp_reconcile_stats_detach(s);
    kp_workqueue_add(q, "c"); /* no longer observed */
    cr_expect_eq(value(m.wq_adds, nc), 2);
    kp_workqueue_shutdown(q);
    kp_workqueue_free(q);
}

Test(metrics_reconcile, unfinished_scheduling_work_lives_while_the_simulation_runs)
{
    kp_reconcile_metrics_solving(m.reconciles, "provisioner", "id-1");
    usleep(20000);
    char *text = scrape();
    cr_expect(strstr(text, "karpenter_scheduler_unfinished_work_seconds{controller=\"provisioner\",scheduling_id=\"id-1\"} 0."),
              "%s", strstr(text, "karpenter_scheduler_unfinished_work_seconds"));
    free(text);
    kp_reconcile_metrics_solved(m.reconciles, "provisioner");
    cr_expect_eq(kp_metric_series_count(m.unfinished_work), 0, "gone when the simulation ends");
}

Test(metrics_reconcile, cluster_state_sync)
{
    kp_reconcile_metrics_synced(m.reconciles, true);
    char *text = scrape();
    cr_expect(strstr(text, "\nkarpenter_cluster_state_synced 1\n"), "%s", text);
    cr_expect(strstr(text, "\nkarpenter_cluster_state_unsynced_time_seconds 0\n"));
    free(text);
    kp_reconcile_metrics_synced(m.reconciles, false);
    usleep(10000);
    text = scrape();
    cr_expect(strstr(text, "\nkarpenter_cluster_state_synced 0\n"));
    cr_expect_null(strstr(text, "\nkarpenter_cluster_state_unsynced_time_seconds 0\n"), "out of step for a while");
    free(text);
}
