/*
 * Informer memory per object: what the cache holds for a Pod, a Node and a
 * NodeClaim as the API server returns them in the kwok e2e cluster (with
 * managedFields, kwok's container statuses and node conditions), whole and as
 * kube/informer_transform.h trims them (and shares their well-known names and
 * values). Figures only: nothing is asserted.
 *
 *   bench_informer [COUNT]      default 2000 copies of each
 */
#include "kube/informer_transform.h"

#include <cjson/cJSON.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One pod, node and NodeClaim of the e2e bench's cluster (kube-apiserver 1.20, kwok). */
static const char pod_json[] =
    "{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"large-000001\",\"namespace\":\"benc"
    "h-large\",\"uid\":\"c4661f19-1b59-4766-84e7-3146aa2e1ece\",\"resourceVersion\":\"6328\",\"creationTi"
    "mestamp\":\"2026-11-26T20:13:25Z\",\"labels\":{\"app\":\"large\"},\"managedFields\":[{\"manager\":\""
    "unknown\",\"operation\":\"Update\",\"apiVersion\":\"v1\",\"time\":\"2026-11-26T20:13:25Z\",\"fieldsT"
    "ype\":\"FieldsV1\",\"fieldsV1\":{\"f:metadata\":{\"f:labels\":{\".\":{},\"f:app\":{}}},\"f:spec\":{\""
    "f:containers\":{\"k:{\\\"name\\\":\\\"c\\\"}\":{\".\":{},\"f:image\":{},\"f:imagePullPolicy\":{},\"f"
    ":name\":{},\"f:resources\":{\".\":{},\"f:requests\":{\".\":{},\"f:cpu\":{},\"f:memory\":{}}},\"f:ter"
    "minationMessagePath\":{},\"f:terminationMessagePolicy\":{}}},\"f:dnsPolicy\":{},\"f:enableServiceLin"
    "ks\":{},\"f:restartPolicy\":{},\"f:schedulerName\":{},\"f:securityContext\":{},\"f:terminationGraceP"
    "eriodSeconds\":{}}}},{\"manager\":\"kube-scheduler\",\"operation\":\"Update\",\"apiVersion\":\"v1\","
    "\"time\":\"2026-11-26T20:13:27Z\",\"fieldsType\":\"FieldsV1\",\"fieldsV1\":{\"f:status\":{\"f:condit"
    "ions\":{\".\":{},\"k:{\\\"type\\\":\\\"PodScheduled\\\"}\":{\".\":{},\"f:lastProbeTime\":{},\"f:last"
    "TransitionTime\":{},\"f:message\":{},\"f:reason\":{},\"f:status\":{},\"f:type\":{}}}}}},{\"manager\""
    ":\"karpenter-c\",\"operation\":\"Update\",\"apiVersion\":\"v1\",\"time\":\"2026-11-26T20:13:51Z\",\""
    "fieldsType\":\"FieldsV1\",\"fieldsV1\":{\"f:status\":{\"f:conditions\":{\"k:{\\\"type\\\":\\\"Contai"
    "nersReady\\\"}\":{\".\":{},\"f:lastProbeTime\":{},\"f:lastTransitionTime\":{},\"f:status\":{},\"f:ty"
    "pe\":{}},\"k:{\\\"type\\\":\\\"Initialized\\\"}\":{\".\":{},\"f:lastProbeTime\":{},\"f:lastTransitio"
    "nTime\":{},\"f:status\":{},\"f:type\":{}},\"k:{\\\"type\\\":\\\"Ready\\\"}\":{\".\":{},\"f:lastProbe"
    "Time\":{},\"f:lastTransitionTime\":{},\"f:status\":{},\"f:type\":{}}},\"f:containerStatuses\":{},\"f"
    ":hostIP\":{},\"f:phase\":{},\"f:podIP\":{},\"f:podIPs\":{\".\":{},\"k:{\\\"ip\\\":\\\"10.244.235.110"
    "\\\"}\":{\".\":{},\"f:ip\":{}}},\"f:startTime\":{}}}}]},\"spec\":{\"volumes\":[{\"name\":\"default-t"
    "oken-t9gf2\",\"secret\":{\"secretName\":\"default-token-t9gf2\",\"defaultMode\":420}}],\"containers\""
    ":[{\"name\":\"c\",\"image\":\"registry.k8s.io/pause:3.7\",\"resources\":{\"requests\":{\"cpu\":\"750"
    "m\",\"memory\":\"64Mi\"}},\"volumeMounts\":[{\"name\":\"default-token-t9gf2\",\"readOnly\":true,\"mo"
    "untPath\":\"/var/run/secrets/kubernetes.io/serviceaccount\"}],\"terminationMessagePath\":\"/dev/term"
    "ination-log\",\"terminationMessagePolicy\":\"File\",\"imagePullPolicy\":\"IfNotPresent\"}],\"restart"
    "Policy\":\"Always\",\"terminationGracePeriodSeconds\":0,\"dnsPolicy\":\"ClusterFirst\",\"serviceAcco"
    "untName\":\"default\",\"serviceAccount\":\"default\",\"nodeName\":\"default-llmzq\",\"securityContex"
    "t\":{},\"schedulerName\":\"bench-scheduler\",\"tolerations\":[{\"key\":\"node.kubernetes.io/not-read"
    "y\",\"operator\":\"Exists\",\"effect\":\"NoExecute\",\"tolerationSeconds\":300},{\"key\":\"node.kube"
    "rnetes.io/unreachable\",\"operator\":\"Exists\",\"effect\":\"NoExecute\",\"tolerationSeconds\":300}]"
    ",\"priority\":0,\"enableServiceLinks\":true,\"preemptionPolicy\":\"PreemptLowerPriority\"},\"status\""
    ":{\"phase\":\"Running\",\"conditions\":[{\"type\":\"Initialized\",\"status\":\"True\",\"lastProbeTim"
    "e\":null,\"lastTransitionTime\":\"2026-11-26T20:13:51Z\"},{\"type\":\"Ready\",\"status\":\"True\",\""
    "lastProbeTime\":null,\"lastTransitionTime\":\"2026-11-26T20:13:51Z\"},{\"type\":\"ContainersReady\","
    "\"status\":\"True\",\"lastProbeTime\":null,\"lastTransitionTime\":\"2026-11-26T20:13:51Z\"},{\"type\""
    ":\"PodScheduled\",\"status\":\"True\",\"lastProbeTime\":null,\"lastTransitionTime\":\"2026-11-26T20:"
    "13:50Z\"}],\"hostIP\":\"10.91.131.138\",\"podIP\":\"10.244.235.110\",\"podIPs\":[{\"ip\":\"10.244.23"
    "5.110\"}],\"startTime\":\"2026-11-26T20:13:51Z\",\"containerStatuses\":[{\"name\":\"c\",\"state\":{\""
    "running\":{\"startedAt\":\"2026-11-26T20:13:51Z\"}},\"lastState\":{},\"ready\":true,\"restartCount\""
    ":0,\"image\":\"registry.k8s.io/pause:3.7\",\"imageID\":\"\",\"containerID\":\"kwok://c4661f19-1b59-4"
    "766-84e7-3146aa2e1ece-c\",\"started\":true}],\"qosClass\":\"Burstable\"}}";

