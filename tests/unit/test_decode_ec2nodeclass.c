/*
 * Decoding the AWS provider's EC2NodeClass (karpenter.k8s.aws/v1).
 */
#include "test_decode_util.h"

#define GI (INT64_C(1024) * 1024 * 1024 * 1000)

Test(decode_ec2nodeclass, full_selector_terms)
{
    kp_arena *arena = kp_arena_new();
    kp_object obj;
    decode_fixture(arena, "ec2nodeclass_full.json", &obj);
    cr_assert_eq(obj.kind, KP_KIND_EC2NODECLASS);
    const kp_ec2nodeclass *c = &obj.u.ec2nodeclass;
    cr_expect_str_eq(c->meta.name, "default");
    cr_expect_str_eq(c->ami_family, "AL2023");
    cr_assert_eq(c->n_ami_selector_terms, 5);
    cr_expect_str_eq(c->ami_selector_terms[0].alias, "al2023@v20240807");
    cr_expect_str_eq(kp_labels_get(&c->ami_selector_terms[1].tags, "karpenter.sh/discovery"),
                     "my-cluster");
    cr_expect_str_eq(c->ami_selector_terms[2].name, "my-ami");
    cr_expect_str_eq(c->ami_selector_terms[2].owner, "self");
    cr_expect_str_eq(c->ami_selector_terms[3].id, "ami-123");
    cr_expect(strncmp(c->ami_selector_terms[4].ssm_parameter, "/aws/service/eks", 16) == 0);
    cr_assert_eq(c->n_subnet_selector_terms, 2);
    cr_expect_eq(c->subnet_selector_terms[0].tags.count, 2);
    cr_expect_str_eq(c->subnet_selector_terms[1].id, "subnet-09fa4a0a8f233a921");
    cr_assert_eq(c->n_security_group_selector_terms, 3);
    cr_expect_str_eq(c->security_group_selector_terms[1].name, "my-security-group");
    cr_assert_eq(c->n_capacity_reservation_selector_terms, 2);
    cr_expect_str_eq(c->capacity_reservation_selector_terms[1].owner_id, "012345678901");
    cr_expect_str_eq(c->capacity_reservation_selector_terms[1].instance_match_criteria, "targeted");
    kp_arena_free(arena);
}

Test(decode_ec2nodeclass, full_launch_fields)
{
    kp_arena *arena = kp_arena_new();
    kp_object obj;
    decode_fixture(arena, "ec2nodeclass_full.json", &obj);
    const kp_ec2nodeclass *c = &obj.u.ec2nodeclass;
    cr_expect_str_eq(c->role, "KarpenterNodeRole-my-cluster");
    cr_expect_str_eq(c->instance_profile, "");
    cr_expect_str_eq(kp_labels_get(&c->tags, "team"), "team-a");
    cr_expect(c->has_user_data);
    cr_expect_str_eq(c->user_data, "echo \"Hello world\"");
    cr_expect_eq(c->instance_store_policy, KP_INSTANCE_STORE_RAID0);
    cr_expect(c->has_detailed_monitoring);
    cr_expect(c->detailed_monitoring);
    cr_expect(c->has_associate_public_ip_address);
    cr_expect_not(c->associate_public_ip_address);
    cr_expect_str_eq(c->context, "cr-123");
    cr_expect(c->metadata_options.present);
    cr_expect_str_eq(c->metadata_options.http_tokens, "required");
    cr_expect(c->metadata_options.has_http_put_response_hop_limit);
    cr_expect_eq(c->metadata_options.http_put_response_hop_limit, 1);
    cr_assert_eq(c->n_block_device_mappings, 2);
    const kp_block_device_mapping *b = &c->block_device_mappings[0];
    cr_expect_str_eq(b->device_name, "/dev/xvda");
    cr_expect(b->root_volume);
    cr_expect(b->has_ebs);
    cr_expect(b->ebs.has_volume_size);
    cr_expect_eq(b->ebs.volume_size.milli, 100 * GI);
    cr_expect_str_eq(b->ebs.volume_type, "gp3");
    cr_expect_eq(b->ebs.iops, 10000);
    cr_expect(b->ebs.encrypted);
    cr_expect_eq(b->ebs.throughput, 125);
    cr_expect_eq(b->ebs.volume_initialization_rate, 100);
    cr_expect_str_eq(b->ebs.snapshot_id, "snap-0123456789");
    cr_expect_not(c->block_device_mappings[1].has_ebs);
    cr_expect_not(c->block_device_mappings[1].ebs.has_iops);
    cr_expect_str_eq(c->block_device_mappings[1].ebs.volume_type, "");
    kp_arena_free(arena);
}

