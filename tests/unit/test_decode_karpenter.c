/*
 * Decoding Karpenter's NodePool and NodeClaim (karpenter.sh/v1).
 */
#include "test_decode_util.h"

#define NS_PER_HOUR (INT64_C(3600) * 1000000000)
#define GI          (INT64_C(1024) * 1024 * 1024 * 1000)

Test(decode_nodepool, full_template)
{
    kp_arena *arena = kp_arena_new();
    kp_object obj;
    decode_fixture(arena, "nodepool_full.json", &obj);
    cr_assert_eq(obj.kind, KP_KIND_NODEPOOL);
    const kp_nodepool *np = &obj.u.nodepool;
    cr_expect_str_eq(np->meta.name, "default");
    cr_expect_eq(np->meta.generation, 3);
    cr_expect_str_eq(kp_labels_get(&np->template_labels, "team"), "platform");
    cr_expect_str_eq(kp_labels_get(&np->template_annotations, "example.com/owner"), "my-team");
    const kp_nodeclaim_spec *s = &np->template;
    cr_expect(s->has_node_class_ref);
    cr_expect_str_eq(s->node_class_ref.group, "karpenter.k8s.aws");
    cr_expect_str_eq(s->node_class_ref.kind, "EC2NodeClass");
    cr_expect_str_eq(s->node_class_ref.name, "default");
    cr_assert_eq(s->n_taints, 1);
    cr_expect_str_eq(s->taints[0].key, "example.com/special-taint");
    cr_expect_str_eq(s->taints[0].value, "");
    cr_expect_eq(s->taints[0].effect, KP_EFFECT_NO_SCHEDULE);
    cr_assert_eq(s->n_startup_taints, 1);
    cr_expect_str_eq(s->startup_taints[0].value, "starting");
    cr_expect_eq(s->startup_taints[0].effect, KP_EFFECT_NO_EXECUTE);
    cr_expect(s->has_expire_after);
    cr_expect_not(s->expire_after.never);
    cr_expect_eq(s->expire_after.ns, 720 * NS_PER_HOUR);
    cr_expect(s->has_termination_grace_period);
    cr_expect_eq(s->termination_grace_period.ns, 48 * NS_PER_HOUR);
    cr_expect_eq(s->resource_requests.count, 0);
    kp_arena_free(arena);
}

Test(decode_nodepool, full_requirements)
{
    kp_arena *arena = kp_arena_new();
    kp_object obj;
    decode_fixture(arena, "nodepool_full.json", &obj);
    const kp_nodeclaim_spec *s = &obj.u.nodepool.template;
    cr_assert_eq(s->n_requirements, 10);
    cr_expect_str_eq(s->requirements[0].key, "karpenter.k8s.aws/instance-category");
    cr_expect_eq(s->requirements[0].op, KP_OP_IN);
    cr_expect_eq(s->requirements[0].n_values, 3);
    cr_expect_eq(s->requirements[0].min_values, 2);
    cr_expect_eq(s->requirements[1].min_values, 5);
    cr_expect_eq(s->requirements[2].min_values, 0);
    cr_expect_eq(s->requirements[4].op, KP_OP_GT);
    cr_expect_eq(s->requirements[5].op, KP_OP_GTE);
    cr_expect_str_eq(s->requirements[5].values[0], "8192");
    cr_expect_eq(s->requirements[9].op, KP_OP_DOES_NOT_EXIST);
    cr_expect_eq(s->requirements[9].n_values, 0);
    cr_expect_null(s->requirements[9].values);
    kp_arena_free(arena);
}

