/* The live what-if's objects: -f over the cluster's, --without away (controller/simulate_merge). */
#include <criterion/criterion.h>
#include <string.h>

#include "base/error.h"
#include "kube/objutil.h"
#include "controller/simulate_merge.h"

/* A "cluster": a NodePool with one claim and its node, which runs a
 * ReplicaSet's pod, a bare pod, a DaemonSet's pod and a finished Job pod;
 * another pool with its own node and pod. */
static const char cluster[] =
    "[{\"apiVersion\":\"karpenter.sh/v1\",\"kind\":\"NodePool\",\"metadata\":{\"name\":\"spot\"},"
    "  \"spec\":{\"template\":{\"spec\":{\"requirements\":[]}}},\"status\":{\"conditions\":[{\"type\":\"Ready\","
    "\"status\":\"True\"}]}},"
    " {\"apiVersion\":\"karpenter.sh/v1\",\"kind\":\"NodePool\",\"metadata\":{\"name\":\"other\"}},"
    " {\"apiVersion\":\"karpenter.sh/v1\",\"kind\":\"NodeClaim\",\"metadata\":{\"name\":\"spot-a\","
    "  \"labels\":{\"karpenter.sh/nodepool\":\"spot\"}},\"status\":{\"nodeName\":\"node-a\",\"providerID\":\"kwok://a\"}},"
    " {\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"node-a\",\"labels\":{\"karpenter.sh/nodepool\":"
    "\"spot\"}},\"spec\":{\"providerID\":\"kwok://a\"}},"
    " {\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"node-b\",\"labels\":{\"karpenter.sh/nodepool\":"
    "\"other\"}},\"spec\":{\"providerID\":\"kwok://b\"}},"
    " {\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"web-1\",\"namespace\":\"app\","
    "  \"ownerReferences\":[{\"kind\":\"ReplicaSet\",\"name\":\"web\",\"controller\":true}]},"
    "  \"spec\":{\"nodeName\":\"node-a\"},\"status\":{\"phase\":\"Running\"}},"
    " {\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"bare\",\"namespace\":\"app\"},"
    "  \"spec\":{\"nodeName\":\"node-a\"},\"status\":{\"phase\":\"Running\"}},"
    " {\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"ds-x\",\"namespace\":\"kube-system\","
    "  \"ownerReferences\":[{\"kind\":\"DaemonSet\",\"name\":\"ds\",\"controller\":true}]},"
    "  \"spec\":{\"nodeName\":\"node-a\"},\"status\":{\"phase\":\"Running\"}},"
    " {\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"done\",\"namespace\":\"app\","
    "  \"ownerReferences\":[{\"kind\":\"Job\",\"name\":\"j\",\"controller\":true}]},"
    "  \"spec\":{\"nodeName\":\"node-a\"},\"status\":{\"phase\":\"Succeeded\"}},"
    " {\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"db-0\",\"namespace\":\"app\","
    "  \"ownerReferences\":[{\"kind\":\"StatefulSet\",\"name\":\"db\",\"controller\":true}]},"
    "  \"spec\":{\"nodeName\":\"node-b\"},\"status\":{\"phase\":\"Running\"}},"
    " {\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"app\"}}]";

static kp_doc_list *docs(const char *json, const char *name)
{
    kp_doc_list *l = kp_doc_list_new();
    /* a JSON array of objects: each becomes a document, as the live reader makes them */
    cJSON *arr = cJSON_Parse(json);
    cr_assert_not_null(arr, "bad test JSON");
    size_t i = 0;
    while (arr->child)
        cr_assert_eq(kp_doc_list_append(l, cJSON_DetachItemViaPointer(arr, arr->child), name, i++, -1), 0);
    cJSON_Delete(arr);
    return l;
}

static const cJSON *find(const kp_doc_list *l, const char *kind, const char *name)
{
    for (size_t i = 0; i < kp_doc_list_count(l); i++) {
        const cJSON *o = kp_doc_list_at(l, i)->obj;
        if (!strcmp(kp_obj_str(o, "kind"), kind) && !strcmp(kp_obj_str(o, "metadata.name"), name))
            return o;
    }
    return NULL;
}

typedef struct merged {
    kp_doc_list *out;
    kp_sim_merge_report rep;
    int err;
} merged;

static merged merge(const char *files_json, const char *const *without, size_t n_without)
{
    kp_doc_list *live = docs(cluster, "cluster"), *files = docs(files_json, "what-if.yaml");
    kp_sim_without w[8];
    for (size_t i = 0; i < n_without; i++)
        cr_assert_eq(kp_sim_without_parse(without[i], &w[i]), 0, "%s: %s", without[i], kp_error_last());
    merged m = {kp_doc_list_new(), {0}, 0};
    kp_sim_merge_opts o = {"team", w, n_without};
    m.err = kp_sim_merge(live, files, &o, m.out, &m.rep);
    kp_doc_list_free(live);
    kp_doc_list_free(files);
    return m;
}

