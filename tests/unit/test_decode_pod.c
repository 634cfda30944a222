/*
 * Decoding Pods: a realistic full object, a minimal one, derived fields, and
 * every field's error message.
 */
#include "test_decode_util.h"
#include "helpers/assert.h"

#define MI (INT64_C(1024) * 1024 * 1000) /* one Mi in milli-units */

Test(decode_pod, full_metadata)
{
    kp_arena *arena = kp_arena_new();
    kp_object obj;
    decode_fixture(arena, "pod_full.json", &obj);
    cr_assert_eq(obj.kind, KP_KIND_POD);
    cr_expect_str_eq(obj.api_version, "v1");
    cr_expect_str_eq(obj.kind_name, "Pod");
    const kp_object_meta *m = &obj.u.pod.meta;
    cr_expect_eq(kp_object_get_meta(&obj), m);
    cr_expect_str_eq(m->name, "web-7d4b9c8f6-x2k9p");
    cr_expect_str_eq(m->generate_name, "web-7d4b9c8f6-");
    cr_expect_str_eq(m->namespace, "shop");
    cr_expect_str_eq(m->uid, "5f0c8a4e-1b2c-4d3e-9f00-aabbccddeeff");
    cr_expect_str_eq(m->resource_version, "123456");
    cr_expect_eq(m->generation, 1);
    cr_expect(m->creation_timestamp.set);
    cr_expect_eq(m->creation_timestamp.ns, INT64_C(1714557600) * 1000000000);
    cr_expect_not(m->deletion_timestamp.set);
    cr_expect_eq(m->labels.count, 3);
    cr_expect_str_eq(m->labels.items[0].key, "app");
    cr_expect_str_eq(kp_labels_get(&m->labels, "tier"), "frontend");
    cr_expect_null(kp_labels_get(&m->labels, "missing"));
    cr_expect_str_eq(kp_labels_get(&m->annotations, "karpenter.sh/do-not-disrupt"), "true");
    cr_assert_eq(m->n_owner_refs, 1);
    cr_expect_str_eq(m->owner_refs[0].kind, "ReplicaSet");
    cr_expect_str_eq(m->owner_refs[0].api_version, "apps/v1");
    cr_expect(m->owner_refs[0].controller);
    cr_expect(m->owner_refs[0].block_owner_deletion);
    cr_assert_eq(m->finalizers.count, 1);
    cr_expect_str_eq(m->finalizers.items[0], "example.com/cleanup");
    kp_arena_free(arena);
}

Test(decode_pod, full_scheduling_fields)
{
    kp_arena *arena = kp_arena_new();
    kp_object obj;
    decode_fixture(arena, "pod_full.json", &obj);
    const kp_pod *p = &obj.u.pod;
    cr_expect_str_eq(p->scheduler_name, "default-scheduler");
    cr_expect_str_eq(p->priority_class_name, "high");
    cr_expect(p->has_priority);
    cr_expect_eq(p->priority, 1000);
    cr_expect(p->has_termination_grace_period);
    cr_expect_eq(p->termination_grace_period_seconds, 45);
    cr_expect_str_eq(p->node_name, "");
    cr_assert_eq(p->node_selector.count, 2);
    cr_expect_str_eq(p->node_selector.items[0].key, "karpenter.sh/capacity-type");
    cr_expect_str_eq(kp_labels_get(&p->node_selector, "kubernetes.io/os"), "linux");
    cr_assert_eq(p->n_tolerations, 3);
    cr_expect_str_eq(p->tolerations[0].key, "dedicated");
    cr_expect_eq(p->tolerations[0].op, KP_TOLERATION_EQUAL);
    cr_expect_eq(p->tolerations[0].effect, KP_EFFECT_NO_SCHEDULE);
    cr_expect_str_eq(p->tolerations[1].key, "");
    cr_expect_eq(p->tolerations[1].op, KP_TOLERATION_EXISTS);
    cr_expect_eq(p->tolerations[1].effect, KP_EFFECT_ANY);
    cr_expect(p->tolerations[2].has_seconds);
    cr_expect_eq(p->tolerations[2].seconds, 300);
    cr_expect_eq(p->tolerations[2].effect, KP_EFFECT_NO_EXECUTE);
    kp_arena_free(arena);
}