Test(decode_nodepool, full_disruption_limits_status)
{
    kp_arena *arena = kp_arena_new();
    kp_object obj;
    decode_fixture(arena, "nodepool_full.json", &obj);
    const kp_nodepool *np = &obj.u.nodepool;
    const kp_disruption *d = &np->disruption;
    cr_expect_eq(d->consolidation_policy, KP_CONSOLIDATION_WHEN_EMPTY_OR_UNDERUTILIZED);
    cr_expect(d->has_consolidate_after);
    cr_expect_eq(d->consolidate_after.ns, INT64_C(60) * 1000000000);
    cr_expect(d->has_budgets);
    cr_assert_eq(d->n_budgets, 3);
    cr_expect_str_eq(d->budgets[0].nodes, "10%");
    cr_expect_not(d->budgets[0].has_schedule);
    cr_expect_not(d->budgets[0].has_duration);
    cr_expect_not(d->budgets[0].has_reasons);
    cr_expect_str_eq(d->budgets[1].schedule, "0 9 * * mon-fri");
    cr_expect(d->budgets[1].has_duration);
    cr_expect_eq(d->budgets[1].duration.ns, 8 * NS_PER_HOUR);
    cr_expect(d->budgets[1].has_reasons);
    cr_expect_eq(d->budgets[1].reasons, KP_REASON_DRIFTED | KP_REASON_UNDERUTILIZED);
    cr_expect(d->budgets[2].has_reasons, "an empty list is present");
    cr_expect_eq(d->budgets[2].reasons, 0);
    cr_expect_eq(MILLI(&np->limits, "cpu"), INT64_C(1000000));
    cr_expect_eq(MILLI(&np->limits, "memory"), 1000 * GI);
    cr_expect(np->has_weight);
    cr_expect_eq(np->weight, 10);
    cr_expect_not(np->has_replicas);
    cr_expect(np->has_status_nodes);
    cr_expect_eq(np->status_nodes, 2);
    cr_expect_eq(np->node_class_observed_generation, 1);
    cr_expect_eq(MILLI(&np->status_resources, "pods"), 220000);
    cr_expect(kp_conditions_is_true(&np->conditions, "Ready"));
    cr_expect_eq(kp_conditions_get(&np->conditions, "Ready")->observed_generation, 3);
    cr_expect(kp_conditions_is_true(&np->conditions, "ValidationSucceeded"));
    cr_expect_null(kp_conditions_get(&np->conditions, "NodeClassReady"));
    kp_arena_free(arena);
}

Test(decode_nodepool, minimal_leaves_defaults_to_the_reader)
{
    kp_arena *arena = kp_arena_new();
    kp_object obj;
    decode_sq(arena,
              "{'apiVersion':'karpenter.sh/v1','kind':'NodePool','metadata':{'name':'np'},"
              "'spec':{'template':{'spec':{'requirements':[],'nodeClassRef':{'name':'d'}}}}}",
              &obj);
    const kp_nodepool *np = &obj.u.nodepool;
    cr_expect_str_eq(np->meta.name, "np");
    cr_expect_eq(np->template.n_requirements, 0);
    cr_expect(np->template.has_node_class_ref);
    cr_expect_str_eq(np->template.node_class_ref.group, "");
    cr_expect_not(np->template.has_expire_after);
    cr_expect_not(np->template.has_termination_grace_period);
    cr_expect_eq(np->disruption.consolidation_policy, KP_CONSOLIDATION_UNSET);
    cr_expect_not(np->disruption.has_consolidate_after);
    cr_expect_not(np->disruption.has_budgets);
    cr_expect_not(np->has_weight);
    cr_expect_not(np->has_status_nodes);
    cr_expect_eq(np->limits.count, 0);
    cr_expect_eq(np->template_labels.count, 0);
    kp_arena_free(arena);
}

Test(decode_nodepool, never_and_balanced_and_replicas)
{
    kp_arena *arena = kp_arena_new();
    kp_object obj;
    decode_sq(arena,
              "{'apiVersion':'karpenter.sh/v1','kind':'NodePool','spec':{'template':{'spec':"
              "{'expireAfter':'Never'}},'disruption':{'consolidationPolicy':'Balanced',"
              "'consolidateAfter':'Never','budgets':[]},'replicas':3}}",
              &obj);
    const kp_nodepool *np = &obj.u.nodepool;
    cr_expect(np->template.has_expire_after);
    cr_expect(np->template.expire_after.never);
    cr_expect_eq(np->disruption.consolidation_policy, KP_CONSOLIDATION_BALANCED);
    cr_expect(np->disruption.consolidate_after.never);
    cr_expect(np->disruption.has_budgets, "[] is present: no disruption allowed by budgets");
    cr_expect_eq(np->disruption.n_budgets, 0);
    cr_expect(np->has_replicas);
    cr_expect_eq(np->replicas, 3);
    kp_arena_free(arena);
}

