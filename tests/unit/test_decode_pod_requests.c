/*
 * Effective pod requests (pod_requests.h). The sidecar and init container
 * cases are those of Kubernetes' component-helpers resource tests
 * (TestPodRequestsAndLimits, TestPodResourceRequests), plus the API server's
 * request-from-limit defaulting and pod-level resources.
 */
#include "test_decode_util.h"

#include "api/pod_requests.h"

typedef struct req_case {
    const char *name;
    const char *spec; /* the pod's spec, single-quoted JSON */
    const char *want; /* "cpu=7 memory=1Gi": every resource of the result */
} req_case;

/* Shorthand: C(cpu) is a container requesting `cpu`; SIDECAR(cpu) the same
 * as a restartable init container. */
#define C(cpu)       "{'resources':{'requests':{'cpu':'" cpu "'}}}"
#define SIDECAR(cpu) "{'restartPolicy':'Always','resources':{'requests':{'cpu':'" cpu "'}}}"

static const req_case cases[] = {
    {"no containers", "{}", ""},
    {"just overhead", "{'overhead':{'cpu':'5','memory':'5'}}", "cpu=5 memory=5"},
    {"requests and overhead",
     "{'containers':[{'resources':{'requests':{'cpu':'1','memory':'10'}}}],"
     "'overhead':{'cpu':'5','memory':'5'}}",
     "cpu=6 memory=15"},
    {"requests, limits and overhead",
     "{'containers':[{'resources':{'requests':{'cpu':'1','memory':'10'},"
     "'limits':{'cpu':'2','memory':'12'}}}],'overhead':{'cpu':'5','memory':'5'}}",
     "cpu=6 memory=15"},
    {"some limits and overhead",
     "{'containers':[{'resources':{'requests':{'cpu':'1','memory':'10'},'limits':{'cpu':'2'}}}],"
     "'overhead':{'cpu':'5','memory':'5'}}",
     "cpu=6 memory=15"},
    {"just a limit: requests default to it",
     "{'containers':[{'resources':{'limits':{'cpu':'9'}}}]}", "cpu=9"},
    {"two containers sum",
     "{'containers':[{'resources':{'requests':{'cpu':'1','memory':'5'},"
     "'limits':{'cpu':'2','memory':'10'}}},"
     "{'resources':{'requests':{'cpu':'4','memory':'12'},'limits':{'cpu':'8','memory':'24'}}}]}",
     "cpu=5 memory=17"},
    {"two containers plus overhead",
     "{'overhead':{'cpu':'3','memory':'8'},"
     "'containers':[{'resources':{'requests':{'cpu':'1','memory':'5'}}},"
     "{'resources':{'requests':{'cpu':'4','memory':'12'}}}]}",
     "cpu=8 memory=25"},
    {"massive init container wins",
     "{'overhead':{'cpu':'3','memory':'8'},"
     "'containers':[{'resources':{'requests':{'cpu':'1','memory':'5'}}},"
     "{'resources':{'requests':{'cpu':'4','memory':'12'}}}],"
     "'initContainers':[{'resources':{'requests':{'cpu':'1','memory':'5'}}},"
     "{'resources':{'requests':{'cpu':'40','memory':'120'}}}]}",
     "cpu=43 memory=128"},
    {"larger init container", "{'initContainers':[" C("4") "],'containers':[" C("1") "]}", "cpu=4"},
    {"larger containers", "{'initContainers':[" C("2") "],'containers':[" C("2") "," C("3") "]}",
     "cpu=5"},
    {"overhead included",
     "{'overhead':{'cpu':'1','memory':'1Gi'},"
     "'initContainers':[{'resources':{'requests':{'cpu':'2'},'limits':{'cpu':'2'}}}],"
     "'containers':[" C("2") "," C("3") "]}",
     "cpu=6 memory=1Gi"},
    {"restartable init container",
     "{'initContainers':[" SIDECAR("1") "],'containers':[" C("1") "]}", "cpu=2"},
    {"multiple restartable init containers",
     "{'initContainers':[" C("5") "," SIDECAR("1") "," SIDECAR("2") "," SIDECAR(
         "3") "],"
              "'containers':[" C("1") "]}",
     "cpu=7"},
    {"restartable and regular init containers",
     "{'initContainers':[" C("5") "," SIDECAR("1") "," SIDECAR("2") "," C("5") "," SIDECAR(
         "3") "],'containers':[" C("1") "]}",
     "cpu=8"},
    {"restartable init, init and regular",
     "{'initContainers':[" SIDECAR("10") "," C("200") "],'containers':[" C("100") "]}", "cpu=210"},
    {"sidecar with only limits",
     "{'initContainers':[{'restartPolicy':'Always','resources':{'limits':{'memory':'1Gi'}}}],"
     "'containers':[{'resources':{'requests':{'memory':'1Gi'}}}]}",
     "memory=2Gi"},
    {"init container restartPolicy other than Always is not a sidecar",
     "{'initContainers':[{'restartPolicy':'OnFailure','resources':{'requests':{'cpu':'3'}}}],"
     "'containers':[" C("1") "]}",
     "cpu=3"},
    {"resources only some containers ask for",
     "{'containers':[{'resources':{'requests':{'nvidia.com/gpu':'1'}}},"
     "{'resources':{'requests':{'cpu':'500m'}}},{}]}",
     "cpu=500m nvidia.com/gpu=1"},
    {"a zero request stays in the list", "{'containers':[{'resources':{'requests':{'cpu':'0'}}}]}",
     "cpu=0"},
    {"pod-level requests replace the container sum",
     "{'resources':{'requests':{'cpu':'2'}},"
     "'containers':[{'resources':{'requests':{'cpu':'500m','memory':'1Gi'}}}]}",
     "cpu=2 memory=1Gi"},
    {"pod-level limits stand in when nothing requests",
     "{'resources':{'limits':{'cpu':'4','memory':'2Gi'}},"
     "'containers':[{'resources':{'requests':{'cpu':'1'}}}]}",
     "cpu=1 memory=2Gi"},
    {"pod-level resources ignore unsupported names",
     "{'resources':{'requests':{'nvidia.com/gpu':'8'}},"
     "'containers':[{'resources':{'requests':{'nvidia.com/gpu':'1'}}}]}",
     "nvidia.com/gpu=1"},
};

