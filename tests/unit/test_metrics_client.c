/*
 * client-go's request metrics (controller/client_metrics.c): the labels
 * operatorpkg reads from a request's path, and what one request counts.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "controller/client_metrics.h"

Test(metrics_client, labels_from_paths)
{
    static const struct {
        const char *method, *path, *verb, *group, *version, *kind, *sub;
    } cases[] = {
        {"GET", "/api/v1/pods?limit=500", "LIST", "", "v1", "pods", ""},
        {"GET", "/api/v1/namespaces/kube-system/pods", "LIST", "", "v1", "pods", ""},
        {"GET", "/api/v1/nodes/n1", "GET", "", "v1", "nodes", ""},
        {"PATCH", "/apis/karpenter.sh/v1/nodeclaims/c1/status", "PATCH", "karpenter.sh", "v1", "nodeclaims", "status"},
        {"POST", "/api/v1/namespaces/default/pods/p1/eviction", "CREATE", "", "v1", "pods", "eviction"},
        {"PUT", "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/karpenter-leader-election", "UPDATE",
         "coordination.k8s.io", "v1", "leases", ""},
        {"POST", "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases", "CREATE", "coordination.k8s.io", "v1",
         "leases", ""},
        {"DELETE", "/apis/karpenter.sh/v1/nodeclaims/c1", "DELETE", "karpenter.sh", "v1", "nodeclaims", ""},
        {"GET", "/api/v1/namespaces/kube-system", "GET", "", "v1", "namespaces", ""}, /* the namespace itself */
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        kp_client_request_labels l;
        cr_assert(kp_client_request_labels_of(cases[i].method, cases[i].path, &l), "%s", cases[i].path);
        cr_expect_str_eq(l.verb, cases[i].verb, "%s", cases[i].path);
        cr_expect_str_eq(l.group, cases[i].group, "%s", cases[i].path);
        cr_expect_str_eq(l.version, cases[i].version, "%s", cases[i].path);
        cr_expect_str_eq(l.kind, cases[i].kind, "%s", cases[i].path);
        cr_expect_str_eq(l.subresource, cases[i].sub, "%s", cases[i].path);
    }
    kp_client_request_labels l;
    cr_expect_not(kp_client_request_labels_of("GET", "/version", &l));
    cr_expect_not(kp_client_request_labels_of("GET", "/apis", &l));
    cr_expect_not(kp_client_request_labels_of("GET", "/api/v1", &l));
    cr_expect_not(kp_client_request_labels_of("GET", "", &l));
    cr_expect_not(kp_client_request_labels_of("GET", NULL, &l));
}

Test(metrics_client, a_request_counts_and_times)
{
    kp_metrics *r = kp_metrics_new();
    kp_ctrl_metrics m;
    cr_assert_eq(kp_ctrl_metrics_init(&m, r), 0);
    kp_client_metrics_observe(&m, "GET", "/api/v1/nodes/n1", 200, 2000000);
    kp_client_metrics_observe(&m, "GET", "/api/v1/nodes/n2", 404, 1000000);
    kp_client_metrics_observe(&m, "GET", "/version", 0, 1000000);
    const char *ok[] = {"200", "GET"}, *missing[] = {"404", "GET"}, *none[] = {"<error>", "GET"};
    cr_expect_eq(kp_metric_series_value(kp_metric_with(m.client_requests, ok)), 1);
    cr_expect_eq(kp_metric_series_value(kp_metric_with(m.client_requests, missing)), 1);
    cr_expect_eq(kp_metric_series_value(kp_metric_with(m.client_requests, none)), 1);
    const char *get_nodes[] = {"GET", "", "v1", "nodes", ""};
    kp_metric_series *s = kp_metric_with(m.client_request_duration, get_nodes);
    cr_expect_eq(kp_metric_series_value(s), 2, "both node requests are timed; /version names no resource");
    cr_expect_float_eq(kp_metric_series_sum(s), 0.003, 1e-9);
    kp_ctrl_metrics_fini(&m);
    kp_metrics_free(r);
}
