/*
 * cloud/overlay: NodeOverlays evaluated against NodePools' instance types and
 * applied to catalogs. The cases are those of Karpenter's nodeoverlay
 * controller suite (conflicts by weight and by requirement overlap, offering
 * selection, price and capacity merging, all-or-nothing application), with
 * catalogs and NodePools built here.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "api/decode.h"
#include "api/nodeoverlay.h"
#include "base/error.h"
#include "cloud/overlay.h"
#include "format/yaml.h"

static const kp_yaml_limits limits = {1 << 20, 64, 200000, 20000};

typedef struct fixture {
    kp_arena *arena;
    kp_catalog *cat;
    const kp_nodeoverlay *overlays[16];
    size_t n_overlays;
    kp_overlay_pool pools[4];
    size_t n_pools;
    kp_overlay_store *store;
    kp_catalog *applied[4];
} fixture;

static fixture f;

static void setup(void)
{
    memset(&f, 0, sizeof(f));
    f.arena = kp_arena_new();
    f.cat = kp_catalog_new("test");
}

static void teardown(void)
{
    for (int i = 0; i < 4; i++)
        kp_catalog_free(f.applied[i]);
    kp_overlay_store_unref(f.store);
    kp_catalog_free(f.cat);
    kp_arena_free(f.arena);
}

TestSuite(overlay_store, .init = setup, .fini = teardown);

static cJSON *yaml(const char *text)
{
    cJSON *root = NULL;
    cr_assert_eq(kp_yaml_parse_one(&root, text, strlen(text), "test", &limits), 0, "%s", kp_error_last());
    return root;
}

typedef struct offer {
    const char *zone, *ct;
    double price;
} offer;

/* A type with `arch` and the zones and capacity types of its offerings. */
static kp_instance_type *type(const char *name, const char *arch, const offer *offers, size_t n)
{
    kp_instance_type *it = kp_catalog_add_type(f.cat, name);
    kp_it_add_label(f.cat, it, "node.kubernetes.io/instance-type", name);
    kp_it_add_label(f.cat, it, "kubernetes.io/arch", arch);
    kp_it_add_label(f.cat, it, "kubernetes.io/os", "linux");
    const char *zones[8], *cts[8];
    for (size_t i = 0; i < n; i++) {
        kp_it_add_offering(f.cat, it, offers[i].zone, offers[i].ct, offers[i].price, true);
        zones[i] = offers[i].zone, cts[i] = offers[i].ct;
    }
    kp_it_add_req(f.cat, it, "topology.kubernetes.io/zone", KP_OP_IN, zones, (uint32_t)n);
    kp_it_add_req(f.cat, it, "karpenter.sh/capacity-type", KP_OP_IN, cts, (uint32_t)n);
    kp_it_set_capacity(f.cat, it, "cpu", 4000);
    kp_it_set_capacity(f.cat, it, "memory", 8000);
    return it;
}

static void default_type(const char *name)
{
    static const offer o[] = {{"test-zone-1", "spot", 1.02}};
    type(name, "amd64", o, 1);
}

/* Four offerings, as Karpenter's "Offering Requirements" cases. */
static void four_offerings(void)
{
    static const offer o[] = {{"test-zone-1", "spot", 1.02},
                              {"test-zone-2", "on-demand", 2.02},
                              {"test-zone-3", "spot", 3.02},
                              {"test-zone-4", "reserved", 4.02}};
    type("default-instance-type", "amd64", o, 4);
}

static void pool(const char *yaml_text)
{
    cJSON *j = yaml(yaml_text);
    kp_nodepool *np = KP_ARENA_NEW(f.arena, kp_nodepool, 1);
    cr_assert_eq(kp_decode_nodepool(f.arena, j, np), 0, "%s", kp_error_last());
    cJSON_Delete(j);
    f.pools[f.n_pools++] = (kp_overlay_pool){np, f.cat};
}

/* An overlay named `name`, weight `weight` (0: none), `spec_rest` the rest of
 * its spec in YAML flow style ("price: '1', requirements: [...]"). */
