/*
 * The kwok provider and kubelet as a command, for tests/e2e/test_kwok.sh on a
 * real control plane (the cluster from $KUBECONFIG):
 *
 *   e2e_kwok kubelet [--finish-immediately] [--status-ms N] [--lease-ms N] [--debug]
 *                                 run the kubelet until SIGTERM or SIGINT;
 *                                 prints "ready" once its informers synced
 *   e2e_kwok create CLAIM.json
 *   e2e_kwok get PROVIDER_ID
 *   e2e_kwok list
 *   e2e_kwok delete CLAIM.json [PROVIDER_ID]
 *                                 one provider call; the answer as one JSON
 *                                 line, or "error <code name>: <message>" on
 *                                 standard error and exit status 1
 *
 * `--instance-types SPEC` (before the command) picks the catalog: builtin,
 * synthetic:N or a file. Without a command (as ctest runs every test
 * program) it says so and exits 0.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/decode.h"
#include "base/error.h"
#include "base/log.h"
#include "cloud/kwok/kwok.h"
#include "cloud/kwok/kwok_kubelet.h"
#include "kube/config.h"
#include "kube/informer.h"

static int failed(const char *what, int err)
{
    fprintf(stderr, "error %s: %s: %s\n", kp_error_name(err), what, kp_error_last());
    return 1;
}

static cJSON *resources(const kp_resource_list *list)
{
    cJSON *o = cJSON_CreateObject();
    char buf[KP_QUANTITY_STRLEN];
    for (size_t i = 0; i < list->count; i++)
        cJSON_AddStringToObject(o, list->items[i].name,
                                kp_quantity_format(list->items[i].quantity, buf, sizeof(buf)));
    return o;
}

static void add_str(cJSON *o, const char *key, const char *value)
{
    if (value)
        cJSON_AddStringToObject(o, key, value);
    else
        cJSON_AddNullToObject(o, key);
}

static cJSON *instance_json(const kp_cloud_instance *in)
{
    cJSON *o = cJSON_CreateObject();
    add_str(o, "providerID", in->provider_id);
    add_str(o, "nodeClaim", in->nodeclaim);
    add_str(o, "nodePool", in->nodepool);
    add_str(o, "instanceType", in->instance_type);
    add_str(o, "zone", in->zone);
    add_str(o, "capacityType", in->capacity_type);
    cJSON *labels = cJSON_AddObjectToObject(o, "labels");
    for (size_t i = 0; i < in->labels.count; i++)
        cJSON_AddStringToObject(labels, in->labels.items[i].key, in->labels.items[i].value);
    cJSON_AddItemToObject(o, "capacity", resources(&in->capacity));
    cJSON_AddItemToObject(o, "allocatable", resources(&in->allocatable));
    cJSON_AddBoolToObject(o, "terminating", in->terminating);
    return o;
}

static void print_json(cJSON *o)
{
    char *text = cJSON_PrintUnformatted(o);
    printf("%s\n", text);
    fflush(stdout);
    free(text);
    cJSON_Delete(o);
}

static int read_claim(const char *path, kp_arena *arena, kp_nodeclaim *out)
{
    FILE *f = fopen(path, "rb");
    if (!f) return kp_error_set(KP_EIO, "cannot open %s", path);
    char buf[65536];
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    cJSON *json = cJSON_Parse(buf);
    if (!json) return kp_error_set(KP_EINVALID, "%s is not JSON", path);
    int err = kp_decode_nodeclaim(arena, json, out);
    cJSON_Delete(json);
    return err;
}

static int provider_call(kp_cloud_provider *cp, int argc, char **argv)
{
    kp_arena *arena = kp_arena_new();
    kp_cloud_instance in, *all = NULL;
    kp_nodeclaim claim;
    uint32_t n = 0;
    int err = 0;
    const char *cmd = argv[0];
    if (strcmp(cmd, "create") == 0 && argc == 2) {
        if ((err = read_claim(argv[1], arena, &claim)) == 0 &&
            (err = cp->ops->create(cp, &claim, arena, &in)) == 0)
            print_json(instance_json(&in));
    } else if (strcmp(cmd, "get") == 0 && argc == 2) {
        if ((err = cp->ops->get(cp, argv[1], arena, &in)) == 0) print_json(instance_json(&in));
    } else if (strcmp(cmd, "delete") == 0 && (argc == 2 || argc == 3)) {
        if ((err = read_claim(argv[1], arena, &claim)) == 0) {
            claim.provider_id = argc == 3 ? argv[2] : claim.provider_id;
            if ((err = cp->ops->delete_instance(cp, &claim)) == 0) printf("deleting\n");
        }
    } else if (strcmp(cmd, "list") == 0 && argc == 1) {
        if ((err = cp->ops->list(cp, arena, &all, &n)) == 0) {
            cJSON *list = cJSON_CreateArray();
            for (uint32_t i = 0; i < n; i++)
                cJSON_AddItemToArray(list, instance_json(&all[i]));
            print_json(list);
        }
    } else {
        fprintf(stderr, "usage: see the comment at the top of programs/kwok.c\n");
        kp_arena_free(arena);
        return 2;
    }
    kp_arena_free(arena);
    return err < 0 ? failed(cmd, err) : 0;
}

static int parse_kubelet_flags(int argc, char **argv, kp_kwok_kubelet_opts *o)
{
    for (int i = 1; i < argc; i++) {
        char *end = NULL;
        if (strcmp(argv[i], "--finish-immediately") == 0) {
            o->finish_immediately = true;
        } else if (strcmp(argv[i], "--debug") == 0) {
            kp_log_set_level(KP_LOG_DEBUG);
        } else if (strcmp(argv[i], "--status-ms") == 0 && i + 1 < argc) {
            o->status_interval_ms = strtoll(argv[++i], &end, 10);
        } else if (strcmp(argv[i], "--lease-ms") == 0 && i + 1 < argc) {
            o->lease_interval_ms = strtoll(argv[++i], &end, 10);
        } else {
            fprintf(stderr, "kubelet: unknown flag %s\n", argv[i]);
            return 2;
        }
        if (end && *end) {
            fprintf(stderr, "kubelet: %s is not a number\n", argv[i]);
            return 2;
        }
    }
    return 0;
}

/* Signals are blocked in every thread and taken here, so a stop is orderly. */
static int run_kubelet(kp_kube_client *client, int argc, char **argv)
{
    kp_kwok_kubelet_opts o = KP_KWOK_KUBELET_OPTS_INIT;
    int rc = parse_kubelet_flags(argc, argv, &o);
    if (rc) return rc;
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    kp_informer *nodes = kp_informer_new(client, KP_RES_NODE, NULL);
    kp_informer *pods = kp_informer_new(client, KP_RES_POD, NULL);
    kp_kwok_kubelet *k = NULL;
    int err = kp_kwok_kubelet_new(client, nodes, pods, &o, &k);
    if (err == 0 && (err = kp_kwok_kubelet_start(k)) == 0 &&
        (err = kp_informer_start(nodes)) == 0 && (err = kp_informer_start(pods)) == 0 &&
        (err = kp_informer_wait_synced(nodes, 60000)) == 0)
        err = kp_informer_wait_synced(pods, 60000);
    if (err == 0) {
        printf("ready\n");
        fflush(stdout);
        int sig = 0;
        sigwait(&set, &sig);
    }
    rc = err < 0 ? failed("kubelet", err) : 0;
    kp_informer_stop(nodes);
    kp_informer_stop(pods);
    kp_kwok_kubelet_stats st = {0};
    if (k) kp_kwok_kubelet_get_stats(k, &st);
    fprintf(stderr,
            "kubelet stats: node_status=%lu leases=%lu taints_removed=%lu pods_running=%lu "
            "pods_finished=%lu failures=%lu\n",
            st.node_status, st.leases, st.taints_removed, st.pods_running, st.pods_finished,
            st.failures);
    kp_kwok_kubelet_free(k);
    kp_informer_free(nodes);
    kp_informer_free(pods);
    return rc;
}