static void expect_list(const char *name, const kp_resource_list *got, const char *want)
{
    size_t n = 0;
    /* "name=qty" tokens, space separated. */
    const char *p = want;
    while (*p) {
        const char *end = strchr(p, ' ');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        char token[128], *eq;
        snprintf(token, sizeof(token), "%.*s", (int)len, p);
        eq = strchr(token, '=');
        cr_assert_not_null(eq);
        *eq = '\0';
        kp_quantity q;
        cr_assert_eq(kp_quantity_parse(eq + 1, &q), 0);
        const kp_quantity *have = kp_resource_list_get(got, token);
        cr_expect_not_null(have, "%s: %s missing", name, token);
        if (have)
            cr_expect_eq(have->milli, q.milli, "%s: %s is %lldm, want %lldm", name, token,
                         (long long)have->milli, (long long)q.milli);
        n++;
        p += len;
        while (*p == ' ')
            p++;
    }
    cr_expect_eq(got->count, n, "%s: %zu resources, want %zu", name, got->count, n);
}

Test(pod_requests, kubernetes_cases)
{
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        kp_arena *arena = kp_arena_new();
        char text[2048];
        snprintf(text, sizeof(text), "{'apiVersion':'v1','kind':'Pod','spec':%s}", cases[i].spec);
        kp_object obj;
        decode_sq(arena, text, &obj);
        expect_list(cases[i].name, &obj.u.pod.requests, cases[i].want);
        /* Calling the helper directly gives the same answer. */
        kp_resource_list again;
        cr_assert_eq(kp_pod_requests(arena, &obj.u.pod, &again), 0);
        expect_list(cases[i].name, &again, cases[i].want);
        kp_arena_free(arena);
    }
}

Test(pod_requests, result_is_sorted_by_name)
{
    kp_arena *arena = kp_arena_new();
    kp_object obj;
    decode_sq(arena,
              "{'apiVersion':'v1','kind':'Pod','spec':{'containers':[{'resources':{'requests':"
              "{'memory':'1','cpu':'1','ephemeral-storage':'1','a.io/x':'1'}}}]}}",
              &obj);
    const kp_resource_list *r = &obj.u.pod.requests;
    cr_assert_eq(r->count, 4);
    for (size_t i = 1; i < r->count; i++)
        cr_expect_lt(strcmp(r->items[i - 1].name, r->items[i].name), 0);
    kp_arena_free(arena);
}

/* Kubernetes accepts a request past the int64 milli-unit range and sums it
 * exactly; so do we (the pod can never fit, which the solver says). */
Test(pod_requests, sums_past_int64_milli_are_exact)
{
    kp_arena *arena = kp_arena_new();
    kp_object obj;
    decode_sq(arena,
              "{'apiVersion':'v1','kind':'Pod','spec':{'containers':[{'resources':{'requests':{'cpu':'9000T'}}},"
              "{'resources':{'requests':{'cpu':'9000T'}}}]}}",
              &obj);
    const kp_resource_list *r = &obj.u.pod.requests;
    cr_assert_eq(r->count, 1);
    char text[KP_QUANTITY_STRLEN];
    cr_expect_str_eq(kp_quantity_format(r->items[0].quantity, text, sizeof(text)), "18P");
    cr_expect_eq(r->items[0].quantity.milli, INT64_MAX, "resource vectors read the saturated value");
    kp_arena_free(arena);
}

Test(pod_requests, container_requests_fill_from_limits)
{
    kp_arena *arena = kp_arena_new();
    kp_object obj;
    decode_sq(arena,
              "{'apiVersion':'v1','kind':'Pod','spec':{'containers':[{'resources':{"
              "'requests':{'cpu':'250m'},'limits':{'cpu':'1','memory':'512Mi'}}}]}}",
              &obj);
    kp_resource_list r;
    cr_assert_eq(kp_container_requests(arena, &obj.u.pod.containers[0], &r), 0);
    cr_assert_eq(r.count, 2);
    cr_expect_eq(MILLI(&r, "cpu"), 250);
    cr_expect_eq(MILLI(&r, "memory"), INT64_C(512) * 1024 * 1024 * 1000);
    /* The container keeps what was written. */
    cr_expect_eq(obj.u.pod.containers[0].requests.count, 1);
    kp_arena_free(arena);
}

Test(pod_requests, pod_built_in_code)
{
    kp_arena *arena = kp_arena_new();
    kp_resource req[] = {{"cpu", kp_quantity_from_milli(1500, KP_QUANTITY_DECIMAL_SI)}};
    kp_container containers[2];
    memset(containers, 0, sizeof(containers));
    containers[0].requests = (kp_resource_list){req, 1};
    containers[1].requests = (kp_resource_list){req, 1};
    containers[1].restart_always = true;
    kp_pod pod;
    memset(&pod, 0, sizeof(pod));
    pod.containers = &containers[0];
    pod.n_containers = 1;
    pod.init_containers = &containers[1];
    pod.n_init_containers = 1;
    kp_resource_list out;
    cr_assert_eq(kp_pod_requests(arena, &pod, &out), 0);
    cr_expect_eq(MILLI(&out, "cpu"), 3000);
    kp_arena_free(arena);
}
