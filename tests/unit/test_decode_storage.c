/*
 * Decoding PersistentVolumeClaims, PersistentVolumes and StorageClasses.
 */
#include "test_decode_util.h"

#define GI (INT64_C(1024) * 1024 * 1024 * 1000)

Test(decode_pvc, full)
{
    kp_arena *arena = kp_arena_new();
    kp_object obj;
    decode_sq(arena,
              "{'apiVersion':'v1','kind':'PersistentVolumeClaim','metadata':{'name':'pgdata-db-0',"
              "'namespace':'data'},'spec':{'accessModes':['ReadWriteOnce'],'storageClassName':"
              "'gp3','volumeName':'pvc-3f9c1d2e','resources':{'requests':{'storage':'100Gi'}}},"
              "'status':{'phase':'Bound','capacity':{'storage':'100Gi'}}}",
              &obj);
    cr_assert_eq(obj.kind, KP_KIND_PVC);
    const kp_pvc *p = &obj.u.pvc;
    cr_expect_str_eq(p->meta.namespace, "data");
    cr_expect(p->has_storage_class_name);
    cr_expect_str_eq(p->storage_class_name, "gp3");
    cr_expect_str_eq(p->volume_name, "pvc-3f9c1d2e");
    cr_expect_eq(p->access_modes.count, 1);
    cr_expect_eq(MILLI(&p->requests, "storage"), 100 * GI);
    cr_expect_eq(p->phase, KP_PVC_PHASE_BOUND);
    kp_arena_free(arena);
}

Test(decode_pvc, absent_and_empty_storage_class_differ)
{
    kp_arena *arena = kp_arena_new();
    kp_object obj;
    decode_sq(arena, "{'apiVersion':'v1','kind':'PersistentVolumeClaim','spec':{}}", &obj);
    cr_expect_not(obj.u.pvc.has_storage_class_name, "absent: the default class applies");
    cr_expect_str_eq(obj.u.pvc.storage_class_name, "");
    cr_expect_eq(obj.u.pvc.phase, KP_PVC_PHASE_UNSET);
    decode_sq(arena,
              "{'apiVersion':'v1','kind':'PersistentVolumeClaim','spec':{'storageClassName':''}}",
              &obj);
    cr_expect(obj.u.pvc.has_storage_class_name, "\"\": explicitly no class");
    cr_expect_str_eq(obj.u.pvc.storage_class_name, "");
    kp_arena_free(arena);
}

static const decode_error_case pvc_errors[] = {
    {"{'spec':{'storageClassName':5}}", "spec.storageClassName: expected string, got number"},
    {"{'spec':{'accessModes':'ReadWriteOnce'}}", "spec.accessModes: expected array, got string"},
    {"{'spec':{'resources':{'requests':{'storage':'100GB'}}}}",
     "spec.resources.requests.storage: quantity \"100GB\"..."},
    {"{'status':{'phase':'Gone'}}",
     "status.phase: Unsupported value: \"Gone\": supported values: \"Bound\", \"Lost\", "
     "\"Pending\""},
};

Test(decode_pvc, errors)
{
    RUN_ERROR_CASES("v1", "PersistentVolumeClaim", pvc_errors);
}

Test(decode_pv, full)
{
    kp_arena *arena = kp_arena_new();
    kp_object obj;
    decode_fixture(arena, "pv.json", &obj);
    cr_assert_eq(obj.kind, KP_KIND_PV);
    const kp_pv *pv = &obj.u.pv;
    cr_expect_str_eq(pv->meta.name, "pvc-3f9c1d2e");
    cr_expect(pv->has_node_affinity);
    cr_assert_eq(pv->n_node_affinity, 1);
    cr_expect_str_eq(pv->node_affinity[0].match_expressions[0].key, "topology.kubernetes.io/zone");
    cr_expect_str_eq(pv->node_affinity[0].match_expressions[0].values[0], "us-west-2a");
    cr_expect_str_eq(pv->storage_class_name, "gp3");
    cr_expect(pv->has_claim_ref);
    cr_expect_str_eq(pv->claim_namespace, "data");
    cr_expect_str_eq(pv->claim_name, "pgdata-db-0");
    cr_expect_eq(MILLI(&pv->capacity, "storage"), 100 * GI);
    cr_expect_str_eq(pv->csi_driver, "ebs.csi.aws.com");
    kp_arena_free(arena);
}

Test(decode_pv, minimal)
{
    kp_arena *arena = kp_arena_new();
    kp_object obj;
    decode_sq(arena,
              "{'apiVersion':'v1','kind':'PersistentVolume','spec':{'hostPath':{'path':'/x'}}}",
              &obj);
    cr_expect_not(obj.u.pv.has_node_affinity);
    cr_expect_not(obj.u.pv.has_claim_ref);
    cr_expect_str_eq(obj.u.pv.claim_name, "");
    cr_expect_str_eq(obj.u.pv.csi_driver, "");
    kp_arena_free(arena);
}

static const decode_error_case pv_errors[] = {
    {"{'spec':{'nodeAffinity':{'required':{'nodeSelectorTerms':[{'matchExpressions':"
     "[{'key':'zone','operator':'Foo'}]}]}}}}",
     "spec.nodeAffinity.required.nodeSelectorTerms[0].matchExpressions[0].operator: Unsupported "
     "value: \"Foo\"..."},
    {"{'spec':{'nodeAffinity':{'required':[]}}}",
     "spec.nodeAffinity.required: expected object, got array"},
    {"{'spec':{'claimRef':{'name':1}}}", "spec.claimRef.name: expected string, got number"},
    {"{'spec':{'capacity':{'storage':'lots'}}}", "spec.capacity.storage: quantity \"lots\"..."},
    {"{'spec':{'csi':{'driver':true}}}", "spec.csi.driver: expected string, got boolean"},
};

