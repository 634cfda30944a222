/*
 * Decoding workloads (DaemonSet, Deployment, StatefulSet, ReplicaSet, Job)
 * and PodDisruptionBudgets.
 */
#include "test_decode_util.h"

#define GI (INT64_C(1024) * 1024 * 1024 * 1000)

Test(decode_workload, statefulset_with_claim_templates)
{
    kp_arena *arena = kp_arena_new();
    kp_object obj;
    decode_fixture(arena, "statefulset.json", &obj);
    cr_assert_eq(obj.kind, KP_KIND_STATEFULSET);
    const kp_workload *w = &obj.u.workload;
    cr_expect_str_eq(w->meta.name, "db");
    cr_expect_eq(w->replicas, 3);
    cr_expect(w->selector.present);
    cr_expect_str_eq(kp_labels_get(&w->selector.match_labels, "app"), "db");
    cr_expect_str_eq(kp_labels_get(&w->template.meta.labels, "app"), "db");
    cr_expect_str_eq(w->template.meta.namespace, "data", "inherited from the workload");
    cr_expect_eq(MILLI(&w->template.requests, "cpu"), 2000);
    cr_expect_eq(MILLI(&w->template.requests, "memory"), 4 * GI);
    cr_expect_eq(w->template.n_topology_spread, 1);
    cr_assert_eq(w->n_volume_claim_templates, 1);
    const kp_pvc *pvc = &w->volume_claim_templates[0];
    cr_expect_str_eq(pvc->meta.name, "pgdata");
    cr_expect(pvc->has_storage_class_name);
    cr_expect_str_eq(pvc->storage_class_name, "gp3");
    cr_expect_eq(MILLI(&pvc->requests, "storage"), 100 * GI);
    cr_expect_str_eq(pvc->access_modes.items[0], "ReadWriteOnce");
    kp_arena_free(arena);
}

Test(decode_workload, daemonset_template)
{
    kp_arena *arena = kp_arena_new();
    kp_object obj;
    decode_fixture(arena, "daemonset.json", &obj);
    cr_assert_eq(obj.kind, KP_KIND_DAEMONSET);
    const kp_workload *w = &obj.u.workload;
    const kp_pod *t = &w->template;
    cr_expect_eq(w->replicas, 0);
    cr_expect_str_eq(t->meta.namespace, "kube-system");
    cr_expect_str_eq(t->priority_class_name, "system-node-critical");
    cr_expect(t->host_network);
    cr_assert_eq(t->n_host_ports, 1, "hostNetwork makes the container port a host port");
    cr_expect_eq(t->host_ports[0].port, 61678);
    cr_expect_eq(t->n_tolerations, 1);
    cr_expect(t->affinity.node.has_required);
    cr_expect_eq(t->affinity.node.required[0].match_expressions[1].op, KP_OP_NOT_IN);
    /* max(25m + 25m, 25m) */
    cr_expect_eq(MILLI(&t->requests, "cpu"), 50);
    cr_expect_eq(t->phase, KP_POD_PHASE_UNSET);
    cr_expect_str_eq(t->nominated_node_name, "");
    kp_arena_free(arena);
}

Test(decode_workload, deployment_and_replicaset_default_replicas)
{
    kp_arena *arena = kp_arena_new();
    kp_object obj;
    decode_sq(arena,
              "{'apiVersion':'apps/v1','kind':'Deployment','metadata':{'name':'web',"
              "'namespace':'shop'},'spec':{'selector':{'matchExpressions':[{'key':'app',"
              "'operator':'In','values':['web']}]},'template':{'metadata':{'namespace':'other'},"
              "'spec':{'containers':[{'resources':{'limits':{'cpu':'1'}}}]}}}}",
              &obj);
    const kp_workload *w = &obj.u.workload;
    cr_expect_eq(w->replicas, 1);
    cr_expect_eq(w->selector.n_match_expressions, 1);
    cr_expect_str_eq(w->template.meta.namespace, "other");
    cr_expect_eq(MILLI(&w->template.requests, "cpu"), 1000);
    kp_arena_free(arena);

    arena = kp_arena_new();
    decode_sq(arena, "{'apiVersion':'apps/v1','kind':'ReplicaSet','spec':{'replicas':0}}", &obj);
    cr_expect_eq(obj.u.workload.replicas, 0);
    cr_expect_not(obj.u.workload.selector.present);
    cr_expect_eq(obj.u.workload.n_volume_claim_templates, 0);
    kp_arena_free(arena);
}

