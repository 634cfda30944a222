/*
 * ValidationSucceeded as Karpenter decides it: with a class's AMIs, subnets,
 * security groups and instance profile resolved, make the launch template a
 * launch would use (a real CreateLaunchTemplate), then ask EC2 whether
 * CreateFleet and RunInstances would be allowed (DryRun). A refusal is the
 * condition's reason (CreateLaunchTemplateAuthCheckFailed,
 * CreateFleetAuthCheckFailed, RunInstancesAuthCheckFailed,
 * UserDataSizeLimitExceeded; DryRunNotHonored for an endpoint that ran the
 * call anyway) with AWS's code and message; throttling,
 * server errors and anything unexpected are returned, so the resolution is
 * retried. Results are kept 30 minutes per class inputs. DISABLE_DRY_RUN
 * skips all of it.
 */
#include "cloud/aws/provider_state.h"

#include <inttypes.h>
#include <string.h>

#include "base/buf.h"
#include "base/error.h"

#define VALIDATION_TTL_NS (INT64_C(30) * 60 * KP_NS_PER_SEC)

/* Everything a validation depends on, hashed, with the class's name in front. */
static const char *validation_key(const kp_ec2nodeclass *nc, kp_arena *a)
{
    kp_buf b = KP_BUF_INIT(1 << 20);
    kp_buf_printf(&b, "%" PRIu64 "|%s|", kp_aws_nodeclass_hash(nc),
                  nc->status_instance_profile ? nc->status_instance_profile : "");
    for (size_t i = 0; i < nc->n_status_subnets; i++)
        kp_buf_printf(&b, "s%s,", nc->status_subnets[i].id);
    for (size_t i = 0; i < nc->n_status_security_groups; i++)
        kp_buf_printf(&b, "g%s,", nc->status_security_groups[i].id);
    for (size_t i = 0; i < nc->n_status_amis; i++)
        kp_buf_printf(&b, "a%s,", nc->status_amis[i].id);
    uint64_t h = kp_aws_fnv1a(KP_AWS_FNV_OFFSET, b.data ? b.data : "", b.len);
    kp_buf_free(&b);
    return kp_arena_printf(a, "%s:%016" PRIx64, nc->meta.name, h);
}

typedef struct check {
    kp_awsp *p;
    kp_aws_client *ec2;
    const kp_ec2nodeclass *nc;
    kp_arena *a;
    kp_nodeclaim claim; /* Karpenter validates with a claim that names the class only */
    kp_ec2_tag *tags;
    size_t n_tags;
    kp_aws_pg_info pg;
    const char *type; /* the instance type tried */
    const char *ami;
    int32_t pods;
    kp_aws_lt lt;
    const char *reason, *message;
} check;

/* Karpenter's fallback types first (one per architecture), else any type the AMIs fit. */
static const kp_instance_type *pick(const kp_catalog *cat, const kp_ec2nodeclass *nc)
{
    static const char *const preferred[] = {"m5.large", "m6g.large"};
    for (size_t i = 0; i < 2; i++) {
        const kp_instance_type *it = kp_catalog_find(cat, preferred[i]);
        if (it && kp_aws_nodeclass_ami_for(nc, it)) return it;
    }
    for (size_t i = 0; i < cat->count; i++)
        if (kp_aws_nodeclass_ami_for(nc, &cat->types[i])) return &cat->types[i];
    return NULL;
}

static int pick_type(check *c)
{
    const kp_catalog *cat = NULL;
    pthread_mutex_lock(&c->p->catalog_lock);
    int err = kp_aws_instancetypes_catalog_pg(c->p->it, c->nc, c->pg.id ? &c->pg : NULL, &cat);
    const kp_instance_type *it = err == 0 ? pick(cat, c->nc) : NULL;
    if (it) {
        c->type = kp_arena_strdup(c->a, it->name);
        c->ami = kp_arena_strdup(c->a, kp_aws_nodeclass_ami_for(c->nc, it)->id);
        c->pods = (int32_t)(kp_it_capacity(it, "pods") / 1000);
    }
    pthread_mutex_unlock(&c->p->catalog_lock);
    if (err == KP_ENOTREADY) return kp_error_set(KP_ERETRY, "instance types not known yet");
    if (err < 0) return err;
    if (!it)
        return kp_error_set(KP_ERETRY, "no instance type fits the AMIs of ec2nodeclass %s",
                            c->nc->meta.name);
    return 0;
}