static void overlay(const char *name, int weight, const char *spec_rest)
{
    char text[2048];
    if (weight)
        snprintf(text, sizeof(text), "metadata: {name: %s}\nspec: {weight: %d, %s}\n", name, weight, spec_rest);
    else
        snprintf(text, sizeof(text), "metadata: {name: %s}\nspec: {%s}\n", name, spec_rest);
    cJSON *j = yaml(text);
    kp_nodeoverlay *o = KP_ARENA_NEW(f.arena, kp_nodeoverlay, 1);
    cr_assert_eq(kp_nodeoverlay_from_json(f.arena, j, o), 0, "%s", kp_error_last());
    cJSON_Delete(j);
    f.overlays[f.n_overlays++] = o;
}

static void evaluate(void)
{
    if (!f.n_pools) pool("metadata: {name: default}\nspec: {template: {spec: {requirements: []}}}\n");
    cr_assert_eq(kp_overlay_evaluate(f.overlays, f.n_overlays, f.pools, f.n_pools, &f.store), 0, "%s",
                 kp_error_last());
}

static const kp_overlay_verdict *verdict(const char *name)
{
    const kp_overlay_verdict *v;
    size_t n = kp_overlay_store_verdicts(f.store, &v);
    for (size_t i = 0; i < n; i++)
        if (!strcmp(v[i].name, name)) return &v[i];
    cr_assert_fail("no verdict for %s", name);
    return NULL;
}

static void expect_applied(const char *name)
{
    const kp_overlay_verdict *v = verdict(name);
    cr_expect_eq(v->outcome, KP_OVERLAY_APPLIED, "%s: %d %s", name, v->outcome, v->message);
}

static void expect_conflict(const char *name)
{
    const kp_overlay_verdict *v = verdict(name);
    cr_expect_eq(v->outcome, KP_OVERLAY_CONFLICT, "%s: %d %s", name, v->outcome, v->message);
    cr_expect(strncmp(v->message, "conflict with another overlay", 29) == 0, "%s", v->message);
}

/* The pool's catalog after the store (the base itself when unchanged). */
static const kp_catalog *applied(size_t pool_index)
{
    kp_catalog *c = NULL;
    const char *name = f.pools[pool_index].pool->meta.name;
    cr_assert_eq(kp_overlay_store_apply(f.store, name, f.cat, &c), 0, "%s", kp_error_last());
    kp_catalog_free(f.applied[pool_index]);
    f.applied[pool_index] = c;
    return c ? c : f.cat;
}

static double price_of(const kp_catalog *c, const char *type_name, uint32_t offering)
{
    const kp_instance_type *it = kp_catalog_find(c, type_name);
    cr_assert_not_null(it, "%s", type_name);
    cr_assert_lt(offering, it->n_offerings);
    return it->offerings[offering].price;
}

/* ---------------------------------------------------------------- validation */

Test(overlay_store, no_overlay_leaves_the_catalog_alone)
{
    default_type("default-instance-type");
    evaluate();
    cr_expect_eq(applied(0), f.cat);
    cr_expect_float_eq(price_of(applied(0), "default-instance-type", 0), 1.02, 1e-12);
}

Test(overlay_store, a_single_overlay_is_applied)
{
    default_type("default-instance-type");
    overlay("o", 10, "requirements: [{key: node.kubernetes.io/instance-type, operator: In, values: [default-instance-type]}]");
    evaluate();
    expect_applied("o");
}

Test(overlay_store, runtime_validation_failures_are_not_applied)
{
    default_type("default-instance-type");
    char spec[600];
    char key[300];
    memset(key, 'a', 260);
    key[260] = '\0';
    snprintf(spec, sizeof(spec), "price: '9', requirements: [{key: test.com.test/test-%s, operator: Exists}]", key);
    overlay("long-key", 10, spec);
    overlay("cpu", 10, "capacity: {cpu: '5'}, requirements: [{key: node.kubernetes.io/instance-type, operator: In, values: [default-instance-type]}]");
    evaluate();
    cr_expect_eq(verdict("long-key")->outcome, KP_OVERLAY_INVALID);
    cr_expect_eq(verdict("cpu")->outcome, KP_OVERLAY_INVALID);
    cr_expect(strstr(verdict("cpu")->message, "invalid resource restricted"), "%s", verdict("cpu")->message);
    cr_expect_float_eq(price_of(applied(0), "default-instance-type", 0), 1.02, 1e-12);
    cr_expect_eq(kp_it_capacity(kp_catalog_find(applied(0), "default-instance-type"), "cpu"), 4000);
}