static int run(const char *catalog_spec, int argc, char **argv)
{
    kp_kube_config *cfg = NULL;
    kp_kube_client *client = NULL;
    kp_catalog *catalog = NULL;
    kp_cloud_provider *cp = NULL;
    int err = kp_kube_config_load(&cfg, NULL, NULL), rc;
    if (err == 0) err = kp_kube_client_new(&client, cfg, NULL);
    if (err < 0)
        rc = failed("connecting", err);
    else if (strcmp(argv[0], "kubelet") == 0)
        rc = run_kubelet(client, argc, argv);
    else if ((err = kp_catalog_open(catalog_spec, &catalog)) < 0)
        rc = failed("instance types", err);
    else {
        kp_kwok_opts ko = KP_KWOK_OPTS_INIT;
        ko.catalog = catalog;
        rc = (err = kp_kwok_provider_new(client, &ko, &cp)) < 0 ? failed("provider", err)
                                                                : provider_call(cp, argc, argv);
    }
    kp_cloud_free(cp);
    kp_catalog_free(catalog);
    kp_kube_client_free(client);
    kp_kube_config_free(cfg);
    return rc;
}

int main(int argc, char **argv)
{
    const char *catalog = "builtin";
    int i = 1;
    if (argc > 2 && strcmp(argv[1], "--instance-types") == 0) {
        catalog = argv[2];
        i = 3;
    }
    if (i >= argc || argv[i][0] == '-') {
        printf("e2e_kwok: a program for tests/e2e/test_kwok.sh; nothing to do without a "
               "command\n");
        return 0;
    }
    return run(catalog, argc - i, argv + i);
}