Test(decode_pod, full_affinity)
{
    kp_arena *arena = kp_arena_new();
    kp_object obj;
    decode_fixture(arena, "pod_full.json", &obj);
    const kp_affinity *a = &obj.u.pod.affinity;
    cr_expect(a->node.has_required);
    cr_assert_eq(a->node.n_required, 2);
    const kp_node_selector_term *t0 = &a->node.required[0];
    cr_assert_eq(t0->n_match_expressions, 2);
    cr_expect_str_eq(t0->match_expressions[0].key, "topology.kubernetes.io/zone");
    cr_expect_eq(t0->match_expressions[0].op, KP_OP_IN);
    cr_assert_eq(t0->match_expressions[0].n_values, 2);
    cr_expect_str_eq(t0->match_expressions[0].values[1], "us-west-2b");
    cr_expect_eq(t0->match_expressions[1].op, KP_OP_GT);
    cr_expect_eq(a->node.required[1].n_match_fields, 1);
    cr_expect_eq(a->node.required[1].match_fields[0].op, KP_OP_NOT_IN);
    cr_assert_eq(a->node.n_preferred, 1);
    cr_expect_eq(a->node.preferred[0].weight, 50);
    cr_expect_str_eq(a->node.preferred[0].preference.match_expressions[0].values[0], "m5.large");

    cr_expect_eq(a->pod.n_required, 0);
    cr_assert_eq(a->pod.n_preferred, 1);
    const kp_weighted_pod_affinity_term *w = &a->pod.preferred[0];
    cr_expect_eq(w->weight, 10);
    cr_expect(w->term.label_selector.present);
    cr_expect_str_eq(kp_labels_get(&w->term.label_selector.match_labels, "app"), "cache");
    cr_expect_eq(w->term.namespaces.count, 2);
    cr_expect_not(w->term.namespace_selector.present);

    cr_assert_eq(a->pod_anti.n_required, 1);
    const kp_pod_affinity_term *anti = &a->pod_anti.required[0];
    cr_expect_str_eq(anti->topology_key, "kubernetes.io/hostname");
    cr_assert_eq(anti->label_selector.n_match_expressions, 2);
    cr_expect_eq(anti->label_selector.match_expressions[1].op, KP_OP_DOES_NOT_EXIST);
    cr_expect_eq(anti->label_selector.match_expressions[1].n_values, 0);
    cr_expect(anti->namespace_selector.present, "{} is a present, empty selector");
    cr_expect_eq(anti->namespace_selector.match_labels.count, 0);
    cr_expect_str_eq(anti->match_label_keys.items[0], "pod-template-hash");
    cr_expect_str_eq(anti->mismatch_label_keys.items[0], "tenant");
    kp_arena_free(arena);
}

Test(decode_pod, full_topology_spread)
{
    kp_arena *arena = kp_arena_new();
    kp_object obj;
    decode_fixture(arena, "pod_full.json", &obj);
    const kp_pod *p = &obj.u.pod;
    cr_assert_eq(p->n_topology_spread, 2);
    const kp_topology_spread *t = &p->topology_spread[0];
    cr_expect_eq(t->max_skew, 1);
    cr_expect_str_eq(t->topology_key, "topology.kubernetes.io/zone");
    cr_expect_eq(t->when_unsatisfiable, KP_WHEN_UNSATISFIABLE_DO_NOT_SCHEDULE);
    cr_expect_eq(t->min_domains, 3);
    cr_expect_eq(t->node_affinity_policy, KP_POLICY_HONOR);
    cr_expect_eq(t->node_taints_policy, KP_POLICY_IGNORE);
    cr_expect_eq(t->match_label_keys.count, 1);
    t = &p->topology_spread[1];
    cr_expect_eq(t->when_unsatisfiable, KP_WHEN_UNSATISFIABLE_SCHEDULE_ANYWAY);
    cr_expect_eq(t->min_domains, 0);
    cr_expect_eq(t->node_affinity_policy, KP_POLICY_UNSET);
    cr_expect_eq(t->node_taints_policy, KP_POLICY_UNSET);
    kp_arena_free(arena);
}

Test(decode_pod, full_containers_and_requests)
{
    kp_arena *arena = kp_arena_new();
    kp_object obj;
    decode_fixture(arena, "pod_full.json", &obj);
    const kp_pod *p = &obj.u.pod;
    cr_assert_eq(p->n_containers, 1);
    cr_assert_eq(p->n_init_containers, 2);
    cr_expect_str_eq(p->containers[0].name, "web");
    cr_expect_str_eq(p->containers[0].image, "registry.example.com/web:1.4");
    cr_expect_not(p->init_containers[0].restart_always);
    cr_expect(p->init_containers[1].restart_always);
    cr_expect_eq(MILLI(&p->containers[0].requests, "cpu"), 500);
    cr_expect_eq(MILLI(&p->containers[0].limits, "ephemeral-storage"), 2048 * MI);
    cr_expect_eq(MILLI(&p->overhead, "memory"), 120 * MI);
    /* max(600m, 2) + 250m; max(1Gi + 128Mi, 512Mi) + 120Mi; the limit for storage. */
    cr_expect_eq(p->requests.count, 3);
    cr_expect_eq(MILLI(&p->requests, "cpu"), 2250);
    cr_expect_eq(MILLI(&p->requests, "memory"), 1272 * MI);
    cr_expect_eq(MILLI(&p->requests, "ephemeral-storage"), 2048 * MI);
    kp_arena_free(arena);
}