static const char *aws_error_text(check *c)
{
    const kp_aws_error *e = kp_aws_client_error(c->ec2);
    return e->code[0] ? kp_arena_printf(c->a, "%s: %s", e->code, e->message)
                      : kp_arena_strdup(c->a, kp_error_last());
}

/* An endpoint that performed a dry run (an emulator): EC2 itself always
 * answers DryRunOperation. Said once, on the condition, rather than
 * retried every minute, since each try really launched something. */
static bool not_honoured(check *c, int err, const char *what)
{
    if (err != KP_ERROR || kp_aws_client_error(c->ec2)->code[0]) return false;
    c->reason = "DryRunNotHonored";
    c->message = kp_arena_printf(c->a,
                                 "the EC2 endpoint performed %s although DryRun was set; an "
                                 "emulator without DryRun needs DISABLE_DRY_RUN=true",
                                 what);
    return true;
}

/* A failed call: a refusal becomes the condition; anything else is returned. */
static int refused(check *c, int err, const char *reason, const char *what)
{
    if (not_honoured(c, err, what)) return 0;
    if (err != KP_EFORBIDDEN && err != KP_EUNAUTHORIZED) return err;
    c->reason = reason;
    c->message =
        kp_arena_printf(c->a, "Controller isn't authorized to call %s: %s", what, aws_error_text(c));
    return 0;
}

static int create_template(check *c)
{
    kp_aws_lt_params lp = {c->nc, &c->claim, c->ami, "on-demand", c->pods, c->tags, c->n_tags,
                           NULL,  NULL,      false,  0,           c->pg.id, 0};
    int err = kp_aws_lt_ensure(c->p->lts, c->ec2, c->a, &lp, &c->lt);
    if (err < 0 && strstr(kp_aws_client_error(c->ec2)->message, "User data is limited to")) {
        c->reason = "UserDataSizeLimitExceeded";
        c->message = kp_arena_printf(c->a,
                                     "ec2:CreateLaunchTemplate rejected the rendered user data as "
                                     "too large: %s",
                                     aws_error_text(c));
        return 0;
    }
    if (err < 0) return refused(c, err, "CreateLaunchTemplateAuthCheckFailed", "ec2:CreateLaunchTemplate");
    return 0;
}

static int fleet_dry_run(check *c)
{
    size_t n = c->nc->n_status_subnets;
    kp_ec2_fleet_override *ov = KP_ARENA_NEW(c->a, kp_ec2_fleet_override, n + 1);
    for (size_t i = 0; i < n; i++)
        ov[i] = (kp_ec2_fleet_override){c->type, c->nc->status_subnets[i].id, NULL, NULL, 0, false};
    kp_ec2_fleet_template_config cfg = {NULL, c->lt.name, "$Latest", ov, n};
    kp_ec2_tag_spec specs[] = {{"instance", c->tags, c->n_tags},
                               {"volume", c->tags, c->n_tags},
                               {"fleet", c->tags, c->n_tags}};
    kp_ec2_create_fleet_input in = {.configs = &cfg, .n_configs = 1, .total_target_capacity = 1,
                                    .default_target_capacity_type = "on-demand",
                                    .on_demand_allocation_strategy = "lowest-price",
                                    .tag_specs = specs, .n_tag_specs = 3};
    int err = kp_ec2_dry_run_create_fleet(c->ec2, &in);
    return err < 0 ? refused(c, err, "CreateFleetAuthCheckFailed", "ec2:CreateFleet") : 0;
}