static const char node_json[] =
    "{\"kind\":\"Node\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"default-222zc\",\"uid\":\"83dcb44a"
    "-f4b6-4f2f-9137-79af3ae3d3ba\",\"resourceVersion\":\"109406\",\"creationTimestamp\":\"2026-11-26T20:"
    "28:46Z\",\"labels\":{\"karpenter.k8s.aws/ec2nodeclass\":\"default\",\"karpenter.k8s.aws/instance-cap"
    "ability-flex\":\"false\",\"karpenter.k8s.aws/instance-category\":\"c\",\"karpenter.k8s.aws/instance-"
    "cpu\":\"8\",\"karpenter.k8s.aws/instance-cpu-manufacturer\":\"intel\",\"karpenter.k8s.aws/instance-c"
    "pu-sustained-clock-speed-mhz\":\"3400\",\"karpenter.k8s.aws/instance-ebs-bandwidth\":\"4750\",\"karp"
    "enter.k8s.aws/instance-encryption-in-transit-supported\":\"false\",\"karpenter.k8s.aws/instance-fami"
    "ly\":\"c5\",\"karpenter.k8s.aws/instance-generation\":\"5\",\"karpenter.k8s.aws/instance-hypervisor\""
    ":\"nitro\",\"karpenter.k8s.aws/instance-memory\":\"16384\",\"karpenter.k8s.aws/instance-network-band"
    "width\":\"2500\",\"karpenter.k8s.aws/instance-size\":\"2xlarge\",\"karpenter.sh/capacity-type\":\"on"
    "-demand\",\"karpenter.sh/nodepool\":\"default\",\"karpenter.sh/registered\":\"true\",\"kubernetes.io"
    "/arch\":\"amd64\",\"kubernetes.io/hostname\":\"default-222zc\",\"kubernetes.io/os\":\"linux\",\"kwok"
    ".x-k8s.io/node\":\"fake\",\"node.kubernetes.io/instance-type\":\"c5.2xlarge\",\"topology.kubernetes."
    "io/region\":\"us-east-1\",\"topology.kubernetes.io/zone\":\"us-east-1a\"},\"annotations\":{\"karpent"
    "er.sh/nodepool-hash\":\"4235674322007087676\",\"karpenter.sh/nodepool-hash-version\":\"c1\",\"kwok.x"
    "-k8s.io/node\":\"fake\",\"node.alpha.kubernetes.io/ttl\":\"60\"},\"ownerReferences\":[{\"apiVersion\""
    ":\"karpenter.sh/v1\",\"kind\":\"NodeClaim\",\"name\":\"default-222zc\",\"uid\":\"a2e783e8-6150-4c28-"
    "9e3d-4d14baa8683c\",\"blockOwnerDeletion\":true}],\"finalizers\":[\"karpenter.sh/termination\"],\"ma"
    "nagedFields\":[{\"manager\":\"kube-controller-manager\",\"operation\":\"Update\",\"apiVersion\":\"v1"
    "\",\"time\":\"2026-11-26T20:28:47Z\",\"fieldsType\":\"FieldsV1\",\"fieldsV1\":{\"f:metadata\":{\"f:a"
    "nnotations\":{\"f:node.alpha.kubernetes.io/ttl\":{}}}}},{\"manager\":\"karpenter-c\",\"operation\":\""
    "Update\",\"apiVersion\":\"v1\",\"time\":\"2026-11-26T20:28:51Z\",\"fieldsType\":\"FieldsV1\",\"field"
    "sV1\":{\"f:metadata\":{\"f:annotations\":{\".\":{},\"f:karpenter.sh/nodepool-hash\":{},\"f:karpenter"
    ".sh/nodepool-hash-version\":{},\"f:kwok.x-k8s.io/node\":{}},\"f:finalizers\":{\".\":{},\"v:\\\"karpe"
    "nter.sh/termination\\\"\":{}},\"f:labels\":{\".\":{},\"f:karpenter.k8s.aws/ec2nodeclass\":{},\"f:kar"
    "penter.k8s.aws/instance-capability-flex\":{},\"f:karpenter.k8s.aws/instance-category\":{},\"f:karpen"
    "ter.k8s.aws/instance-cpu\":{},\"f:karpenter.k8s.aws/instance-cpu-manufacturer\":{},\"f:karpenter.k8s"
    ".aws/instance-cpu-sustained-clock-speed-mhz\":{},\"f:karpenter.k8s.aws/instance-ebs-bandwidth\":{},\""
    "f:karpenter.k8s.aws/instance-encryption-in-transit-supported\":{},\"f:karpenter.k8s.aws/instance-fam"
    "ily\":{},\"f:karpenter.k8s.aws/instance-generation\":{},\"f:karpenter.k8s.aws/instance-hypervisor\":"
    "{},\"f:karpenter.k8s.aws/instance-memory\":{},\"f:karpenter.k8s.aws/instance-network-bandwidth\":{},"
    "\"f:karpenter.k8s.aws/instance-size\":{},\"f:karpenter.sh/capacity-type\":{},\"f:karpenter.sh/nodepo"
    "ol\":{},\"f:karpenter.sh/registered\":{},\"f:kubernetes.io/arch\":{},\"f:kubernetes.io/hostname\":{}"
    ",\"f:kubernetes.io/os\":{},\"f:kwok.x-k8s.io/node\":{},\"f:node.kubernetes.io/instance-type\":{},\"f"
    ":topology.kubernetes.io/region\":{},\"f:topology.kubernetes.io/zone\":{}},\"f:ownerReferences\":{\"."
    "\":{},\"k:{\\\"uid\\\":\\\"a2e783e8-6150-4c28-9e3d-4d14baa8683c\\\"}\":{\".\":{},\"f:apiVersion\":{}"
    ",\"f:blockOwnerDeletion\":{},\"f:kind\":{},\"f:name\":{},\"f:uid\":{}}}},\"f:spec\":{\"f:providerID\""
    ":{},\"f:taints\":{}},\"f:status\":{\"f:addresses\":{\".\":{},\"k:{\\\"type\\\":\\\"Hostname\\\"}\":{"
    "\".\":{},\"f:address\":{},\"f:type\":{}},\"k:{\\\"type\\\":\\\"InternalIP\\\"}\":{\".\":{},\"f:addre"
    "ss\":{},\"f:type\":{}}},\"f:allocatable\":{\".\":{},\"f:cpu\":{},\"f:ephemeral-storage\":{},\"f:memo"
    "ry\":{},\"f:pods\":{},\"f:vpc.amazonaws.com/pod-eni\":{}},\"f:capacity\":{\".\":{},\"f:cpu\":{},\"f:"
    "ephemeral-storage\":{},\"f:memory\":{},\"f:pods\":{},\"f:vpc.amazonaws.com/pod-eni\":{}},\"f:conditi"
    "ons\":{\".\":{},\"k:{\\\"type\\\":\\\"DiskPressure\\\"}\":{\".\":{},\"f:lastHeartbeatTime\":{},\"f:l"
    "astTransitionTime\":{},\"f:message\":{},\"f:reason\":{},\"f:status\":{},\"f:type\":{}},\"k:{\\\"type"
    "\\\":\\\"MemoryPressure\\\"}\":{\".\":{},\"f:lastHeartbeatTime\":{},\"f:lastTransitionTime\":{},\"f:"
    "message\":{},\"f:reason\":{},\"f:status\":{},\"f:type\":{}},\"k:{\\\"type\\\":\\\"PIDPressure\\\"}\""
    ":{\".\":{},\"f:lastHeartbeatTime\":{},\"f:lastTransitionTime\":{},\"f:message\":{},\"f:reason\":{},\""
    "f:status\":{},\"f:type\":{}},\"k:{\\\"type\\\":\\\"Ready\\\"}\":{\".\":{},\"f:lastHeartbeatTime\":{}"
    ",\"f:lastTransitionTime\":{},\"f:message\":{},\"f:reason\":{},\"f:status\":{},\"f:type\":{}}},\"f:da"
    "emonEndpoints\":{\"f:kubeletEndpoint\":{\"f:Port\":{}}},\"f:nodeInfo\":{\"f:architecture\":{},\"f:co"
    "ntainerRuntimeVersion\":{},\"f:kernelVersion\":{},\"f:kubeProxyVersion\":{},\"f:kubeletVersion\":{},"
    "\"f:operatingSystem\":{},\"f:osImage\":{}}}}}]},\"spec\":{\"providerID\":\"kwok://default-222zc\",\""
    "taints\":[{\"key\":\"node.kubernetes.io/not-ready\",\"effect\":\"NoSchedule\"}]},\"status\":{\"capac"
    "ity\":{\"cpu\":\"8\",\"ephemeral-storage\":\"20Gi\",\"memory\":\"15155Mi\",\"pods\":\"58\",\"vpc.ama"
    "zonaws.com/pod-eni\":\"38\"},\"allocatable\":{\"cpu\":\"7910m\",\"ephemeral-storage\":\"17Gi\",\"mem"
    "ory\":\"14162Mi\",\"pods\":\"58\",\"vpc.amazonaws.com/pod-eni\":\"38\"},\"conditions\":[{\"type\":\""
    "MemoryPressure\",\"status\":\"False\",\"lastHeartbeatTime\":\"2026-11-26T20:28:46Z\",\"lastTransitio"
    "nTime\":\"2026-11-26T20:28:46Z\",\"reason\":\"KubeletHasSufficientMemory\",\"message\":\"kwok: no me"
    "mory pressure\"},{\"type\":\"DiskPressure\",\"status\":\"False\",\"lastHeartbeatTime\":\"2026-11-26T"
    "20:28:46Z\",\"lastTransitionTime\":\"2026-11-26T20:28:46Z\",\"reason\":\"KubeletHasNoDiskPressure\","
    "\"message\":\"kwok: no disk pressure\"},{\"type\":\"PIDPressure\",\"status\":\"False\",\"lastHeartbe"
    "atTime\":\"2026-11-26T20:28:46Z\",\"lastTransitionTime\":\"2026-11-26T20:28:46Z\",\"reason\":\"Kubel"
    "etHasSufficientPID\",\"message\":\"kwok: no PID pressure\"},{\"type\":\"Ready\",\"status\":\"True\","
    "\"lastHeartbeatTime\":\"2026-11-26T20:28:46Z\",\"lastTransitionTime\":\"2026-11-26T20:28:46Z\",\"rea"
    "son\":\"KubeletReady\",\"message\":\"kwok: the node is ready\"}],\"addresses\":[{\"type\":\"Internal"
    "IP\",\"address\":\"10.116.49.103\"},{\"type\":\"Hostname\",\"address\":\"default-222zc\"}],\"daemonE"
    "ndpoints\":{\"kubeletEndpoint\":{\"Port\":10250}},\"nodeInfo\":{\"machineID\":\"\",\"systemUUID\":\""
    "\",\"bootID\":\"\",\"kernelVersion\":\"kwok\",\"osImage\":\"kwok\",\"containerRuntimeVersion\":\"kwo"
    "k://fake\",\"kubeletVersion\":\"v1.20.2-kwok\",\"kubeProxyVersion\":\"v1.20.2-kwok\",\"operatingSyst"
    "em\":\"linux\",\"architecture\":\"amd64\"}}}";