Test(decode_pod, full_ports_and_host_ports)
{
    kp_arena *arena = kp_arena_new();
    kp_object obj;
    decode_fixture(arena, "pod_full.json", &obj);
    const kp_pod *p = &obj.u.pod;
    const kp_container *c = &p->containers[0];
    cr_assert_eq(c->n_ports, 3);
    cr_expect_str_eq(c->ports[0].name, "http");
    cr_expect_eq(c->ports[0].container_port, 8080);
    cr_expect_eq(c->ports[0].host_port, 0);
    cr_expect_eq(c->ports[2].protocol, KP_PROTOCOL_UDP);
    cr_assert_eq(p->n_host_ports, 2);
    cr_expect_str_eq(p->host_ports[0].ip, "10.0.0.1");
    cr_expect_eq(p->host_ports[0].port, 9090);
    cr_expect_eq(p->host_ports[0].protocol, KP_PROTOCOL_TCP);
    cr_expect_str_eq(p->host_ports[1].ip, "0.0.0.0");
    cr_expect_eq(p->host_ports[1].port, 53);
    cr_expect_eq(p->host_ports[1].protocol, KP_PROTOCOL_UDP);
    kp_arena_free(arena);
}

Test(decode_pod, full_volumes)
{
    static const enum kp_volume_kind kinds[] = {
        KP_VOLUME_PVC,       KP_VOLUME_EPHEMERAL, KP_VOLUME_EMPTY_DIR, KP_VOLUME_CONFIG_MAP,
        KP_VOLUME_PROJECTED, KP_VOLUME_HOST_PATH, KP_VOLUME_SECRET,    KP_VOLUME_CSI,
        KP_VOLUME_OTHER,     KP_VOLUME_EMPTY_DIR};
    kp_arena *arena = kp_arena_new();
    kp_object obj;
    decode_fixture(arena, "pod_full.json", &obj);
    const kp_pod *p = &obj.u.pod;
    cr_assert_eq(p->n_volumes, sizeof(kinds) / sizeof(kinds[0]));
    for (size_t i = 0; i < p->n_volumes; i++)
        cr_expect_eq(p->volumes[i].kind, kinds[i], "volume %zu (%s)", i, p->volumes[i].name);
    cr_expect_str_eq(p->volumes[0].claim_name, "web-data");
    cr_expect_not(p->volumes[0].has_storage_class_name);
    cr_expect_str_eq(p->volumes[1].claim_name, "web-7d4b9c8f6-x2k9p-scratch");
    cr_expect(p->volumes[1].has_storage_class_name);
    cr_expect_str_eq(p->volumes[1].storage_class_name, "gp3");
    cr_expect_str_eq(p->volumes[2].claim_name, "");
    kp_arena_free(arena);
}

Test(decode_pod, full_status_and_owner_facts)
{
    kp_arena *arena = kp_arena_new();
    kp_object obj;
    decode_fixture(arena, "pod_full.json", &obj);
    const kp_pod *p = &obj.u.pod;
    cr_expect_eq(p->phase, KP_POD_PHASE_PENDING);
    cr_assert_eq(p->conditions.count, 1);
    const kp_condition *c = kp_conditions_get(&p->conditions, "PodScheduled");
    cr_assert_not_null(c);
    cr_expect_eq(c->status, KP_CONDITION_FALSE);
    cr_expect_str_eq(c->reason, "Unschedulable");
    cr_expect(c->last_transition_time.set);
    cr_expect_not(kp_conditions_is_true(&p->conditions, "PodScheduled"));
    cr_expect(p->failed_to_schedule);
    cr_expect_str_eq(p->nominated_node_name, "");
    cr_expect_str_eq(p->controller_kind, "ReplicaSet");
    cr_expect_str_eq(p->controller_name, "web-7d4b9c8f6");
    cr_expect_not(p->owned_by_daemonset);
    cr_expect_not(p->owned_by_node);
    cr_expect_not(p->is_mirror);
    kp_arena_free(arena);
}