/* ------------------------------------------------- requirements and offerings */

Test(overlay_store, overlapping_types_of_the_same_weight_conflict)
{
    static const offer spot[] = {{"test-zone-1", "spot", 1.0}};
    type("arm-instance-type", "arm64", spot, 1);
    type("amd-instance-type", "amd64", spot, 1);
    overlay("overlay-a", 10, "price: '1.03', requirements: [{key: kubernetes.io/arch, operator: In, values: [arm64]}]");
    overlay("overlay-b", 10, "price: '23', requirements: [{key: karpenter.sh/capacity-type, operator: Exists}]");
    evaluate();
    expect_conflict("overlay-a"); /* overlay-b, the later name, went first */
    expect_applied("overlay-b");
    cr_expect(strstr(verdict("overlay-a")->message, "overlay-b"), "%s", verdict("overlay-a")->message);
    cr_expect_float_eq(price_of(applied(0), "arm-instance-type", 0), 23.0, 1e-12);
    cr_expect_float_eq(price_of(applied(0), "amd-instance-type", 0), 23.0, 1e-12);
}

Test(overlay_store, types_that_do_not_overlap_do_not_conflict)
{
    static const offer spot[] = {{"test-zone-1", "spot", 1.0}};
    type("arm-instance-type", "arm64", spot, 1);
    type("amd-instance-type", "amd64", spot, 1);
    overlay("overlay-a", 10, "price: '1.03', requirements: [{key: kubernetes.io/arch, operator: In, values: [arm64]}]");
    overlay("overlay-b", 10, "price: '23', requirements: [{key: kubernetes.io/arch, operator: In, values: [amd64]}]");
    evaluate();
    expect_applied("overlay-a");
    expect_applied("overlay-b");
    cr_expect_float_eq(price_of(applied(0), "arm-instance-type", 0), 1.03, 1e-12);
    cr_expect_float_eq(price_of(applied(0), "amd-instance-type", 0), 23.0, 1e-12);
}

/* overlay-a (price 1.03) and overlay-b (price 23), both weighing 10 and
 * selecting with `a_reqs` and `b_reqs`, on a type with four offerings. */
static void pair_on_four_offerings(const char *a_reqs, const char *b_reqs)
{
    char spec[512];
    four_offerings();
    snprintf(spec, sizeof(spec), "price: '1.03', requirements: [%s]", a_reqs);
    overlay("overlay-a", 10, spec);
    snprintf(spec, sizeof(spec), "price: '23', requirements: [%s]", b_reqs);
    overlay("overlay-b", 10, spec);
    evaluate();
}

Test(overlay_store, offerings_overlapping_on_zone_conflict)
{
    pair_on_four_offerings("{key: topology.kubernetes.io/zone, operator: In, values: [test-zone-1, test-zone-4]}",
                           "{key: karpenter.sh/capacity-type, operator: Exists}");
    expect_conflict("overlay-a");
    expect_applied("overlay-b");
}

Test(overlay_store, offerings_overlapping_on_capacity_type_conflict)
{
    pair_on_four_offerings("{key: karpenter.sh/capacity-type, operator: Exists}",
                           "{key: karpenter.sh/capacity-type, operator: In, values: [spot]}");
    expect_conflict("overlay-a");
    expect_applied("overlay-b");
}