/* The class's interfaces as RunInstances takes them (indices and types). */
static void run_interfaces(check *c, kp_ec2_run_instances_dry_run *in)
{
    size_t n = c->nc->n_network_interfaces;
    kp_ec2_lt_network_interface *nis = KP_ARENA_NEW(c->a, kp_ec2_lt_network_interface, n + 1);
    for (size_t i = 0; i < n; i++) {
        const kp_nc_network_interface *ni = &c->nc->network_interfaces[i];
        nis[i] = (kp_ec2_lt_network_interface){.network_card_index = ni->network_card_index,
                                               .device_index = ni->device_index,
                                               .interface_type = ni->interface_type};
    }
    in->interfaces = n ? nis : NULL;
    in->n_interfaces = n;
}

/* Any subnet that would work is enough; the first subnet's answer decides. */
static int run_dry_run(check *c)
{
    kp_ec2_run_instances_dry_run in = {c->lt.name, c->type, NULL, NULL, 0, c->tags, c->n_tags};
    run_interfaces(c, &in);
    int first = 0;
    char *first_text = NULL;
    for (size_t i = 0; i < c->nc->n_status_subnets; i++) {
        in.subnet_id = c->nc->status_subnets[i].id;
        int err = kp_ec2_dry_run_run_instances(c->ec2, &in);
        if (err == 0) return 0;
        if (not_honoured(c, err, "ec2:RunInstances")) return 0;
        if (i == 0) first = err, first_text = kp_arena_strdup(c->a, aws_error_text(c));
    }
    if (first != KP_EFORBIDDEN && first != KP_EUNAUTHORIZED) return first;
    c->reason = "RunInstancesAuthCheckFailed";
    c->message = kp_arena_printf(c->a, "Controller isn't authorized to call ec2:RunInstances: %s",
                                 first_text);
    return 0;
}

static int dry_runs(check *c)
{
    kp_awsp_placement_group(c->p, c->ec2, c->nc, c->a, &c->pg);
    kp_aws_launch_tags(c->p->cluster_name, c->nc, &c->claim, true, c->a, &c->tags, &c->n_tags);
    int err = pick_type(c);
    if (err == 0) err = create_template(c);
    if (err == 0 && !c->reason) err = fleet_dry_run(c);
    if (err == 0 && !c->reason) err = run_dry_run(c);
    return err;
}

int kp_awsp_validate(void *ctx, const kp_aws_nc_clients *clients, const kp_ec2nodeclass *nc,
                     kp_arena *a, const char **reason, const char **message)
{
    kp_awsp *p = ctx;
    *reason = *message = NULL;
    if (p->disable_dry_run) return 0;
    const char *key = validation_key(nc, a);
    cJSON *hit = kp_aws_cache_get(p->validations, key);
    if (hit) {
        const char *r = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(hit, "reason"));
        const char *m = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(hit, "message"));
        *reason = r ? kp_arena_strdup(a, r) : NULL;
        *message = m ? kp_arena_strdup(a, m) : NULL;
        cJSON_Delete(hit);
        return 0;
    }
    check c = {.p = p, .ec2 = clients->ec2, .nc = nc, .a = a};
    c.claim.meta.name = nc->meta.name;
    int err = dry_runs(&c);
    if (err < 0) return kp_error_wrap(err, "validating ec2nodeclass %s", nc->meta.name);
    cJSON *v = cJSON_CreateObject();
    if (c.reason) cJSON_AddStringToObject(v, "reason", c.reason);
    if (c.message) cJSON_AddStringToObject(v, "message", c.message);
    kp_aws_cache_put(p->validations, key, v, VALIDATION_TTL_NS);
    cJSON_Delete(v);
    *reason = c.reason;
    *message = c.message;
    return 0;
}

void kp_awsp_placement_group(kp_awsp *p, kp_aws_client *ec2, const kp_ec2nodeclass *nc,
                             kp_arena *a, kp_aws_pg_info *out)
{
    bool found = false;
    kp_aws_nc_placement_group(p->resolver, ec2, nc, a, out, &found);
    kp_error_clear(); /* the node class's status says why when it matters */
    if (!found) *out = (kp_aws_pg_info){0};
}