#define REQS(req)        "{'spec':{'template':{'spec':{'requirements':[" req "]}}}}"
#define REQS_PATH        "spec.template.spec.requirements"
#define DISRUPTION(body) "{'spec':{'disruption':" body "}}"

static const decode_error_case nodepool_errors[] = {
    {REQS("{'key':'a','operator':'In','values':['x']},{'key':'b','operator':'Exists'},"
          "{'key':'c','operator':'In','values':'x'}"),
     REQS_PATH "[2].values: expected array, got string"},
    {REQS("{'key':'a','operator':'Foo','values':['x']}"),
     REQS_PATH "[0].operator: Unsupported value: \"Foo\": supported values: \"DoesNotExist\", "
               "\"Exists\", \"Gt\", \"Gte\", \"In\", \"Lt\", \"Lte\", \"NotIn\""},
    {REQS("{'key':'a','values':['x']}"), REQS_PATH "[0].operator: Required value"},
    {REQS("{'key':'a','operator':'In','values':['x'],'minValues':1.5}"),
     REQS_PATH "[0].minValues: expected integer, got 1.5"},
    {REQS("{'key':'a','operator':'In','values':['x'],'minValues':3000000000}"),
     REQS_PATH "[0].minValues: 3000000000 is out of range for int32"},
    {REQS("{'key':'a','operator':'In','values':['x',2]}"),
     REQS_PATH "[0].values[1]: expected string, got number"},
    {"{'spec':{'template':{'spec':{'requirements':{}}}}}",
     REQS_PATH ": expected array, got object"},
    {"{'spec':{'template':{'spec':{'taints':[{'key':'k','effect':'Bar'}]}}}}",
     "spec.template.spec.taints[0].effect: Unsupported value: \"Bar\": supported values: "
     "\"NoExecute\", \"NoSchedule\", \"PreferNoSchedule\""},
    {"{'spec':{'template':{'spec':{'taints':[{'key':'k'}]}}}}",
     "spec.template.spec.taints[0].effect: Required value"},
    {"{'spec':{'template':{'spec':{'startupTaints':[{'key':1,'effect':'NoSchedule'}]}}}}",
     "spec.template.spec.startupTaints[0].key: expected string, got number"},
    {"{'spec':{'template':{'spec':{'nodeClassRef':'default'}}}}",
     "spec.template.spec.nodeClassRef: expected object, got string"},
    {"{'spec':{'template':{'spec':{'nodeClassRef':{'kind':2}}}}}",
     "spec.template.spec.nodeClassRef.kind: expected string, got number"},
    {"{'spec':{'template':{'spec':{'expireAfter':'30x'}}}}",
     "spec.template.spec.expireAfter: time: unknown unit \"x\" in duration \"30x\" at "
     "position 2"},
    {"{'spec':{'template':{'spec':{'expireAfter':720}}}}",
     "spec.template.spec.expireAfter: expected string, got number"},
    {"{'spec':{'template':{'spec':{'terminationGracePeriod':'Never'}}}}",
     "spec.template.spec.terminationGracePeriod: time: invalid duration \"Never\": unexpected "
     "character 'N' at position 0"},
    {"{'spec':{'template':{'metadata':{'labels':{'team':7}}}}}",
     "spec.template.metadata.labels[team]: expected string, got number"},
    {"{'spec':{'template':[]}}", "spec.template: expected object, got array"},
    {DISRUPTION("{'consolidationPolicy':'Sometimes'}"),
     "spec.disruption.consolidationPolicy: Unsupported value: \"Sometimes\": supported values: "
     "\"Balanced\", \"WhenEmpty\", \"WhenEmptyOrUnderutilized\""},
    {DISRUPTION("{'consolidationPolicy':1}"),
     "spec.disruption.consolidationPolicy: expected string, got number"},
    {DISRUPTION("{'consolidateAfter':5}"),
     "spec.disruption.consolidateAfter: expected string, got number"},
    {DISRUPTION("{'consolidateAfter':'soon'}"),
     "spec.disruption.consolidateAfter: time: invalid duration \"soon\": unexpected character "
     "'s' at position 0"},
    {DISRUPTION("{'budgets':[{'nodes':10}]}"),
     "spec.disruption.budgets[0].nodes: expected string, got number"},
    {DISRUPTION("{'budgets':[{'nodes':'1'},{'nodes':'1','reasons':['Empty','Bored']}]}"),
     "spec.disruption.budgets[1].reasons[1]: Unsupported value: \"Bored\": supported values: "
     "\"Drifted\", \"Empty\", \"Underutilized\""},
    {DISRUPTION("{'budgets':[{'nodes':'1','duration':'Never'}]}"),
     "spec.disruption.budgets[0].duration: ..."},
    {DISRUPTION("{'budgets':[{'nodes':'1','schedule':['@daily']}]}"),
     "spec.disruption.budgets[0].schedule: expected string, got array"},
    {DISRUPTION("{'budgets':{'nodes':'1'}}"),
     "spec.disruption.budgets: expected array, got object"},
    {"{'spec':{'limits':{'cpu':'1000x'}}}",
     "spec.limits.cpu: quantity \"1000x\": unexpected character 'x' at position 4"},
    {"{'spec':{'limits':'unlimited'}}", "spec.limits: expected object, got string"},
    {"{'spec':{'weight':'high'}}", "spec.weight: expected integer, got string"},
    {"{'spec':{'weight':2147483648}}", "spec.weight: 2147483648 is out of range for int32"},
    {"{'spec':{'replicas':0.5}}", "spec.replicas: expected integer, got 0.5"},
    {"{'status':{'nodes':'2'}}", "status.nodes: expected integer, got string"},
    {"{'status':{'resources':{'cpu':[]}}}",
     "status.resources.cpu: expected quantity (string or number), got array"},
    {"{'status':{'conditions':[{'type':'Ready','status':true}]}}",
     "status.conditions[0].status: expected string, got boolean"},
};