Test(overlay_store, offerings_that_do_not_overlap_are_priced_each)
{
    pair_on_four_offerings("{key: topology.kubernetes.io/zone, operator: In, values: [test-zone-6, test-zone-4]}",
                           "{key: karpenter.sh/capacity-type, operator: In, values: [spot]}");
    expect_applied("overlay-a");
    expect_applied("overlay-b");
    const kp_catalog *c = applied(0);
    cr_expect_float_eq(price_of(c, "default-instance-type", 0), 23.0, 1e-12);  /* spot zone 1 */
    cr_expect_float_eq(price_of(c, "default-instance-type", 1), 2.02, 1e-12);  /* on-demand zone 2: untouched */
    cr_expect_float_eq(price_of(c, "default-instance-type", 2), 23.0, 1e-12);  /* spot zone 3 */
    cr_expect_float_eq(price_of(c, "default-instance-type", 3), 1.03, 1e-12);  /* reserved zone 4 */
    cr_expect(kp_catalog_find(c, "default-instance-type")->price_overlaid);
    cr_expect_not(kp_catalog_find(c, "default-instance-type")->capacity_overlaid);
}

/* ---------------------------------------------------------------- prices */

Test(overlay_store, same_weight_price_changes_on_one_type_conflict)
{
    default_type("default-instance-type");
    default_type("small-instance-type");
    default_type("gpu-vendor-instance-type");
    overlay("overlay-a", 10, "priceAdjustment: '+54', requirements: [{key: node.kubernetes.io/instance-type, operator: In, values: [default-instance-type, small-instance-type]}]");
    overlay("overlay-b", 10, "priceAdjustment: '-2', requirements: [{key: node.kubernetes.io/instance-type, operator: In, values: [default-instance-type, gpu-vendor-instance-type]}]");
    evaluate();
    expect_conflict("overlay-a");
    expect_applied("overlay-b");
    /* all or nothing: small-instance-type does not get overlay-a's price either */
    cr_expect_float_eq(price_of(applied(0), "small-instance-type", 0), 1.02, 1e-12);
    cr_expect_float_eq(price_of(applied(0), "default-instance-type", 0), 0.0, 1e-12);
}

Test(overlay_store, equal_changes_of_the_same_weight_still_conflict)
{
    default_type("default-instance-type");
    overlay("overlay-a", 10, "price: '54', requirements: [{key: node.kubernetes.io/instance-type, operator: In, values: [default-instance-type]}]");
    overlay("overlay-b", 10, "price: '54', requirements: [{key: node.kubernetes.io/instance-type, operator: In, values: [default-instance-type]}]");
    evaluate();
    expect_conflict("overlay-a");
    expect_applied("overlay-b");
}

Test(overlay_store, the_heavier_price_wins_and_lighter_ones_are_still_applied)
{
    default_type("default-instance-type");
    default_type("gpu-vendor-instance-type");
    overlay("overlay-a", 10, "priceAdjustment: '-4', requirements: [{key: node.kubernetes.io/instance-type, operator: In, values: [default-instance-type]}]");
    overlay("overlay-b", 20, "price: '2', requirements: [{key: node.kubernetes.io/instance-type, operator: In, values: [default-instance-type, gpu-vendor-instance-type]}]");
    evaluate();
    expect_applied("overlay-a");
    expect_applied("overlay-b");
    cr_expect_float_eq(price_of(applied(0), "default-instance-type", 0), 2.0, 1e-12);
    cr_expect_float_eq(price_of(applied(0), "gpu-vendor-instance-type", 0), 2.0, 1e-12);
}

/* Karpenter's lowestWeight: once a lighter overlay has selected an offering,
 * the next overlay of that lighter weight conflicts with it. */
Test(overlay_store, the_lightest_weight_so_far_decides_conflicts)
{
    default_type("gpu-vendor-instance-type");
    overlay("overlay-b", 20, "price: '2', requirements: [{key: node.kubernetes.io/instance-type, operator: In, values: [gpu-vendor-instance-type]}]");
    overlay("overlay-c", 10, "price: '7', requirements: [{key: node.kubernetes.io/instance-type, operator: In, values: [gpu-vendor-instance-type]}]");
    overlay("overlay-a", 10, "price: '9', requirements: [{key: kubernetes.io/arch, operator: In, values: [amd64]}]");
    evaluate();
    expect_applied("overlay-b");
    expect_applied("overlay-c");
    expect_conflict("overlay-a");
    cr_expect(strstr(verdict("overlay-a")->message, "overlay-c"), "%s", verdict("overlay-a")->message);
    cr_expect_float_eq(price_of(applied(0), "gpu-vendor-instance-type", 0), 2.0, 1e-12);
}

