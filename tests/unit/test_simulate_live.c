/*
 * The live what-if's reading side (controller/simulate_live.c) against the
 * fake API server: one paged LIST per kind and nothing else, objects typed as
 * files would have them, an object that does not decode left out with a
 * note, Karpenter's CRDs missing read as none, PodDisruptionBudgets from
 * policy/v1beta1 on a 1.20 server, a refusal naming the ClusterRole, and a
 * server that never answers stopped by the deadline.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/error.h"
#include "controller/simulate_live.h"
#include "helpers/assert.h"
#include "helpers/fake_apiserver.h"

typedef struct live {
    fake_api *fa;
    kp_kube_client *client;
    kp_doc_list *out;
    kp_sim_live_stats st;
} live;

static void live_start(live *l)
{
    memset(l, 0, sizeof(*l));
    l->fa = fake_api_start();
    cr_assert_not_null(l->fa);
    kp_kube_config cfg = {0};
    cfg.server = (char *)fake_api_url(l->fa);
    cfg.source = "test";
    kp_kube_client_opts o = KP_KUBE_CLIENT_OPTS_INIT;
    o.qps = 0;
    o.timeout_ms = 2000;
    KP_ASSERT_OK(kp_kube_client_new(&l->client, &cfg, &o));
    l->out = kp_doc_list_new();
}

static void live_stop(live *l)
{
    kp_doc_list_free(l->out);
    kp_kube_client_free(l->client);
    fake_api_stop(l->fa);
}

static int read_all(live *l, int page_size, int64_t deadline_ms)
{
    kp_sim_live_opts o = KP_SIM_LIVE_OPTS_INIT;
    o.page_size = page_size;
    o.deadline_ms = deadline_ms;
    return kp_sim_live_read(l->client, &o, l->out, &l->st);
}

static const kp_sim_live_kind *kind(const live *l, const char *plural)
{
    for (size_t i = 0; i < l->st.n_kinds; i++)
        if (!strcmp(l->st.kinds[i].plural, plural))
            return &l->st.kinds[i];
    return NULL;
}

static void put_pods(live *l, int n)
{
    for (int i = 0; i < n; i++) {
        char json[256];
        snprintf(json, sizeof(json), "{\"metadata\":{\"name\":\"p%d\",\"namespace\":\"app\"},\"spec\":{\"containers\":"
                                     "[{\"name\":\"c\",\"image\":\"x\"}]}}", i);
        fake_api_put(l->fa, "/api/v1/namespaces/app/pods", json);
    }
}

Test(simulate_live, one_paged_list_per_kind_and_no_write)
{
    live l;
    live_start(&l);
    put_pods(&l, 7);
    fake_api_put(l.fa, "/apis/karpenter.sh/v1/nodepools",
                 "{\"metadata\":{\"name\":\"default\"},\"spec\":{\"template\":{\"spec\":{\"nodeClassRef\":{\"group\":"
                 "\"karpenter.kwok.sh\",\"kind\":\"KWOKNodeClass\",\"name\":\"default\"},\"requirements\":[]}}}}");
    fake_api_put(l.fa, "/api/v1/nodes", "{\"metadata\":{\"name\":\"n1\"}}");
    KP_ASSERT_OK(read_all(&l, 3, 0));
    cr_expect_eq(kind(&l, "pods")->objects, 7);
    cr_expect_eq(fake_api_count(l.fa, "GET", "/api/v1/pods"), 3, "7 pods by 3: three pages");
    cr_expect_eq(fake_api_count(l.fa, "GET", "/apis/karpenter.sh/v1/nodepools"), 1);
    cr_expect_eq(fake_api_count(l.fa, "GET", "/api/v1/nodes"), 1);
    cr_expect_eq(fake_api_count(l.fa, "GET", "/apis/karpenter.k8s.aws"), 0, "EC2NodeClasses only for aws");
    cr_expect_eq(fake_api_count(l.fa, NULL, NULL), fake_api_count(l.fa, "GET", NULL), "nothing but reads");
    cr_expect_eq(fake_api_count(l.fa, "GET", NULL), 3 + 9 + 1, "pods in 3 pages, 9 other kinds, a discovery");
    cr_expect_eq(l.st.objects, 9);
    const kp_doc *d = kp_doc_list_at(l.out, 0);
    cr_assert_not_null(d);
    cr_expect_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(d->obj, "kind")), "NodePool",
                     "list items are typed as a file would have them");
    cr_expect_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(d->obj, "apiVersion")), "karpenter.sh/v1");
    cr_expect_str_eq(d->file, "cluster nodepools");
    live_stop(&l);
}

Test(simulate_live, an_object_that_does_not_decode_is_left_out_with_a_note)
{
    live l;
    live_start(&l);
    put_pods(&l, 2);
    fake_api_put(l.fa, "/api/v1/namespaces/app/pods",
                 "{\"metadata\":{\"name\":\"bad\",\"namespace\":\"app\"},\"spec\":{\"containers\":[{\"name\":\"c\","
                 "\"resources\":{\"requests\":{\"cpu\":\"lots\"}}}]}}");
    KP_ASSERT_OK(read_all(&l, 500, 0));
    cr_expect_eq(kind(&l, "pods")->objects, 2);
    cr_expect_eq(kind(&l, "pods")->skipped, 1);
    cr_assert_geq(l.st.n_notes, 1);
    cr_expect(strstr(l.st.notes[0], "left out Pod app/bad") != NULL, "%s", l.st.notes[0]);
    live_stop(&l);
}

static void no_karpenter(void *ctx, const fake_req *req, fake_resp *resp)
{
    (void)ctx;
    if (!strncmp(req->path, "/apis/karpenter.sh/", 19)) {
        resp->status = 404;
        resp->body = strdup("{\"kind\":\"Status\",\"code\":404,\"reason\":\"NotFound\"}");
    }
}

Test(simulate_live, missing_karpenter_crds_read_as_none_and_pdbs_follow_the_server)
{
    live l;
    live_start(&l);
    fake_api_set_hook(l.fa, no_karpenter, NULL);
    fake_api_set_policy_v1(l.fa, false); /* a 1.20 server */
    fake_api_put(l.fa, "/apis/policy/v1beta1/namespaces/app/poddisruptionbudgets",
                 "{\"metadata\":{\"name\":\"db\",\"namespace\":\"app\"},\"spec\":{\"minAvailable\":1}}");
    KP_ASSERT_OK(read_all(&l, 500, 0));
    cr_expect_not(kind(&l, "nodepools")->served);
    cr_expect_not(kind(&l, "nodeclaims")->served);
    cr_expect(strstr(l.st.notes[0], "the server has no nodepools (karpenter.sh CRD not installed)") != NULL, "%s",
              l.st.notes[0]);
    cr_expect_eq(kind(&l, "poddisruptionbudgets")->objects, 1);
    cr_expect_eq(fake_api_count(l.fa, "GET", "/apis/policy/v1beta1/poddisruptionbudgets"), 1);
    live_stop(&l);
}