static void done(merged *m)
{
    kp_doc_list_free(m->out);
    kp_sim_merge_report_clear(&m->rep);
}

Test(simulate_merge, live_objects_pass_through_unchanged)
{
    merged m = merge("[]", NULL, 0);
    cr_assert_eq(m.err, 0, "%s", kp_error_last());
    cr_expect_eq(m.rep.live, 11);
    cr_expect_eq(kp_doc_list_count(m.out), 11);
    cr_expect_eq(m.rep.replaced + m.rep.added + m.rep.removed, 0);
    cr_expect_str_eq(kp_doc_list_at(m.out, 0)->file, "cluster", "the origin goes with the object");
    done(&m);
}

Test(simulate_merge, a_file_object_replaces_the_live_one_and_keeps_its_status)
{
    merged m = merge("[{\"apiVersion\":\"karpenter.sh/v1\",\"kind\":\"NodePool\",\"metadata\":{\"name\":\"spot\"},"
                     "\"spec\":{\"template\":{\"spec\":{\"taints\":[{\"key\":\"x\",\"effect\":\"NoSchedule\"}]}}}}]",
                     NULL, 0);
    cr_assert_eq(m.err, 0, "%s", kp_error_last());
    cr_expect_eq(m.rep.replaced, 1);
    cr_expect_eq(m.rep.added, 0);
    cr_expect_eq(kp_doc_list_count(m.out), 11, "replaced, not added");
    const cJSON *np = find(m.out, "NodePool", "spot");
    cr_assert_not_null(np);
    cr_expect_str_eq(kp_obj_str(cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(
                                                       cJSON_GetObjectItem(cJSON_GetObjectItem(np, "spec"), "template"),
                                                       "spec"), "taints"), 0), "key"),
                     "x", "the file's spec");
    cr_expect_str_eq(kp_obj_condition(np, "Ready"), "True", "the live status, as kubectl apply leaves it");
    cr_assert_eq(m.rep.notes.count, 1);
    cr_expect(strstr(m.rep.notes.items[0], "NodePool spot: replaced by what-if.yaml: document 1"), "%s", m.rep.notes.items[0]);
    done(&m);
}

/* A note is whole however long: a file deep in a directory tree is named in full
 * (notes used to stop at 1023 bytes). */
Test(simulate_merge, notes_are_not_cut)
{
    char path[1600];
    memset(path, 'd', sizeof(path) - 1);
    path[sizeof(path) - 1] = '\0';
    memcpy(path + sizeof(path) - 9, "/np.yaml", 8);
    kp_doc_list *live = docs(cluster, "cluster");
    kp_doc_list *files = docs("[{\"apiVersion\":\"karpenter.sh/v1\",\"kind\":\"NodePool\","
                              "\"metadata\":{\"name\":\"spot\"}}]",
                              path);
    kp_doc_list *out = kp_doc_list_new();
    kp_sim_merge_report rep = {0};
    kp_sim_merge_opts o = {"team", NULL, 0};
    cr_assert_eq(kp_sim_merge(live, files, &o, out, &rep), 0, "%s", kp_error_last());
    cr_assert_eq(rep.notes.count, 1);
    const char *note = rep.notes.items[0];
    cr_expect(strstr(note, path) != NULL, "the path in full");
    cr_expect_str_eq(note + strlen(note) - strlen("/np.yaml: document 1"), "/np.yaml: document 1");
    kp_doc_list_free(live);
    kp_doc_list_free(files);
    kp_doc_list_free(out);
    kp_sim_merge_report_clear(&rep);
}

Test(simulate_merge, new_objects_are_added_in_the_default_namespace)
{
    merged m = merge("[{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"web-1\"}},"
                     " {\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"web-1\",\"namespace\":\"app\"},"
                     "  \"spec\":{\"nodeName\":\"\"}},"
                     " {\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"new\"}}]",
                     NULL, 0);
    cr_assert_eq(m.err, 0, "%s", kp_error_last());
    cr_expect_eq(m.rep.added, 2, "team/web-1 and node new");
    cr_expect_eq(m.rep.replaced, 1, "app/web-1");
    size_t in_team = 0;
    for (size_t i = 0; i < kp_doc_list_count(m.out); i++)
        in_team += kp_obj_str(kp_doc_list_at(m.out, i)->obj, "metadata.namespace") &&
                   !strcmp(kp_obj_str(kp_doc_list_at(m.out, i)->obj, "metadata.namespace"), "team");
    cr_expect_eq(in_team, 1, "a namespaced object without a namespace goes to the context's");
    cr_expect_null(kp_obj_str(find(m.out, "Node", "new"), "metadata.namespace"), "a Node has none");
    done(&m);
}