Test(decode_ec2nodeclass, full_kubelet)
{
    kp_arena *arena = kp_arena_new();
    kp_object obj;
    decode_fixture(arena, "ec2nodeclass_full.json", &obj);
    const kp_kubelet_config *k = &obj.u.ec2nodeclass.kubelet;
    cr_expect(k->present);
    cr_expect(k->has_max_pods);
    cr_expect_eq(k->max_pods, 20);
    cr_expect_str_eq(k->max_pods_expr, "");
    cr_expect(k->has_pods_per_core);
    cr_expect_eq(k->pods_per_core, 2);
    cr_expect_str_eq(kp_labels_get(&k->system_reserved, "cpu"), "100m");
    cr_expect_str_eq(kp_labels_get(&k->kube_reserved, "ephemeral-storage"), "3Gi");
    cr_expect_str_eq(kp_labels_get(&k->eviction_hard, "memory.available"), "5%");
    cr_expect_str_eq(kp_labels_get(&k->eviction_soft, "memory.available"), "500Mi");
    cr_expect_str_eq(kp_labels_get(&k->eviction_soft_grace_period, "nodefs.available"), "1m30s");
    cr_expect_eq(k->eviction_max_pod_grace_period, 60);
    cr_expect_eq(k->image_gc_high_threshold_percent, 85);
    cr_expect_eq(k->image_gc_low_threshold_percent, 80);
    cr_expect(k->has_cpu_cfs_quota);
    cr_expect(k->cpu_cfs_quota);
    cr_expect_str_eq(k->cluster_dns.items[0], "10.0.1.100");
    cr_expect_not_null(strstr(k->raw_json, "\"registryPullQPS\":10"), "%s", k->raw_json);
    kp_arena_free(arena);
}

Test(decode_ec2nodeclass, full_status)
{
    kp_arena *arena = kp_arena_new();
    kp_object obj;
    decode_fixture(arena, "ec2nodeclass_full.json", &obj);
    const kp_ec2nodeclass *c = &obj.u.ec2nodeclass;
    cr_assert_eq(c->n_status_subnets, 2);
    cr_expect_str_eq(c->status_subnets[1].zone, "us-east-2c");
    cr_expect_str_eq(c->status_subnets[1].zone_id, "use2-az3");
    cr_assert_eq(c->n_status_security_groups, 2);
    cr_expect_str_eq(c->status_security_groups[1].name, "");
    cr_assert_eq(c->n_status_amis, 2);
    cr_expect_not(c->status_amis[0].deprecated);
    cr_expect(c->status_amis[1].deprecated);
    cr_assert_eq(c->status_amis[1].n_requirements, 2);
    cr_expect_eq(c->status_amis[1].requirements[1].op, KP_OP_DOES_NOT_EXIST);
    cr_expect_str_eq(c->status_instance_profile, "my-cluster_1234567890");
    cr_expect(kp_conditions_is_true(&c->conditions, "Ready"));
    kp_arena_free(arena);
}

Test(decode_ec2nodeclass, minimal_and_max_pods_expression)
{
    kp_arena *arena = kp_arena_new();
    kp_object obj;
    decode_sq(arena,
              "{'apiVersion':'karpenter.k8s.aws/v1','kind':'EC2NodeClass','spec':{'kubelet':"
              "{'maxPods':'self.cpu * 4'},'amiSelectorTerms':[{'alias':'bottlerocket@latest'}]}}",
              &obj);
    const kp_ec2nodeclass *c = &obj.u.ec2nodeclass;
    cr_expect_str_eq(c->ami_family, "");
    cr_expect_not(c->kubelet.has_max_pods);
    cr_expect_str_eq(c->kubelet.max_pods_expr, "self.cpu * 4");
    cr_expect_not(c->has_user_data);
    cr_expect_not(c->has_detailed_monitoring);
    cr_expect_not(c->metadata_options.present);
    cr_expect_str_eq(c->metadata_options.http_tokens, "");
    cr_expect_eq(c->instance_store_policy, KP_INSTANCE_STORE_UNSET);
    cr_expect_eq(c->n_status_amis, 0);
    kp_arena_free(arena);

    arena = kp_arena_new();
    decode_sq(arena, "{'apiVersion':'karpenter.k8s.aws/v1','kind':'EC2NodeClass'}", &obj);
    cr_expect_not(obj.u.ec2nodeclass.kubelet.present);
    cr_expect_str_eq(obj.u.ec2nodeclass.kubelet.raw_json, "");
    cr_expect_str_eq(obj.u.ec2nodeclass.kubelet.max_pods_expr, "");
    kp_arena_free(arena);
}