Test(decode_pod, minimal_gets_zero_values)
{
    kp_arena *arena = kp_arena_new();
    kp_object obj;
    decode_sq(arena, "{'apiVersion':'v1','kind':'Pod'}", &obj);
    const kp_pod *p = &obj.u.pod;
    cr_expect_str_eq(p->meta.name, "");
    cr_expect_str_eq(p->meta.namespace, "");
    cr_expect_str_eq(p->node_name, "");
    cr_expect_str_eq(p->scheduler_name, "");
    cr_expect_str_eq(p->controller_kind, "");
    cr_expect_str_eq(p->nominated_node_name, "");
    cr_expect_not(p->has_priority);
    cr_expect_not(p->has_termination_grace_period);
    cr_expect_not(p->affinity.node.has_required);
    cr_expect_eq(p->n_containers, 0);
    cr_expect_null(p->containers);
    cr_expect_eq(p->requests.count, 0);
    cr_expect_eq(p->phase, KP_POD_PHASE_UNSET);
    cr_expect_eq(p->meta.labels.count, 0);
    cr_expect_null(kp_labels_get(&p->meta.labels, "app"));
    cr_expect_not(p->failed_to_schedule);
    kp_arena_free(arena);
}

Test(decode_pod, null_is_absent_and_unknown_fields_are_ignored)
{
    kp_arena *arena = kp_arena_new();
    kp_object obj;
    decode_sq(arena,
              "{'apiVersion':'v1','kind':'Pod','metadata':{'name':null,'labels':null,"
              "'annotations':{'a':null}},'spec':{'priority':null,'containers':[null,"
              "{'name':'c','resources':{'requests':{'cpu':null}},'futureField':[1,2]}],"
              "'affinity':null,'tolerations':null},'status':null,'extra':{'x':1}}",
              &obj);
    const kp_pod *p = &obj.u.pod;
    cr_expect_str_eq(p->meta.name, "");
    cr_expect_eq(p->meta.labels.count, 0);
    cr_expect_str_eq(kp_labels_get(&p->meta.annotations, "a"), "");
    cr_expect_not(p->has_priority);
    cr_assert_eq(p->n_containers, 2);
    cr_expect_str_eq(p->containers[0].name, "");
    cr_expect_str_eq(p->containers[1].name, "c");
    cr_expect_eq(p->containers[1].requests.count, 1);
    cr_expect_eq(MILLI(&p->containers[1].requests, "cpu"), 0);
    kp_arena_free(arena);
}

Test(decode_pod, labels_are_sorted_and_last_duplicate_wins)
{
    kp_arena *arena = kp_arena_new();
    kp_object obj;
    decode_sq(arena,
              "{'apiVersion':'v1','kind':'Pod','metadata':{'labels':"
              "{'zeta':'1','alpha':'2','mid':'3','alpha':'4'}}}",
              &obj);
    const kp_labels *l = &obj.u.pod.meta.labels;
    cr_assert_eq(l->count, 3);
    cr_expect_str_eq(l->items[0].key, "alpha");
    cr_expect_str_eq(l->items[0].value, "4");
    cr_expect_str_eq(l->items[1].key, "mid");
    cr_expect_str_eq(l->items[2].key, "zeta");
    cr_expect_str_eq(kp_labels_get(l, "zeta"), "1");
    kp_arena_free(arena);
}

Test(decode_pod, owners_mirror_and_daemonset)
{
    kp_arena *arena = kp_arena_new();
    kp_object obj;
    decode_sq(arena,
              "{'apiVersion':'v1','kind':'Pod','metadata':{'name':'kube-proxy-a',"
              "'annotations':{'kubernetes.io/config.mirror':'abc'},"
              "'ownerReferences':[{'apiVersion':'v1','kind':'Node','name':'node-a',"
              "'controller':true},{'apiVersion':'apps/v1','kind':'DaemonSet','name':'ds'},"
              "{'apiVersion':'apps/v1','kind':'StatefulSet','name':'db'}]}}",
              &obj);
    const kp_pod *p = &obj.u.pod;
    cr_expect(p->owned_by_node);
    cr_expect(p->is_mirror);
    cr_expect(p->owned_by_daemonset);
    cr_expect(p->owned_by_statefulset);
    cr_expect_str_eq(p->controller_kind, "Node");
    cr_expect_str_eq(p->controller_name, "node-a");
    kp_arena_free(arena);
}

Test(decode_pod, host_network_defaults_host_ports)
{
    kp_arena *arena = kp_arena_new();
    kp_object obj;
    decode_sq(arena,
              "{'apiVersion':'v1','kind':'Pod','spec':{'hostNetwork':true,'containers':[{"
              "'ports':[{'containerPort':8080},{'containerPort':9100,'hostPort':9101}]}],"
              "'initContainers':[{'ports':[{'containerPort':7000}]}]}}",
              &obj);
    const kp_pod *p = &obj.u.pod;
    cr_expect(p->host_network);
    cr_assert_eq(p->n_host_ports, 2);
    cr_expect_eq(p->host_ports[0].port, 8080);
    cr_expect_eq(p->host_ports[1].port, 9101);
    cr_expect_eq(p->containers[0].ports[0].host_port, 8080);
    kp_arena_free(arena);
}