Test(decode_nodepool, errors)
{
    RUN_ERROR_CASES("karpenter.sh/v1", "NodePool", nodepool_errors);
}

Test(decode_nodeclaim, full)
{
    kp_arena *arena = kp_arena_new();
    kp_object obj;
    decode_fixture(arena, "nodeclaim_full.json", &obj);
    cr_assert_eq(obj.kind, KP_KIND_NODECLAIM);
    const kp_nodeclaim *nc = &obj.u.nodeclaim;
    cr_expect_str_eq(nc->meta.name, "default-8x7vq");
    cr_expect_str_eq(kp_labels_get(&nc->meta.labels, "karpenter.sh/nodepool"), "default");
    cr_expect_str_eq(nc->meta.finalizers.items[0], "karpenter.sh/termination");
    cr_expect_str_eq(nc->spec.node_class_ref.name, "default");
    cr_assert_eq(nc->spec.n_requirements, 2);
    cr_expect_eq(nc->spec.requirements[0].min_values, 1);
    cr_expect_eq(MILLI(&nc->spec.resource_requests, "cpu"), 1150);
    cr_expect_eq(MILLI(&nc->spec.resource_requests, "pods"), 5000);
    cr_expect_eq(nc->spec.n_taints, 1);
    cr_expect(nc->spec.has_expire_after);
    cr_expect(nc->spec.expire_after.never);
    cr_expect_eq(nc->spec.termination_grace_period.ns, 90 * INT64_C(60) * 1000000000);
    cr_expect_str_eq(nc->provider_id, "aws:///us-west-2a/i-0123456789abcdef0");
    cr_expect_str_eq(nc->node_name, "ip-192-168-71-87.us-west-2.compute.internal");
    cr_expect_str_eq(nc->image_id, "ami-0123456789abcdef0");
    cr_expect_eq(MILLI(&nc->capacity, "cpu"), 2000);
    cr_expect_eq(MILLI(&nc->allocatable, "cpu"), 1930);
    cr_expect(nc->last_pod_event_time.set);
    cr_assert_eq(nc->conditions.count, 4);
    cr_expect(kp_conditions_is_true(&nc->conditions, "Launched"));
    cr_expect(kp_conditions_is_true(&nc->conditions, "Registered"));
    cr_expect_eq(kp_conditions_get(&nc->conditions, "Initialized")->status, KP_CONDITION_UNKNOWN);
    cr_expect_eq(kp_conditions_get(&nc->conditions, "Drifted")->status, KP_CONDITION_FALSE);
    kp_arena_free(arena);
}