Test(decode_ec2nodeclass, network_interface_efa_placement_group_cpu_and_ip_prefix)
{
    kp_arena *arena = kp_arena_new();
    kp_object obj;
    decode_sq(arena,
              "{'apiVersion':'karpenter.k8s.aws/v1','kind':'EC2NodeClass','spec':{"
              "'networkInterfaces':[{'networkCardIndex':0,'deviceIndex':0,'interfaceType':"
              "'interface'},{'networkCardIndex':1,'deviceIndex':1,'interfaceType':'efa-only'}],"
              "'ipPrefixCount':2,'placementGroupSelector':{'name':'training'},"
              "'cpuOptions':{'nestedVirtualization':'enabled'},"
              "'connectionTracking':{'tcpEstablishedTimeout':3600,'udpTimeout':30}}}",
              &obj);
    const kp_ec2nodeclass *c = &obj.u.ec2nodeclass;
    cr_assert_eq(c->n_network_interfaces, 2);
    cr_expect_eq(c->network_interfaces[1].network_card_index, 1);
    cr_expect_eq(c->network_interfaces[1].device_index, 1);
    cr_expect_str_eq(c->network_interfaces[1].interface_type, "efa-only");
    cr_expect(c->has_ip_prefix_count);
    cr_expect_eq(c->ip_prefix_count, 2);
    cr_expect(c->has_placement_group_selector);
    cr_expect_str_eq(c->placement_group_name, "training");
    cr_expect_str_eq(c->placement_group_id, "");
    cr_expect_str_eq(c->nested_virtualization, "enabled");
    cr_expect(c->connection_tracking.present);
    cr_expect(c->connection_tracking.has_tcp_established_timeout);
    cr_expect_eq(c->connection_tracking.tcp_established_timeout, 3600);
    cr_expect_not(c->connection_tracking.has_udp_stream_timeout);
    cr_expect_eq(c->connection_tracking.udp_timeout, 30);
    kp_arena_free(arena);

    arena = kp_arena_new();
    decode_sq(arena, "{'apiVersion':'karpenter.k8s.aws/v1','kind':'EC2NodeClass','spec':{}}", &obj);
    c = &obj.u.ec2nodeclass;
    cr_expect_eq(c->n_network_interfaces, 0);
    cr_expect_not(c->has_ip_prefix_count);
    cr_expect_not(c->has_placement_group_selector);
    cr_expect_not(c->connection_tracking.present);
    cr_expect(!c->nested_virtualization || !*c->nested_virtualization);
    kp_arena_free(arena);
}

Test(decode_ec2nodeclass, status_capacity_reservations)
{
    kp_arena *arena = kp_arena_new();
    kp_object obj;
    decode_sq(arena,
              "{'apiVersion':'karpenter.k8s.aws/v1','kind':'EC2NodeClass','status':{"
              "'capacityReservations':[{'id':'cr-1','availabilityZone':'us-west-2a',"
              "'instanceType':'p5.48xlarge','ownerID':'012345678901','instanceMatchCriteria':"
              "'targeted','reservationType':'capacity-block','state':'expiring',"
              "'endTime':'2026-01-01T10:00:00Z'},{'id':'cr-2','availabilityZone':'us-west-2b',"
              "'instanceType':'m5.large','ownerID':'012345678901','instanceMatchCriteria':'open',"
              "'interruptible':true}]}}",
              &obj);
    const kp_ec2nodeclass *c = &obj.u.ec2nodeclass;
    cr_assert_eq(c->n_status_capacity_reservations, 2);
    const kp_nc_capacity_reservation *r = &c->status_capacity_reservations[0];
    cr_expect_str_eq(r->id, "cr-1");
    cr_expect_str_eq(r->availability_zone, "us-west-2a");
    cr_expect_str_eq(r->instance_type, "p5.48xlarge");
    cr_expect_str_eq(r->reservation_type, "capacity-block");
    cr_expect_str_eq(r->state, "expiring");
    cr_expect(r->end_time.set);
    cr_expect_eq(r->end_time.ns, INT64_C(1767261600) * 1000000000);
    cr_expect_not(r->interruptible);
    cr_expect(c->status_capacity_reservations[1].interruptible);
    cr_expect_str_eq(c->status_capacity_reservations[1].reservation_type, "");
    cr_expect_not(c->status_capacity_reservations[1].end_time.set);
    kp_arena_free(arena);
}