static const char claim_json[] =
    "{\"apiVersion\":\"karpenter.sh/v1\",\"kind\":\"NodeClaim\",\"metadata\":{\"annotations\":{\"karpente"
    "r.sh/nodepool-hash\":\"4235674322007087676\",\"karpenter.sh/nodepool-hash-version\":\"c1\"},\"creati"
    "onTimestamp\":\"2026-11-26T20:28:46Z\",\"finalizers\":[\"karpenter.sh/termination\"],\"generateName\""
    ":\"default-\",\"generation\":1,\"labels\":{\"karpenter.k8s.aws/ec2nodeclass\":\"default\",\"karpente"
    "r.k8s.aws/instance-capability-flex\":\"false\",\"karpenter.k8s.aws/instance-category\":\"c\",\"karpe"
    "nter.k8s.aws/instance-cpu\":\"8\",\"karpenter.k8s.aws/instance-cpu-manufacturer\":\"intel\",\"karpen"
    "ter.k8s.aws/instance-cpu-sustained-clock-speed-mhz\":\"3400\",\"karpenter.k8s.aws/instance-ebs-bandw"
    "idth\":\"4750\",\"karpenter.k8s.aws/instance-encryption-in-transit-supported\":\"false\",\"karpenter"
    ".k8s.aws/instance-family\":\"c5\",\"karpenter.k8s.aws/instance-generation\":\"5\",\"karpenter.k8s.aw"
    "s/instance-hypervisor\":\"nitro\",\"karpenter.k8s.aws/instance-memory\":\"16384\",\"karpenter.k8s.aw"
    "s/instance-network-bandwidth\":\"2500\",\"karpenter.k8s.aws/instance-size\":\"2xlarge\",\"karpenter."
    "sh/capacity-type\":\"on-demand\",\"karpenter.sh/nodepool\":\"default\",\"kubernetes.io/arch\":\"amd6"
    "4\",\"kubernetes.io/hostname\":\"default-222zc\",\"kubernetes.io/os\":\"linux\",\"kwok.x-k8s.io/node"
    "\":\"fake\",\"node.kubernetes.io/instance-type\":\"c5.2xlarge\",\"topology.kubernetes.io/region\":\""
    "us-east-1\",\"topology.kubernetes.io/zone\":\"us-east-1a\"},\"managedFields\":[{\"apiVersion\":\"kar"
    "penter.sh/v1\",\"fieldsType\":\"FieldsV1\",\"fieldsV1\":{\"f:metadata\":{\"f:annotations\":{\".\":{}"
    ",\"f:karpenter.sh/nodepool-hash\":{},\"f:karpenter.sh/nodepool-hash-version\":{}},\"f:finalizers\":{"
    "},\"f:generateName\":{},\"f:labels\":{\".\":{},\"f:karpenter.k8s.aws/ec2nodeclass\":{},\"f:karpenter"
    ".k8s.aws/instance-capability-flex\":{},\"f:karpenter.k8s.aws/instance-category\":{},\"f:karpenter.k8"
    "s.aws/instance-cpu\":{},\"f:karpenter.k8s.aws/instance-cpu-manufacturer\":{},\"f:karpenter.k8s.aws/i"
    "nstance-cpu-sustained-clock-speed-mhz\":{},\"f:karpenter.k8s.aws/instance-ebs-bandwidth\":{},\"f:kar"
    "penter.k8s.aws/instance-encryption-in-transit-supported\":{},\"f:karpenter.k8s.aws/instance-family\""
    ":{},\"f:karpenter.k8s.aws/instance-generation\":{},\"f:karpenter.k8s.aws/instance-hypervisor\":{},\""
    "f:karpenter.k8s.aws/instance-memory\":{},\"f:karpenter.k8s.aws/instance-network-bandwidth\":{},\"f:k"
    "arpenter.k8s.aws/instance-size\":{},\"f:karpenter.sh/capacity-type\":{},\"f:karpenter.sh/nodepool\":"
    "{},\"f:kubernetes.io/arch\":{},\"f:kubernetes.io/hostname\":{},\"f:kubernetes.io/os\":{},\"f:kwok.x-"
    "k8s.io/node\":{},\"f:node.kubernetes.io/instance-type\":{},\"f:topology.kubernetes.io/region\":{},\""
    "f:topology.kubernetes.io/zone\":{}},\"f:ownerReferences\":{}},\"f:spec\":{\".\":{},\"f:expireAfter\""
    ":{},\"f:nodeClassRef\":{\".\":{},\"f:group\":{},\"f:kind\":{},\"f:name\":{}},\"f:requirements\":{},\""
    "f:resources\":{\".\":{},\"f:requests\":{\".\":{},\"f:cpu\":{},\"f:memory\":{},\"f:pods\":{}}}},\"f:s"
    "tatus\":{\".\":{},\"f:allocatable\":{\".\":{},\"f:cpu\":{},\"f:ephemeral-storage\":{},\"f:memory\":{"
    "},\"f:pods\":{},\"f:vpc.amazonaws.com/pod-eni\":{}},\"f:capacity\":{\".\":{},\"f:cpu\":{},\"f:epheme"
    "ral-storage\":{},\"f:memory\":{},\"f:pods\":{},\"f:vpc.amazonaws.com/pod-eni\":{}},\"f:conditions\":"
    "{},\"f:nodeName\":{},\"f:providerID\":{}}},\"manager\":\"karpenter-c\",\"operation\":\"Update\",\"ti"
    "me\":\"2026-11-26T20:28:51Z\"}],\"name\":\"default-222zc\",\"ownerReferences\":[{\"apiVersion\":\"ka"
    "rpenter.sh/v1\",\"blockOwnerDeletion\":true,\"kind\":\"NodePool\",\"name\":\"default\",\"uid\":\"528"
    "f52d7-8af5-44e2-aace-f33232721cfd\"}],\"resourceVersion\":\"109421\",\"uid\":\"a2e783e8-6150-4c28-9e"
    "3d-4d14baa8683c\"},\"spec\":{\"expireAfter\":\"Never\",\"nodeClassRef\":{\"group\":\"karpenter.k8s.a"
    "ws\",\"kind\":\"EC2NodeClass\",\"name\":\"default\"},\"requirements\":[{\"key\":\"karpenter.sh/nodep"
    "ool\",\"operator\":\"In\",\"values\":[\"default\"]},{\"key\":\"node.kubernetes.io/instance-type\",\""
    "operator\":\"In\",\"values\":[\"c5.2xlarge\"]},{\"key\":\"karpenter.sh/capacity-type\",\"operator\":"
    "\"In\",\"values\":[\"on-demand\"]},{\"key\":\"karpenter.k8s.aws/ec2nodeclass\",\"operator\":\"In\",\""
    "values\":[\"default\"]}],\"resources\":{\"requests\":{\"cpu\":\"7500m\",\"memory\":\"640Mi\",\"pods\""
    ":\"10\"}}},\"status\":{\"allocatable\":{\"cpu\":\"7910m\",\"ephemeral-storage\":\"17Gi\",\"memory\":"
    "\"14162Mi\",\"pods\":\"58\",\"vpc.amazonaws.com/pod-eni\":\"38\"},\"capacity\":{\"cpu\":\"8\",\"ephe"
    "meral-storage\":\"20Gi\",\"memory\":\"15155Mi\",\"pods\":\"58\",\"vpc.amazonaws.com/pod-eni\":\"38\""
    "},\"conditions\":[{\"lastTransitionTime\":\"2026-11-26T20:28:46Z\",\"message\":\"\",\"observedGenera"
    "tion\":1,\"reason\":\"Launched\",\"status\":\"True\",\"type\":\"Launched\"},{\"lastTransitionTime\":"
    "\"2026-11-26T20:28:46Z\",\"message\":\"Initialized=Unknown\",\"observedGeneration\":1,\"reason\":\"U"
    "nhealthyDependents\",\"status\":\"Unknown\",\"type\":\"Ready\"},{\"lastTransitionTime\":\"2026-11-26"
    "T20:28:51Z\",\"message\":\"\",\"observedGeneration\":1,\"reason\":\"Registered\",\"status\":\"True\""
    ",\"type\":\"Registered\"},{\"lastTransitionTime\":\"2026-11-26T20:28:51Z\",\"message\":\"Taint \\\"n"
    "ode.kubernetes.io/not-ready\\\" still exists\",\"observedGeneration\":1,\"reason\":\"StartupTaintsEx"
    "ist\",\"status\":\"Unknown\",\"type\":\"Initialized\"}],\"nodeName\":\"default-222zc\",\"providerID\""
    ":\"kwok://default-222zc\"}}";