Test(decode_pv, errors)
{
    RUN_ERROR_CASES("v1", "PersistentVolume", pv_errors);
}

Test(decode_storage_class, full)
{
    kp_arena *arena = kp_arena_new();
    kp_object obj;
    decode_sq(arena,
              "{'apiVersion':'storage.k8s.io/v1','kind':'StorageClass','metadata':{'name':'gp3',"
              "'annotations':{'storageclass.kubernetes.io/is-default-class':'true'}},"
              "'provisioner':'ebs.csi.aws.com','volumeBindingMode':'WaitForFirstConsumer',"
              "'parameters':{'type':'gp3'},'allowedTopologies':[{'matchLabelExpressions':"
              "[{'key':'topology.ebs.csi.aws.com/zone','values':['us-west-2a','us-west-2b']}]}]}",
              &obj);
    cr_assert_eq(obj.kind, KP_KIND_STORAGE_CLASS);
    const kp_storage_class *sc = &obj.u.storage_class;
    cr_expect_str_eq(sc->provisioner, "ebs.csi.aws.com");
    cr_expect_eq(sc->volume_binding_mode, KP_BINDING_WAIT_FOR_FIRST_CONSUMER);
    cr_assert_eq(sc->n_allowed_topologies, 1);
    cr_assert_eq(sc->allowed_topologies[0].n_match_expressions, 1);
    const kp_selector_req *r = &sc->allowed_topologies[0].match_expressions[0];
    cr_expect_str_eq(r->key, "topology.ebs.csi.aws.com/zone");
    cr_expect_eq(r->op, KP_OP_IN);
    cr_expect_eq(r->n_values, 2);
    kp_arena_free(arena);
}

Test(decode_storage_class, minimal_is_immediate)
{
    kp_arena *arena = kp_arena_new();
    kp_object obj;
    decode_sq(arena, "{'apiVersion':'storage.k8s.io/v1','kind':'StorageClass'}", &obj);
    cr_expect_eq(obj.u.storage_class.volume_binding_mode, KP_BINDING_IMMEDIATE);
    cr_expect_str_eq(obj.u.storage_class.provisioner, "");
    cr_expect_eq(obj.u.storage_class.n_allowed_topologies, 0);
    kp_arena_free(arena);
}

static const decode_error_case sc_errors[] = {
    {"{'volumeBindingMode':'Later'}",
     "volumeBindingMode: Unsupported value: \"Later\": supported values: \"Immediate\", "
     "\"WaitForFirstConsumer\""},
    {"{'provisioner':1}", "provisioner: expected string, got number"},
    {"{'allowedTopologies':[{'matchLabelExpressions':[{'key':'zone','values':'a'}]}]}",
     "allowedTopologies[0].matchLabelExpressions[0].values: expected array, got string"},
    {"{'allowedTopologies':{}}", "allowedTopologies: expected array, got object"},
};

Test(decode_storage_class, errors)
{
    RUN_ERROR_CASES("storage.k8s.io/v1", "StorageClass", sc_errors);
}

Test(decode_pv, in_tree_ebs_counts_as_the_ebs_csi_driver)
{
    kp_arena *arena = kp_arena_new();
    kp_object obj;
    decode_sq(arena,
              "{'apiVersion':'v1','kind':'PersistentVolume','spec':{'awsElasticBlockStore':{'"
              "volumeID':'vol-1'}}}",
              &obj);
    cr_expect_str_eq(obj.u.pv.csi_driver, "ebs.csi.aws.com");
    kp_arena_free(arena);
}

Test(decode_csinode, full)
{
    kp_arena *arena = kp_arena_new();
    kp_object obj;
    decode_sq(
        arena,
        "{'apiVersion':'storage.k8s.io/v1','kind':'CSINode','metadata':{'name':'ip-10-0-1-2'},"
        "'spec':{'drivers':[{'name':'ebs.csi.aws.com','nodeID':'i-1','allocatable':{'count':25},"
        "'topologyKeys':['topology.ebs.csi.aws.com/"
        "zone']},{'name':'efs.csi.aws.com','nodeID':'i-1'}]}}",
        &obj);
    cr_assert_eq(obj.kind, KP_KIND_CSINODE);
    const kp_csinode *n = &obj.u.csinode;
    cr_expect_str_eq(n->meta.name, "ip-10-0-1-2");
    cr_assert_eq(n->n_drivers, 2);
    cr_expect_str_eq(n->drivers[0].name, "ebs.csi.aws.com");
    cr_expect(n->drivers[0].has_count);
    cr_expect_eq(n->drivers[0].count, 25);
    cr_expect_not(n->drivers[1].has_count, "no allocatable: no limit");
    kp_arena_free(arena);
}

static const decode_error_case csinode_errors[] = {
    {"{'spec':{'drivers':[{'name':'d','allocatable':{'count':-1}}]}}",
     "spec.drivers[0].allocatable.count: Invalid value: -1: must be greater than or equal to 0"},
    {"{'spec':{'drivers':[{'name':'d','allocatable':{'count':'x'}}]}}",
     "spec.drivers[0].allocatable.count: expected..."},
    {"{'spec':{'drivers':{}}}", "spec.drivers: expected array, got object"},
};

Test(decode_csinode, errors)
{
    RUN_ERROR_CASES("storage.k8s.io/v1", "CSINode", csinode_errors);
}