Test(simulate_merge, without_a_nodepool_takes_its_claims_nodes_and_evicts_their_pods)
{
    const char *w[] = {"nodepool/spot"};
    merged m = merge("[]", w, 1);
    cr_assert_eq(m.err, 0, "%s", kp_error_last());
    cr_expect_null(find(m.out, "NodePool", "spot"));
    cr_expect_null(find(m.out, "NodeClaim", "spot-a"));
    cr_expect_null(find(m.out, "Node", "node-a"));
    cr_expect_not_null(find(m.out, "Node", "node-b"), "another pool's node stays");
    const cJSON *web = find(m.out, "Pod", "web-1");
    cr_assert_not_null(web, "a controller's pod is made again");
    cr_expect_null(kp_obj_str(web, "spec.nodeName"), "... pending");
    cr_expect_str_eq(kp_obj_str(web, "status.phase"), "Pending");
    cr_expect_null(find(m.out, "Pod", "bare"), "a pod with no controller is gone");
    cr_expect_null(find(m.out, "Pod", "ds-x"), "a DaemonSet pod goes with its node");
    cr_expect_null(find(m.out, "Pod", "done"), "a finished pod goes too");
    cr_expect_str_eq(kp_obj_str(find(m.out, "Pod", "db-0"), "spec.nodeName"), "node-b");
    cr_expect_eq(m.rep.rescheduled, 1);
    cr_expect_eq(m.rep.lost, 1);
    cr_expect_eq(m.rep.removed, 6, "pool, claim, node and three pods");
    cr_assert_eq(m.rep.notes.count, 1);
    cr_expect(strstr(m.rep.notes.items[0], "removed NodePool spot with 1 NodeClaim(s), 1 Node(s)"), "%s", m.rep.notes.items[0]);
    done(&m);
}

Test(simulate_merge, without_a_node_takes_its_claim)
{
    const char *w[] = {"Nodes/node-a"};
    merged m = merge("[]", w, 1);
    cr_assert_eq(m.err, 0, "%s", kp_error_last());
    cr_expect_null(find(m.out, "NodeClaim", "spot-a"), "Karpenter deletes the claim of a deleted node");
    cr_expect_not_null(find(m.out, "NodePool", "spot"));
    done(&m);
}

Test(simulate_merge, without_a_namespace_takes_what_is_in_it)
{
    const char *w[] = {"namespace/app"};
    merged m = merge("[]", w, 1);
    cr_assert_eq(m.err, 0, "%s", kp_error_last());
    cr_expect_null(find(m.out, "Pod", "db-0"));
    cr_expect_not_null(find(m.out, "Pod", "ds-x"), "kube-system stays");
    done(&m);
}

Test(simulate_merge, without_applies_to_file_objects_too)
{
    const char *w[] = {"pod/team/extra"};
    merged m = merge("[{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"extra\"}}]", w, 1);
    cr_assert_eq(m.err, 0, "%s", kp_error_last());
    cr_expect_null(find(m.out, "Pod", "extra"));
    done(&m);
}

Test(simulate_merge, without_nothing_is_an_error)
{
    const char *w[] = {"nodepool/nope"};
    merged m = merge("[]", w, 1);
    cr_expect_eq(m.err, KP_ENOTFOUND);
    cr_expect(strstr(kp_error_last(), "--without nodepool/nope: there is no NodePool nope"), "%s", kp_error_last());
    done(&m);
}

Test(simulate_merge, without_arguments_are_checked)
{
    static const struct {
        const char *arg, *want;
    } bad[] = {
        {"nodepool", "want KIND/NAME or KIND/NAMESPACE/NAME"},
        {"pod/x", "a Pod is namespaced: write pod/NAMESPACE/NAME"},
        {"nodepool/a/b", "a NodePool has no namespace"},
        {"gadget/x", "unknown kind gadget"},
        {"pod//x", "the namespace is empty"},
        {"node/", "the name is empty"},
        {"a/b/c/d", "want KIND/NAME"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        kp_sim_without w;
        cr_expect_eq(kp_sim_without_parse(bad[i].arg, &w), KP_EINVALID, "%s", bad[i].arg);
        cr_expect(strstr(kp_error_last(), bad[i].want), "%s: %s", bad[i].arg, kp_error_last());
    }
    kp_sim_without w;
    cr_assert_eq(kp_sim_without_parse("PersistentVolumeClaims/db/data-0", &w), 0);
    cr_expect_str_eq(w.kind, "PersistentVolumeClaim");
    cr_expect_str_eq(w.ns, "db");
    cr_expect_str_eq(w.name, "data-0");
}