static size_t heap_in_use(void)
{
    struct mallinfo2 mi = mallinfo2();
    return mi.uordblks + mi.hblkhd;
}

/* Bytes of heap per object for `count` parsed copies, trimmed or not. */
static double bytes_per_object(const char *json, enum kp_kube_res res, size_t count, int trim)
{
    cJSON **objs = calloc(count, sizeof(*objs));
    size_t before = heap_in_use();
    for (size_t i = 0; i < count; i++) {
        objs[i] = cJSON_Parse(json);
        if (objs[i] && trim)
            kp_informer_trim(res, objs[i]);
    }
    size_t after = heap_in_use();
    for (size_t i = 0; i < count; i++)
        cJSON_Delete(objs[i]);
    free(objs);
    return after > before ? (double)(after - before) / (double)count : 0;
}

int main(int argc, char **argv)
{
    static const struct {
        const char *name;
        const char *json;
        enum kp_kube_res res;
    } kinds[] = {{"Pod", pod_json, KP_RES_POD}, {"Node", node_json, KP_RES_NODE}, {"NodeClaim", claim_json, KP_RES_NODECLAIM}};
    size_t count = argc > 1 ? strtoul(argv[1], NULL, 10) : 2000;
    double total[2] = {0, 0};
    if (count == 0)
        count = 1;
    printf("informer cache memory per object (%zu copies; JSON as the API server sends it)\n", count);
    printf("%-10s %8s %12s %12s %8s\n", "kind", "JSON B", "cached B", "trimmed B", "saved");
    for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
        double whole = bytes_per_object(kinds[k].json, kinds[k].res, count, 0);
        double trimmed = bytes_per_object(kinds[k].json, kinds[k].res, count, 1);
        total[0] += whole, total[1] += trimmed;
        printf("%-10s %8zu %12.0f %12.0f %7.0f%%\n", kinds[k].name, strlen(kinds[k].json), whole, trimmed,
               whole > 0 ? 100 * (1 - trimmed / whole) : 0);
    }
    printf("per 1000 pods + 1000 nodes + 1000 NodeClaims: %.1f MiB cached, %.1f MiB trimmed\n",
           total[0] * 1000 / 1048576, total[1] * 1000 / 1048576);
    return 0;
}