Test(decode_nodeclaim, minimal)
{
    kp_arena *arena = kp_arena_new();
    kp_object obj;
    decode_sq(arena, "{'apiVersion':'karpenter.sh/v1','kind':'NodeClaim'}", &obj);
    const kp_nodeclaim *nc = &obj.u.nodeclaim;
    cr_expect_str_eq(nc->provider_id, "");
    cr_expect_str_eq(nc->node_name, "");
    cr_expect_not(nc->spec.has_node_class_ref);
    cr_expect_str_eq(nc->spec.node_class_ref.name, "");
    cr_expect_not(nc->last_pod_event_time.set);
    cr_expect_eq(nc->conditions.count, 0);
    kp_arena_free(arena);
}

static const decode_error_case nodeclaim_errors[] = {
    {"{'spec':{'resources':{'requests':{'memory':'1Gx'}}}}",
     "spec.resources.requests.memory: quantity \"1Gx\"..."},
    {"{'spec':{'resources':[]}}", "spec.resources: expected object, got array"},
    {"{'spec':{'requirements':[{'key':'k','operator':'Lte','values':'5'}]}}",
     "spec.requirements[0].values: expected array, got string"},
    {"{'spec':{'taints':[{'key':'k','effect':'NoScheduleX'}]}}",
     "spec.taints[0].effect: Unsupported value: \"NoScheduleX\"..."},
    {"{'status':{'providerID':1}}", "status.providerID: expected string, got number"},
    {"{'status':{'capacity':'big'}}", "status.capacity: expected object, got string"},
    {"{'status':{'lastPodEventTime':'now'}}", "status.lastPodEventTime: invalid RFC 3339 time..."},
};

Test(decode_nodeclaim, errors)
{
    RUN_ERROR_CASES("karpenter.sh/v1", "NodeClaim", nodeclaim_errors);
}

/* The planner names budget reasons and policies with the decoder's tables. */
Test(decode_nodepool, budget_reasons_and_policies_by_the_crds_names)
{
    cr_expect_eq(kp_budget_reason_bit("Drifted"), KP_REASON_DRIFTED);
    cr_expect_eq(kp_budget_reason_bit("Empty"), KP_REASON_EMPTY);
    cr_expect_eq(kp_budget_reason_bit("Underutilized"), KP_REASON_UNDERUTILIZED);
    cr_expect_eq(kp_budget_reason_bit("drifted"), 0u, "names are case-sensitive");
    cr_expect_eq(kp_budget_reason_bit(NULL), 0u);
    cr_expect_str_eq(kp_consolidation_policy_name(KP_CONSOLIDATION_BALANCED), "Balanced");
    cr_expect_str_eq(kp_consolidation_policy_name(KP_CONSOLIDATION_WHEN_EMPTY), "WhenEmpty");
    cr_expect_str_eq(kp_consolidation_policy_name(KP_CONSOLIDATION_UNSET),
                     "WhenEmptyOrUnderutilized");
}