static const decode_error_case errors[] = {
    {"{'spec':{'networkInterfaces':[{'networkCardIndex':'0'}]}}",
     "spec.networkInterfaces[0].networkCardIndex: expected integer, got string"},
    {"{'spec':{'networkInterfaces':{}}}", "spec.networkInterfaces: expected array, got object"},
    {"{'spec':{'ipPrefixCount':1.5}}", "spec.ipPrefixCount: expected integer, got 1.5"},
    {"{'spec':{'placementGroupSelector':{'id':7}}}",
     "spec.placementGroupSelector.id: expected string, got number"},
    {"{'spec':{'cpuOptions':{'nestedVirtualization':true}}}",
     "spec.cpuOptions.nestedVirtualization: expected string, got boolean"},
    {"{'spec':{'connectionTracking':{'udpTimeout':'30'}}}",
     "spec.connectionTracking.udpTimeout: expected integer, got string"},
    {"{'status':{'capacityReservations':[{'interruptible':'yes'}]}}",
     "status.capacityReservations[0].interruptible: expected boolean, got string"},
    {"{'status':{'capacityReservations':[{'endTime':'tomorrow'}]}}",
     "status.capacityReservations[0].endTime: ..."},
    {"{'spec':{'amiSelectorTerms':[{'tags':{'Name':1}}]}}",
     "spec.amiSelectorTerms[0].tags[Name]: expected string, got number"},
    {"{'spec':{'amiSelectorTerms':[{'alias':false}]}}",
     "spec.amiSelectorTerms[0].alias: expected string, got boolean"},
    {"{'spec':{'subnetSelectorTerms':{'id':'subnet-1'}}}",
     "spec.subnetSelectorTerms: expected array, got object"},
    {"{'spec':{'securityGroupSelectorTerms':[{},{'name':1}]}}",
     "spec.securityGroupSelectorTerms[1].name: expected string, got number"},
    {"{'spec':{'role':['r']}}", "spec.role: expected string, got array"},
    {"{'spec':{'tags':['a']}}", "spec.tags: expected object, got array"},
    {"{'spec':{'kubelet':{'maxPods':1.5}}}", "spec.kubelet.maxPods: expected integer, got 1.5"},
    {"{'spec':{'kubelet':{'maxPods':true}}}",
     "spec.kubelet.maxPods: expected integer or string, got boolean"},
    {"{'spec':{'kubelet':{'podsPerCore':2147483648}}}",
     "spec.kubelet.podsPerCore: 2147483648 is out of range for int32"},
    {"{'spec':{'kubelet':{'systemReserved':{'cpu':1}}}}",
     "spec.kubelet.systemReserved[cpu]: expected string, got number"},
    {"{'spec':{'kubelet':{'clusterDNS':[1]}}}",
     "spec.kubelet.clusterDNS[0]: expected string, got number"},
    {"{'spec':{'kubelet':{'cpuCFSQuota':'true'}}}",
     "spec.kubelet.cpuCFSQuota: expected boolean, got string"},
    {"{'spec':{'kubelet':{'imageGCHighThresholdPercent':85.5}}}",
     "spec.kubelet.imageGCHighThresholdPercent: expected integer, got 85.5"},
    {"{'spec':{'kubelet':[]}}", "spec.kubelet: expected object, got array"},
    {"{'spec':{'blockDeviceMappings':[{'ebs':{'volumeSize':'20Gx'}}]}}",
     "spec.blockDeviceMappings[0].ebs.volumeSize: quantity \"20Gx\"..."},
    {"{'spec':{'blockDeviceMappings':[{'ebs':{'iops':1.5}}]}}",
     "spec.blockDeviceMappings[0].ebs.iops: expected integer, got 1.5"},
    {"{'spec':{'blockDeviceMappings':[{'rootVolume':'yes'}]}}",
     "spec.blockDeviceMappings[0].rootVolume: expected boolean, got string"},
    {"{'spec':{'metadataOptions':{'httpPutResponseHopLimit':'1'}}}",
     "spec.metadataOptions.httpPutResponseHopLimit: expected integer, got string"},
    {"{'spec':{'instanceStorePolicy':'RAID5'}}",
     "spec.instanceStorePolicy: Unsupported value: \"RAID5\": supported values: \"RAID0\""},
    {"{'spec':{'associatePublicIPAddress':'yes'}}",
     "spec.associatePublicIPAddress: expected boolean, got string"},
    {"{'spec':{'userData':{}}}", "spec.userData: expected string, got object"},
    {"{'status':{'amis':[{'requirements':[{'key':'k','operator':'Foo'}]}]}}",
     "status.amis[0].requirements[0].operator: Unsupported value: \"Foo\"..."},
    {"{'status':{'subnets':[{'zone':1}]}}", "status.subnets[0].zone: expected string, got number"},
    {"{'status':{'amis':[{'deprecated':'no'}]}}",
     "status.amis[0].deprecated: expected boolean, got string"},
};

Test(decode_ec2nodeclass, errors)
{
    RUN_ERROR_CASES("karpenter.k8s.aws/v1", "EC2NodeClass", errors);
}