Test(decode_workload, job_parallelism_and_completions)
{
    kp_arena *arena = kp_arena_new();
    kp_object obj;
    decode_sq(arena, "{'apiVersion':'batch/v1','kind':'Job','spec':{'template':{}}}", &obj);
    cr_expect_eq(obj.u.workload.parallelism, 1);
    cr_expect(obj.u.workload.has_completions);
    cr_expect_eq(obj.u.workload.completions, 1);
    kp_arena_free(arena);

    arena = kp_arena_new();
    decode_sq(arena, "{'apiVersion':'batch/v1','kind':'Job','spec':{'parallelism':4}}", &obj);
    cr_expect_eq(obj.u.workload.parallelism, 4);
    cr_expect_not(obj.u.workload.has_completions, "a work queue: no completions");
    kp_arena_free(arena);

    arena = kp_arena_new();
    decode_sq(arena,
              "{'apiVersion':'batch/v1','kind':'Job','spec':{'parallelism':2,'completions':10}}",
              &obj);
    cr_expect_eq(obj.u.workload.parallelism, 2);
    cr_expect_eq(obj.u.workload.completions, 10);
    kp_arena_free(arena);
}

Test(decode_workload, direct_call_rejects_other_kinds)
{
    kp_arena *arena = kp_arena_new();
    cJSON *json = sq_json("{}");
    kp_workload w;
    cr_expect_eq(kp_decode_workload(arena, json, KP_KIND_POD, &w), KP_EINVALID);
    cr_expect_eq(kp_decode_workload(arena, json, KP_KIND_JOB, &w), 0);
    cJSON_Delete(json);
    kp_arena_free(arena);
}

static const decode_error_case workload_errors[] = {
    {"{'spec':{'replicas':2147483648}}", "spec.replicas: 2147483648 is out of range for int32"},
    {"{'spec':{'replicas':'3'}}", "spec.replicas: expected integer, got string"},
    {"{'spec':{'selector':'app=web'}}", "spec.selector: expected object, got string"},
    {"{'spec':{'template':{'spec':{'containers':[{'resources':{'requests':{'cpu':'x'}}}]}}}}",
     "spec.template.spec.containers[0].resources.requests.cpu: quantity \"x\"..."},
    {"{'spec':{'template':{'metadata':{'labels':{'app':1}}}}}",
     "spec.template.metadata.labels[app]: expected string, got number"},
    {"{'spec':{'template':[]}}", "spec.template: expected object, got array"},
};

Test(decode_workload, deployment_errors)
{
    RUN_ERROR_CASES("apps/v1", "Deployment", workload_errors);
}

static const decode_error_case other_workload_errors[] = {
    {"{'kind':'Job','apiVersion':'batch/v1','spec':{'parallelism':1.5}}",
     "spec.parallelism: expected integer, got 1.5"},
    {"{'kind':'Job','apiVersion':'batch/v1','spec':{'completions':'all'}}",
     "spec.completions: expected integer, got string"},
    {"{'kind':'StatefulSet','apiVersion':'apps/v1','spec':{'volumeClaimTemplates':"
     "[{'spec':{'resources':{'requests':{'storage':'10Gx'}}}}]}}",
     "spec.volumeClaimTemplates[0].spec.resources.requests.storage: quantity \"10Gx\"..."},
    {"{'kind':'StatefulSet','apiVersion':'apps/v1','spec':{'volumeClaimTemplates':{}}}",
     "spec.volumeClaimTemplates: expected array, got object"},
    {"{'kind':'DaemonSet','apiVersion':'apps/v1','spec':{'template':{'spec':{'tolerations':"
     "[{'effect':'Bar'}]}}}}",
     "spec.template.spec.tolerations[0].effect: Unsupported value: \"Bar\"..."},
};