Test(overlay_store, absent_weight_is_zero)
{
    default_type("default-instance-type");
    overlay("overlay-a", 0, "price: '3', requirements: []");
    overlay("overlay-b", 1, "price: '5', requirements: []");
    overlay("overlay-c", 0, "price: '4', requirements: []");
    evaluate();
    expect_applied("overlay-b");
    expect_applied("overlay-c");
    expect_conflict("overlay-a");
    cr_expect_float_eq(price_of(applied(0), "default-instance-type", 0), 5.0, 1e-12);
}

Test(overlay_store, overlays_per_nodepool_do_not_conflict)
{
    default_type("default-instance-type");
    pool("metadata: {name: one}\nspec: {template: {spec: {requirements: []}}}\n");
    pool("metadata: {name: two}\nspec: {template: {spec: {requirements: []}}}\n");
    overlay("overlay-a", 10, "price: '13234.223', requirements: [{key: karpenter.sh/nodepool, operator: In, values: [one]}]");
    overlay("overlay-b", 10, "priceAdjustment: '+2500', requirements: [{key: karpenter.sh/nodepool, operator: In, values: [two]}]");
    evaluate();
    expect_applied("overlay-a");
    expect_applied("overlay-b");
    cr_expect_float_eq(price_of(applied(0), "default-instance-type", 0), 13234.223, 1e-9);
    cr_expect_float_eq(price_of(applied(1), "default-instance-type", 0), 2501.02, 1e-9);
}

Test(overlay_store, template_labels_select_nodepools)
{
    default_type("default-instance-type");
    pool("metadata: {name: plain}\nspec: {template: {spec: {requirements: []}}}\n");
    pool("metadata: {name: labelled}\nspec: {template: {metadata: {labels: {test-label: test-value}}, spec: {requirements: []}}}\n");
    overlay("o", 10, "priceAdjustment: '+1000', requirements: [{key: test-label, operator: In, values: [test-value]}]");
    evaluate();
    expect_applied("o");
    cr_expect_float_eq(price_of(applied(0), "default-instance-type", 0), 1.02, 1e-12, "plain");
    cr_expect_float_eq(price_of(applied(1), "default-instance-type", 0), 1001.02, 1e-9, "labelled");
}

Test(overlay_store, requirements_that_select_nothing_change_nothing)
{
    default_type("default-instance-type");
    overlay("o", 10, "price: '13234.223', requirements: [{key: node.kubernetes.io/instance-type, operator: In, values: [not-found]}]");
    evaluate();
    expect_applied("o");
    cr_expect_eq(verdict("o")->n_types, 0);
    cr_expect_eq(applied(0), f.cat);
}

/* ------------------------------------------------------------- capacity */

Test(overlay_store, same_weight_capacity_on_one_type_conflicts)
{
    default_type("default-instance-type");
    default_type("small-instance-type");
    overlay("overlay-a", 10, "capacity: {smarter-devices/fuse: '1'}, requirements: [{key: node.kubernetes.io/instance-type, operator: In, values: [default-instance-type, small-instance-type]}]");
    overlay("overlay-b", 10, "capacity: {smarter-devices/fuse: '54'}, requirements: [{key: node.kubernetes.io/instance-type, operator: In, values: [default-instance-type, gpu-vendor-instance-type]}]");
    evaluate();
    expect_conflict("overlay-a");
    expect_applied("overlay-b");
    const kp_catalog *c = applied(0);
    cr_expect_eq(kp_it_capacity(kp_catalog_find(c, "default-instance-type"), "smarter-devices/fuse"), 54000);
    cr_expect_eq(kp_it_capacity(kp_catalog_find(c, "small-instance-type"), "smarter-devices/fuse"), 0);
}