static void forbid_pods(void *ctx, const fake_req *req, fake_resp *resp)
{
    (void)ctx;
    if (!strcmp(req->path, "/api/v1/pods")) {
        resp->status = 403;
        resp->body = strdup("{\"kind\":\"Status\",\"code\":403,\"reason\":\"Forbidden\",\"message\":\"pods is "
                            "forbidden\"}");
    }
}

Test(simulate_live, a_refusal_names_the_clusterrole_to_bind)
{
    live l;
    live_start(&l);
    fake_api_set_hook(l.fa, forbid_pods, NULL);
    cr_expect_eq(read_all(&l, 500, 0), KP_EFORBIDDEN);
    cr_expect(strstr(kp_error_last(), "listing pods from http") != NULL, "%s", kp_error_last());
    cr_expect(strstr(kp_error_last(), "bind the ClusterRole karpenter-c-simulate-reader of deploy/simulate-reader") !=
                  NULL,
              "%s", kp_error_last());
    live_stop(&l);
}

/* A server that trickles a list out forever: the deadline ends the read. */
static void endless(void *ctx, const fake_req *req, fake_resp *resp)
{
    (void)ctx;
    if (strcmp(req->path, "/api/v1/nodes") != 0)
        return;
    resp->status = 200;
    resp->nchunks = 40;
    resp->chunks = calloc(resp->nchunks, sizeof(char *));
    resp->chunks[0] = strdup("{\"kind\":\"NodeList\",\"items\":[");
    for (size_t i = 1; i < resp->nchunks; i++)
        resp->chunks[i] = strdup(" ");
}

Test(simulate_live, a_server_that_never_finishes_is_stopped_by_the_deadline, .timeout = 60)
{
    live l;
    live_start(&l);
    fake_api_set_hook(l.fa, endless, NULL);
    int err = read_all(&l, 500, 300);
    cr_expect_lt(err, 0, "the read fails rather than hangs");
    cr_expect(strstr(kp_error_last(), "reading nodes from http") && strstr(kp_error_last(), "took longer than 300 ms"),
              "the deadline, naming the kind: %s", kp_error_last());
    live_stop(&l);
}