Test(decode_workload, job_statefulset_daemonset_errors)
{
    RUN_ERROR_CASES("apps/v1", "Deployment", other_workload_errors);
}

Test(decode_pdb, v1_with_status)
{
    kp_arena *arena = kp_arena_new();
    kp_object obj;
    decode_sq(arena,
              "{'apiVersion':'policy/v1','kind':'PodDisruptionBudget','metadata':{'name':'web',"
              "'namespace':'shop'},'spec':{'minAvailable':'50%','selector':{'matchLabels':"
              "{'app':'web'}}},'status':{'disruptionsAllowed':1,'currentHealthy':3,"
              "'desiredHealthy':2,'expectedPods':3,'observedGeneration':1}}",
              &obj);
    cr_assert_eq(obj.kind, KP_KIND_PDB);
    const kp_pdb *p = &obj.u.pdb;
    cr_expect_eq(p->min_available.type, KP_INT_OR_STRING_STRING);
    cr_expect_str_eq(p->min_available.str_value, "50%");
    cr_expect_eq(p->max_unavailable.type, KP_INT_OR_STRING_UNSET);
    cr_expect_str_eq(p->max_unavailable.str_value, "");
    cr_expect_not(p->selects_none);
    cr_expect_eq(p->disruptions_allowed, 1);
    cr_expect_eq(p->current_healthy, 3);
    cr_expect_eq(p->desired_healthy, 2);
    cr_expect_eq(p->expected_pods, 3);
    kp_arena_free(arena);
}

Test(decode_pdb, empty_selector_differs_between_versions)
{
    kp_arena *arena = kp_arena_new();
    kp_object obj;
    decode_sq(arena,
              "{'apiVersion':'policy/v1','kind':'PodDisruptionBudget','spec':"
              "{'maxUnavailable':1,'selector':{}}}",
              &obj);
    cr_expect_eq(obj.u.pdb.max_unavailable.type, KP_INT_OR_STRING_INT);
    cr_expect_eq(obj.u.pdb.max_unavailable.int_value, 1);
    cr_expect_not(obj.u.pdb.selects_none, "policy/v1: {} selects every pod");
    decode_sq(arena,
              "{'apiVersion':'policy/v1beta1','kind':'PodDisruptionBudget','spec':"
              "{'maxUnavailable':1,'selector':{}}}",
              &obj);
    cr_expect(obj.u.pdb.selects_none, "policy/v1beta1: {} selects nothing");
    decode_sq(arena,
              "{'apiVersion':'policy/v1beta1','kind':'PodDisruptionBudget','spec':"
              "{'selector':{'matchLabels':{'a':'b'}}}}",
              &obj);
    cr_expect_not(obj.u.pdb.selects_none);
    decode_sq(arena, "{'apiVersion':'policy/v1','kind':'PodDisruptionBudget','spec':{}}", &obj);
    cr_expect(obj.u.pdb.selects_none, "no selector selects nothing");
    kp_arena_free(arena);
}

static const decode_error_case pdb_errors[] = {
    {"{'spec':{'minAvailable':true}}",
     "spec.minAvailable: expected integer or string, got boolean"},
    {"{'spec':{'minAvailable':1.5}}", "spec.minAvailable: expected integer, got 1.5"},
    {"{'spec':{'maxUnavailable':4294967296}}",
     "spec.maxUnavailable: 4294967296 is out of range for int32"},
    {"{'spec':{'selector':{'matchExpressions':[{'key':'a','operator':'Exists','values':'x'}]}}}",
     "spec.selector.matchExpressions[0].values: expected array, got string"},
    {"{'status':{'disruptionsAllowed':'1'}}",
     "status.disruptionsAllowed: expected integer, got string"},
    {"{'status':{'expectedPods':-3000000000}}",
     "status.expectedPods: -3000000000 is out of range for int32"},
};

Test(decode_pdb, errors)
{
    RUN_ERROR_CASES("policy/v1", "PodDisruptionBudget", pdb_errors);
}