Test(overlay_store, capacity_conflicts_only_on_the_same_resource)
{
    default_type("default-instance-type");
    default_type("small-instance-type");
    overlay("conflicting-overlay-1", 10, "capacity: {hugepage-1Gi: 2Gi}, requirements: [{key: node.kubernetes.io/instance-type, operator: In, values: [default-instance-type, small-instance-type]}]");
    overlay("good-overlay-1", 10, "capacity: {smarter-devices/fuse: '1'}, requirements: [{key: node.kubernetes.io/instance-type, operator: In, values: [default-instance-type]}]");
    overlay("conflicting-overlay-2", 10, "capacity: {hugepage-1Gi: 3Gi}, requirements: [{key: node.kubernetes.io/instance-type, operator: In, values: [default-instance-type]}]");
    evaluate();
    /* good-overlay-1, then conflicting-overlay-2 (other resources), then -1 meets -2 */
    expect_applied("good-overlay-1");
    expect_applied("conflicting-overlay-2");
    expect_conflict("conflicting-overlay-1");
}

Test(overlay_store, capacity_of_different_weights_merges)
{
    default_type("default-instance-type");
    overlay("overlay-a", 10, "capacity: {smarter-devices/fuse: '5', hugepages-2Mi: 50Mi}, requirements: [{key: node.kubernetes.io/instance-type, operator: In, values: [default-instance-type]}]");
    overlay("overlay-b", 20, "capacity: {smarter-devices/fuse: '99', custom-device/gpu: '1'}, requirements: [{key: node.kubernetes.io/instance-type, operator: In, values: [default-instance-type]}]");
    evaluate();
    expect_applied("overlay-a");
    expect_applied("overlay-b");
    const kp_instance_type *it = kp_catalog_find(applied(0), "default-instance-type");
    cr_expect_eq(kp_it_capacity(it, "smarter-devices/fuse"), 99000);
    cr_expect_eq(kp_it_capacity(it, "custom-device/gpu"), 1000);
    cr_expect_eq(kp_it_capacity(it, "hugepages-2Mi"), 50LL * 1024 * 1024 * 1000);
    cr_expect_eq(kp_it_capacity(it, "cpu"), 4000, "the cloud's resources stay");
    cr_expect(it->capacity_overlaid);
    cr_expect_not(it->price_overlaid);
    cr_expect_eq(kp_it_capacity(kp_catalog_find(f.cat, "default-instance-type"), "smarter-devices/fuse"), 0,
                 "the base catalog is untouched");
}

Test(overlay_store, capacity_goes_to_types_with_a_selected_offering)
{
    static const offer z1[] = {{"test-zone-1", "spot", 1.02}}, z2[] = {{"test-zone-2", "on-demand", 2.02}},
                       z4[] = {{"test-zone-4", "reserved", 4.02}};
    type("zone-one", "amd64", z1, 1);
    type("zone-two", "amd64", z2, 1);
    type("zone-four", "amd64", z4, 1);
    overlay("overlay-a", 20, "capacity: {smarter-devices/fuse: '1'}, requirements: [{key: topology.kubernetes.io/zone, operator: In, values: [test-zone-2]}]");
    overlay("overlay-b", 10, "capacity: {hugepages-1Gi: 2Gi}, requirements: [{key: topology.kubernetes.io/zone, operator: In, values: [test-zone-2, test-zone-4]}]");
    evaluate();
    const kp_catalog *c = applied(0);
    cr_expect_eq(kp_it_capacity(kp_catalog_find(c, "zone-two"), "smarter-devices/fuse"), 1000);
    cr_expect_eq(kp_it_capacity(kp_catalog_find(c, "zone-four"), "hugepages-1Gi"), (2LL << 30) * 1000);
    cr_expect_eq(kp_it_capacity(kp_catalog_find(c, "zone-one"), "hugepages-1Gi"), 0);
    cr_expect_float_eq(price_of(c, "zone-two", 0), 2.02, 1e-12);
}