Test(decode_pod, dynamic_resource_allocation)
{
    static const char *const cases[][2] = {
        {"'resourceClaims':[{'name':'gpu'}]", "1"},
        {"'containers':[{'resources':{'claims':[{'name':'gpu'}]}}]", "1"},
        {"'initContainers':[{'resources':{'claims':[{'name':'gpu'}]}}]", "1"},
        {"'resourceClaims':[],'containers':[{'resources':{'claims':[]}}]", "0"},
        {"'resourceClaims':null", "0"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        kp_arena *arena = kp_arena_new();
        kp_object obj;
        char json[512];
        snprintf(json, sizeof(json), "{'apiVersion':'v1','kind':'Pod','spec':{%s}}", cases[i][0]);
        decode_sq(arena, json, &obj);
        cr_expect_eq(obj.u.pod.has_dra, cases[i][1][0] == '1', "%s", cases[i][0]);
        kp_arena_free(arena);
    }
}

Test(decode_pod, quantities_as_json_numbers)
{
    kp_arena *arena = kp_arena_new();
    kp_object obj;
    decode_sq(arena,
              "{'apiVersion':'v1','kind':'Pod','spec':{'containers':[{'resources':"
              "{'requests':{'cpu':0.1,'memory':1073741824,'nvidia.com/gpu':2}}}]}}",
              &obj);
    const kp_resource_list *r = &obj.u.pod.containers[0].requests;
    cr_expect_eq(MILLI(r, "cpu"), 100);
    cr_expect_eq(MILLI(r, "memory"), 1024 * MI);
    cr_expect_eq(MILLI(r, "nvidia.com/gpu"), 2000);
    kp_arena_free(arena);
}

Test(decode_pod, deletion_timestamp_and_node_name)
{
    kp_arena *arena = kp_arena_new();
    kp_object obj;
    decode_sq(arena,
              "{'apiVersion':'v1','kind':'Pod','metadata':{'deletionTimestamp':"
              "'2024-05-01T10:00:30.5+02:00'},'spec':{'nodeName':'ip-10-0-0-1'},"
              "'status':{'phase':'Running','nominatedNodeName':'n2'}}",
              &obj);
    const kp_pod *p = &obj.u.pod;
    cr_expect(p->meta.deletion_timestamp.set);
    cr_expect_eq(p->meta.deletion_timestamp.ns, INT64_C(1714550430500000000));
    cr_expect_str_eq(p->node_name, "ip-10-0-0-1");
    cr_expect_eq(p->phase, KP_POD_PHASE_RUNNING);
    cr_expect_str_eq(p->nominated_node_name, "n2");
    kp_arena_free(arena);
}

Test(decode_pod, direct_call_needs_no_type_meta)
{
    kp_arena *arena = kp_arena_new();
    cJSON *json = sq_json("{'metadata':{'name':'p'},'spec':{'containers':[{'name':'c'}]}}");
    kp_pod pod;
    KP_ASSERT_OK(kp_decode_pod(arena, json, &pod));
    cr_expect_str_eq(pod.meta.name, "p");
    cr_expect_eq(pod.n_containers, 1);
    cJSON_Delete(json);
    kp_arena_free(arena);
}

static const decode_error_case meta_errors[] = {
    {"[]", "expected object, got array"},
    {"{'metadata':[]}", "metadata: expected object, got array"},
    {"{'metadata':{'name':5}}", "metadata.name: expected string, got number"},
    {"{'metadata':{'namespace':true}}", "metadata.namespace: expected string, got boolean"},
    {"{'metadata':{'uid':{}}}", "metadata.uid: expected string, got object"},
    {"{'metadata':{'generation':1.5}}", "metadata.generation: expected integer, got 1.5"},
    {"{'metadata':{'generation':'1'}}", "metadata.generation: expected integer, got string"},
    {"{'metadata':{'labels':[]}}", "metadata.labels: expected object, got array"},
    {"{'metadata':{'labels':{'app':1}}}", "metadata.labels[app]: expected string, got number"},
    {"{'metadata':{'annotations':{'a':{}}}}",
     "metadata.annotations[a]: expected string, got object"},
    {"{'metadata':{'creationTimestamp':'yesterday'}}",
     "metadata.creationTimestamp: invalid RFC 3339 time yesterday..."},
    {"{'metadata':{'deletionTimestamp':5}}",
     "metadata.deletionTimestamp: expected string, got number"},
    {"{'metadata':{'ownerReferences':{}}}", "metadata.ownerReferences: expected array, got object"},
    {"{'metadata':{'ownerReferences':['rs']}}",
     "metadata.ownerReferences[0]: expected object, got string"},
    {"{'metadata':{'ownerReferences':[{},{'controller':'yes'}]}}",
     "metadata.ownerReferences[1].controller: expected boolean, got string"},
    {"{'metadata':{'finalizers':['a',1]}}", "metadata.finalizers[1]: expected string, got number"},
};

Test(decode_pod, metadata_errors)
{
    RUN_ERROR_CASES("v1", "Pod", meta_errors);
}

static const decode_error_case spec_errors[] = {
    {"{'spec':[]}", "spec: expected object, got array"},
    {"{'spec':{'nodeName':1}}", "spec.nodeName: expected string, got number"},
    {"{'spec':{'priority':3000000000}}", "spec.priority: 3000000000 is out of range for int32"},
    {"{'spec':{'priority':-2147483649}}", "spec.priority: -2147483649 is out of range for int32"},
    {"{'spec':{'priority':'high'}}", "spec.priority: expected integer, got string"},
    {"{'spec':{'terminationGracePeriodSeconds':'30'}}",
     "spec.terminationGracePeriodSeconds: expected integer, got string"},
    {"{'spec':{'terminationGracePeriodSeconds':1e30}}",
     "spec.terminationGracePeriodSeconds: 1e+30 is out of range for int64"},
    {"{'spec':{'hostNetwork':'true'}}", "spec.hostNetwork: expected boolean, got string"},
    {"{'spec':{'resourceClaims':'gpu'}}", "spec.resourceClaims: expected array, got string"},
    {"{'spec':{'containers':[{'resources':{'claims':{}}}]}}",
     "spec.containers[0].resources.claims: expected array, got object"},
    {"{'spec':{'nodeSelector':{'zone':['a']}}}",
     "spec.nodeSelector[zone]: expected string, got array"},
    {"{'spec':{'containers':{}}}", "spec.containers: expected array, got object"},
    {"{'spec':{'containers':['nginx']}}", "spec.containers[0]: expected object, got string"},
    {"{'spec':{'containers':[{'name':['x']}]}}",
     "spec.containers[0].name: expected string, got array"},
    {"{'spec':{'containers':[{'resources':{'requests':{'cpu':'1x'}}}]}}",
     "spec.containers[0].resources.requests.cpu: quantity \"1x\": unexpected character 'x' "
     "at position 1"},
    {"{'spec':{'containers':[{},{'resources':{'limits':{'memory':'lots'}}}]}}",
     "spec.containers[1].resources.limits.memory: quantity \"lots\"..."},
    {"{'spec':{'containers':[{'resources':{'requests':{'cpu':true}}}]}}",
     "spec.containers[0].resources.requests.cpu: expected quantity (string or number), got "
     "boolean"},
    {"{'spec':{'containers':[{'resources':{'requests':['cpu']}}]}}",
     "spec.containers[0].resources.requests: expected object, got array"},
    {"{'spec':{'containers':[{'ports':[{'hostPort':'80'}]}]}}",
     "spec.containers[0].ports[0].hostPort: expected integer, got string"},
    {"{'spec':{'containers':[{'ports':[{'containerPort':4294967296}]}]}}",
     "spec.containers[0].ports[0].containerPort: 4294967296 is out of range for int32"},
    {"{'spec':{'containers':[{'ports':[{'protocol':'ICMP'}]}]}}",
     "spec.containers[0].ports[0].protocol: Unsupported value: \"ICMP\": supported values: "
     "\"SCTP\", \"TCP\", \"UDP\""},
    {"{'spec':{'initContainers':[{},{'restartPolicy':5}]}}",
     "spec.initContainers[1].restartPolicy: expected string, got number"},
    {"{'spec':{'overhead':{'memory':'lots'}}}",
     "spec.overhead.memory: quantity \"lots\": unexpected character 'l' at position 0"},
    {"{'spec':{'resources':{'requests':{'cpu':'1.2.3'}}}}",
     "spec.resources.requests.cpu: quantity \"1.2.3\"..."},
    {"{'spec':{'volumes':[{'name':'v','persistentVolumeClaim':{'claimName':7}}]}}",
     "spec.volumes[0].persistentVolumeClaim.claimName: expected string, got number"},
    {"{'spec':{'volumes':[{'persistentVolumeClaim':'data'}]}}",
     "spec.volumes[0].persistentVolumeClaim: expected object, got string"},
    {"{'spec':{'volumes':[{'ephemeral':{'volumeClaimTemplate':{'spec':{'storageClassName':1}}}}]}}",
     "spec.volumes[0].ephemeral.volumeClaimTemplate.spec.storageClassName: expected string, got "
     "number"},
};

Test(decode_pod, spec_errors)
{
    RUN_ERROR_CASES("v1", "Pod", spec_errors);
}

#define NODE_TERM(expr)                                                                            \
    "{'spec':{'affinity':{'nodeAffinity':{'requiredDuringSchedulingIgnoredDuringExecution':"       \
    "{'nodeSelectorTerms':[{'matchExpressions':[" expr "]}]}}}}}"
#define NODE_TERM_PATH                                                                             \
    "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution."                   \
    "nodeSelectorTerms[0].matchExpressions[0]"
#define ANTI_TERM(term)                                                                            \
    "{'spec':{'affinity':{'podAntiAffinity':{'requiredDuringSchedulingIgnoredDuringExecution':"    \
    "[" term "]}}}}"
#define ANTI_PATH "spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]"

static const decode_error_case affinity_errors[] = {
    {"{'spec':{'affinity':[]}}", "spec.affinity: expected object, got array"},
    {NODE_TERM("{'key':'k','operator':'Foo'}"),
     NODE_TERM_PATH ".operator: Unsupported value: \"Foo\": supported values: \"DoesNotExist\", "
                    "\"Exists\", \"Gt\", \"In\", \"Lt\", \"NotIn\""},
    {NODE_TERM("{'key':'k','operator':'Gte','values':['1']}"),
     NODE_TERM_PATH ".operator: Unsupported value: \"Gte\"..."},
    {NODE_TERM("{'key':'k'}"), NODE_TERM_PATH ".operator: Required value"},
    {NODE_TERM("{'key':'k','operator':'In','values':'a'}"),
     NODE_TERM_PATH ".values: expected array, got string"},
    {NODE_TERM("{'key':3,'operator':'In'}"), NODE_TERM_PATH ".key: expected string, got number"},
    {"{'spec':{'affinity':{'nodeAffinity':{'requiredDuringSchedulingIgnoredDuringExecution':"
     "{'nodeSelectorTerms':{}}}}}}",
     "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution."
     "nodeSelectorTerms: expected array, got object"},
    {"{'spec':{'affinity':{'nodeAffinity':{'preferredDuringSchedulingIgnoredDuringExecution':"
     "[{'weight':'10'}]}}}}",
     "spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight: "
     "expected integer, got string"},
    {"{'spec':{'affinity':{'nodeAffinity':{'preferredDuringSchedulingIgnoredDuringExecution':"
     "[{'weight':1,'preference':{'matchFields':[{'key':'metadata.name','operator':'Bad'}]}}]}}}}",
     "spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].preference."
     "matchFields[0].operator: Unsupported value: \"Bad\"..."},
    {ANTI_TERM("{'labelSelector':{'matchExpressions':[{'key':'a','operator':'Gt'}]}}"),
     ANTI_PATH ".labelSelector.matchExpressions[0].operator: Unsupported value: \"Gt\": "
               "supported values: \"DoesNotExist\", \"Exists\", \"In\", \"NotIn\""},
    {ANTI_TERM("{'labelSelector':{'matchLabels':{'app':false}}}"),
     ANTI_PATH ".labelSelector.matchLabels[app]: expected string, got boolean"},
    {ANTI_TERM("{'topologyKey':1}"), ANTI_PATH ".topologyKey: expected string, got number"},
    {ANTI_TERM("{'namespaces':'shop'}"), ANTI_PATH ".namespaces: expected array, got string"},
    {ANTI_TERM("{'namespaceSelector':'all'}"),
     ANTI_PATH ".namespaceSelector: expected object, got string"},
    {ANTI_TERM("{'matchLabelKeys':[1]}"),
     ANTI_PATH ".matchLabelKeys[0]: expected string, got number"},
    {"{'spec':{'affinity':{'podAffinity':{'preferredDuringSchedulingIgnoredDuringExecution':"
     "[{'weight':2147483648}]}}}}",
     "spec.affinity.podAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight: "
     "2147483648 is out of range for int32"},
};

Test(decode_pod, affinity_errors)
{
    RUN_ERROR_CASES("v1", "Pod", affinity_errors);
}

static const decode_error_case toleration_and_spread_errors[] = {
    {"{'spec':{'tolerations':[{'operator':'Foo'}]}}",
     "spec.tolerations[0].operator: Unsupported value: \"Foo\": supported values: \"Equal\", "
     "\"Exists\", \"Gt\", \"Lt\""},
    {"{'spec':{'tolerations':[{'effect':'Bar'}]}}",
     "spec.tolerations[0].effect: Unsupported value: \"Bar\": supported values: \"NoExecute\", "
     "\"NoSchedule\", \"PreferNoSchedule\""},
    {"{'spec':{'tolerations':[{'tolerationSeconds':1.5}]}}",
     "spec.tolerations[0].tolerationSeconds: expected integer, got 1.5"},
    {"{'spec':{'tolerations':[{'key':7}]}}",
     "spec.tolerations[0].key: expected string, got number"},
    {"{'spec':{'topologySpreadConstraints':[{'topologyKey':'zone'}]}}",
     "spec.topologySpreadConstraints[0].whenUnsatisfiable: Required value"},
    {"{'spec':{'topologySpreadConstraints':[{'whenUnsatisfiable':'Sometimes'}]}}",
     "spec.topologySpreadConstraints[0].whenUnsatisfiable: Unsupported value: \"Sometimes\": "
     "supported values: \"DoNotSchedule\", \"ScheduleAnyway\""},
    {"{'spec':{'topologySpreadConstraints':[{'whenUnsatisfiable':'DoNotSchedule',"
     "'maxSkew':2147483648}]}}",
     "spec.topologySpreadConstraints[0].maxSkew: 2147483648 is out of range for int32"},
    {"{'spec':{'topologySpreadConstraints':[{'whenUnsatisfiable':'DoNotSchedule',"
     "'minDomains':1.5}]}}",
     "spec.topologySpreadConstraints[0].minDomains: expected integer, got 1.5"},
    {"{'spec':{'topologySpreadConstraints':[{'whenUnsatisfiable':'DoNotSchedule',"
     "'nodeTaintsPolicy':'Maybe'}]}}",
     "spec.topologySpreadConstraints[0].nodeTaintsPolicy: Unsupported value: \"Maybe\": "
     "supported values: \"Honor\", \"Ignore\""},
    {"{'spec':{'topologySpreadConstraints':[{'whenUnsatisfiable':'DoNotSchedule',"
     "'nodeAffinityPolicy':1}]}}",
     "spec.topologySpreadConstraints[0].nodeAffinityPolicy: expected string, got number"},
    {"{'spec':{'topologySpreadConstraints':[{'whenUnsatisfiable':'DoNotSchedule',"
     "'labelSelector':{'matchExpressions':[{'key':'app','operator':'In','values':[1]}]}}]}}",
     "spec.topologySpreadConstraints[0].labelSelector.matchExpressions[0].values[0]: expected "
     "string, got number"},
    {"{'status':{'phase':'Sleeping'}}",
     "status.phase: Unsupported value: \"Sleeping\": supported values: \"Failed\", \"Pending\", "
     "\"Running\", \"Succeeded\", \"Unknown\""},
    {"{'status':{'conditions':{}}}", "status.conditions: expected array, got object"},
    {"{'status':{'containerStatuses':{}}}", "status.containerStatuses: expected array, got object"},
    {"{'status':{'containerStatuses':[{'allocatedResources':{'cpu':'lots'}}]}}",
     "status.containerStatuses[0].allocatedResources.cpu: quantity \"lots\": unexpected character "
     "'l' at position 0"},
    {"{'status':{'initContainerStatuses':[{'resources':{'requests':[]}}]}}",
     "status.initContainerStatuses[0].resources.requests: expected object, got array"},
    {"{'status':{'resize':1}}", "status.resize: expected string, got number"},
    {"{'status':{'conditions':[{'lastTransitionTime':'2024-13-01T00:00:00Z'}]}}",
     "status.conditions[0].lastTransitionTime: invalid RFC 3339 time..."},
    {"{'status':{'nominatedNodeName':0}}", "status.nominatedNodeName: expected string, got number"},
};

Test(decode_pod, toleration_spread_and_status_errors)
{
    RUN_ERROR_CASES("v1", "Pod", toleration_and_spread_errors);
}

Test(decode_pod, output_untouched_on_error)
{
    kp_arena *arena = kp_arena_new();
    cJSON *json = sq_json("{'metadata':{'name':'p'},'spec':{'priority':'x'}}");
    kp_pod pod;
    memset(&pod, 0, sizeof(pod));
    pod.meta.name = "before";
    cr_expect_eq(kp_decode_pod(arena, json, &pod), KP_EINVALID);
    cr_expect_str_eq(pod.meta.name, "before");
    cJSON_Delete(json);
    kp_arena_free(arena);
}

Test(decode_pod, numeric_toleration_operators)
{
    kp_arena *arena = kp_arena_new();
    kp_object obj;
    decode_sq(arena,
              "{'apiVersion':'v1','kind':'Pod','spec':{'tolerations':[{'key':'gen',"
              "'operator':'Gt','value':'3','effect':'NoSchedule'},{'key':'gen','operator':'Lt',"
              "'value':'9'},{'key':'x','operator':''}]}}",
              &obj);
    const kp_pod *p = &obj.u.pod;
    cr_assert_eq(p->n_tolerations, 3);
    cr_expect_eq(p->tolerations[0].op, KP_TOLERATION_GT);
    cr_expect_str_eq(p->tolerations[0].value, "3");
    cr_expect_eq(p->tolerations[1].op, KP_TOLERATION_LT);
    cr_expect_eq(p->tolerations[1].effect, KP_EFFECT_ANY);
    cr_expect_eq(p->tolerations[2].op, KP_TOLERATION_EQUAL, "an empty operator is Equal");
    kp_arena_free(arena);
}