Test(overlay_store, price_and_capacity_from_two_overlays)
{
    default_type("default-instance-type");
    overlay("price", 10, "priceAdjustment: '-50%', requirements: [{key: node.kubernetes.io/instance-type, operator: In, values: [default-instance-type]}]");
    overlay("capacity", 10, "capacity: {smarter-devices/fuse: '3'}, requirements: [{key: node.kubernetes.io/instance-type, operator: In, values: [default-instance-type]}]");
    evaluate();
    expect_applied("price");
    expect_applied("capacity");
    const kp_instance_type *it = kp_catalog_find(applied(0), "default-instance-type");
    cr_expect_float_eq(it->offerings[0].price, 0.51, 1e-12);
    cr_expect_eq(kp_it_capacity(it, "smarter-devices/fuse"), 3000);
}

/* ------------------------------------------------------------ evaluation */

Test(overlay_store, nodepools_without_instance_types_await_evaluation)
{
    default_type("default-instance-type");
    pool("metadata: {name: broken}\nspec: {template: {spec: {requirements: []}}}\n");
    pool("metadata: {name: healthy}\nspec: {template: {spec: {requirements: []}}}\n");
    f.pools[0].catalog = NULL;
    overlay("o", 10, "price: '7', requirements: []");
    evaluate();
    kp_catalog *c = NULL;
    cr_expect_eq(kp_overlay_store_apply(f.store, "broken", f.cat, &c), KP_ENOTREADY);
    cr_expect(strstr(kp_error_last(), "awaiting evaluation"), "%s", kp_error_last());
    cr_expect_eq(kp_overlay_store_apply(f.store, "unknown", f.cat, &c), KP_ENOTREADY);
    cr_expect_float_eq(price_of(applied(1), "default-instance-type", 0), 7.0, 1e-12);
}

Test(overlay_store, changes_follow_names_into_a_newer_catalog)
{
    default_type("default-instance-type");
    overlay("o", 10, "priceAdjustment: '+1', capacity: {a.b/c: '2'}, requirements: [{key: karpenter.sh/capacity-type, operator: In, values: [spot]}]");
    evaluate();
    kp_catalog *newer = kp_catalog_new("newer");
    kp_instance_type *other = kp_catalog_add_type(newer, "brand-new-type");
    kp_it_add_offering(newer, other, "test-zone-1", "spot", 0.5, true);
    kp_instance_type *it = kp_catalog_add_type(newer, "default-instance-type");
    kp_it_add_offering(newer, it, "test-zone-9", "on-demand", 3.0, true);
    kp_it_add_offering(newer, it, "test-zone-1", "spot", 2.0, true);
    kp_catalog *c = NULL;
    cr_assert_eq(kp_overlay_store_apply(f.store, "default", newer, &c), 0, "%s", kp_error_last());
    cr_assert_not_null(c);
    cr_expect_float_eq(price_of(c, "default-instance-type", 0), 3.0, 1e-12);
    cr_expect_float_eq(price_of(c, "default-instance-type", 1), 3.0, 1e-12, "spot 2.0 + 1");
    cr_expect_float_eq(price_of(c, "brand-new-type", 0), 0.5, 1e-12, "not evaluated yet");
    cr_expect_eq(kp_it_capacity(kp_catalog_find(c, "default-instance-type"), "a.b/c"), 2000);
    kp_catalog_free(c);
    kp_catalog_free(newer);
}

Test(overlay_store, the_store_outlives_its_inputs_and_is_shared)
{
    default_type("default-instance-type");
    overlay("o", 10, "price: '7', requirements: []");
    evaluate();
    kp_overlay_store *again = kp_overlay_store_ref(f.store);
    kp_arena_free(f.arena); /* the overlays and NodePools are gone */
    f.arena = kp_arena_new();
    kp_catalog *c = NULL;
    cr_assert_eq(kp_overlay_store_apply(again, "default", f.cat, &c), 0);
    cr_expect_float_eq(price_of(c, "default-instance-type", 0), 7.0, 1e-12);
    kp_catalog_free(c);
    cr_expect_null(kp_overlay_store_unref(again));
}
