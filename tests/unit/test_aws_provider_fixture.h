/*
 * Shared set-up for the AWS provider tests (node classes, launch templates,
 * launches, the provider): one in-process double (test_aws_double.h) that
 * answers a script for every service (EC2, SSM, IAM share its URL), clients
 * for it, a fake clock, an arena, and builders for the EC2/SSM/IAM answers
 * and for decoded objects. Test-only.
 *
 * Use: answer(...) as many times as requests are expected, then start(),
 * then call the code; sent(i, key) reads form field `key` of request i.
 */
#ifndef KP_TEST_AWS_PROVIDER_FIXTURE_H
#define KP_TEST_AWS_PROVIDER_FIXTURE_H

#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/decode.h"
#include "base/error.h"
#include "cloud/aws/aws_http.h"
#include "cloud/instance_types.h"
#include "test_aws_double.h"
#include "helpers/assert.h"

#define FX_FN static __attribute__((unused))

typedef struct fx_env {
    dbl_server server;
    dbl_response script[DBL_MAX_REQUESTS];
    size_t n_script;
    bool started;
    kp_aws_credentials *creds;
    kp_aws_client *ec2, *ssm, *iam;
    kp_fake_clock clock;
    kp_arena *arena;
} fx_env;

static fx_env fx;

FX_FN void fx_init(void)
{
    memset(&fx, 0, sizeof(fx));
    fx.arena = kp_arena_new();
    kp_fake_clock_init(&fx.clock, INT64_C(1767225600) * KP_NS_PER_SEC); /* 2026-01-01 */
}

FX_FN void fx_fini(void)
{
    fx.ec2 = kp_aws_client_free(fx.ec2);
    fx.ssm = kp_aws_client_free(fx.ssm);
    fx.iam = kp_aws_client_free(fx.iam);
    fx.creds = kp_aws_credentials_free(fx.creds);
    if (fx.started) dbl_free(&fx.server);
    fx.arena = kp_arena_free(fx.arena);
}

/* printf into the test arena. */
FX_FN const char *fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));
FX_FN const char *fmt(const char *f, ...)
{
    va_list ap;
    va_start(ap, f);
    char *s = kp_arena_vprintf(fx.arena, f, ap);
    va_end(ap);
    return s;
}

/* Queue the next answer (the body is kept as given: pass arena or static text). */
FX_FN void answer(int status, const char *body)
{
    cr_assert_lt(fx.n_script, DBL_MAX_REQUESTS, "too many scripted answers");
    fx.script[fx.n_script++] = (dbl_response){status, NULL, body};
}

FX_FN void start(void)
{
    dbl_start(&fx.server, fx.script, fx.n_script);
    fx.started = true;
    kp_aws_creds c = {.access_key_id = "AKIDTEST", .secret_access_key = "secret"};
    cr_assert_eq(kp_aws_credentials_new_static(&fx.creds, &c), 0);
    kp_aws_client_options o = {.region = "us-west-2",
                               .endpoint_url = fx.server.url,
                               .credentials = fx.creds,
                               .max_attempts = 1};
    KP_ASSERT_OK(kp_aws_client_new(&fx.ec2, &o));
    cr_assert_eq(kp_aws_client_new(&fx.ssm, &o), 0);
    cr_assert_eq(kp_aws_client_new(&fx.iam, &o), 0);
}

/* How many requests the double has seen so far. */
FX_FN size_t requests(void)
{
    return fx.server.n_requests;
}

FX_FN int hexval(int c)
{
    return isdigit(c) ? c - '0' : tolower(c) - 'a' + 10;
}

/* `s` with %XX and '+' decoded. */
FX_FN char *url_decode(const char *s, size_t n)
{
    char *out = kp_arena_alloc(fx.arena, n + 1), *o = out;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '%' && i + 2 < n + 1 && isxdigit((unsigned char)s[i + 1]) &&
            isxdigit((unsigned char)s[i + 2])) {
            *o++ = (char)(hexval((unsigned char)s[i + 1]) * 16 + hexval((unsigned char)s[i + 2]));
            i += 2;
        } else {
            *o++ = s[i] == '+' ? ' ' : s[i];
        }
    }
    *o = '\0';
    return out;
}

/* Form field `key` of request `i`, decoded; NULL when absent. */
FX_FN const char *sent(size_t i, const char *key)
{
    cr_assert_lt(i, fx.server.n_requests, "request %zu was not made", i);
    const char *p = fx.server.requests[i].body;
    while (p && *p) {
        const char *amp = strchr(p, '&'), *end = amp ? amp : p + strlen(p);
        const char *eq = memchr(p, '=', (size_t)(end - p));
        if (eq && strcmp(url_decode(p, (size_t)(eq - p)), key) == 0)
            return url_decode(eq + 1, (size_t)(end - eq - 1));
        p = amp ? amp + 1 : NULL;
    }
    return NULL;
}

/* The Action of request `i` (form), or the X-Amz-Target (JSON). */
FX_FN const char *action(size_t i)
{
    const char *a = sent(i, "Action");
    if (a) return a;
    char h[256];
    const char *t = dbl_header(&fx.server.requests[i], "X-Amz-Target", h, sizeof(h));
    return t ? kp_arena_strdup(fx.arena, t) : "";
}

FX_FN const char *body(size_t i)
{
    cr_assert_lt(i, fx.server.n_requests);
    return fx.server.requests[i].body;
}

/* The EC2 filter named `name` in request `i`: its values joined with ','. */
FX_FN const char *filter(size_t i, const char *name)
{
    for (int f = 1; f < 50; f++) {
        const char *n = sent(i, fmt("Filter.%d.Name", f));
        if (!n) break;
        if (strcmp(n, name) != 0) continue;
        const char *all = "";
        for (int v = 1;; v++) {
            const char *val = sent(i, fmt("Filter.%d.Value.%d", f, v));
            if (!val) return all;
            all = fmt("%s%s%s", all, v > 1 ? "," : "", val);
        }
    }
    return NULL;
}

/* ------------------------------------------------------------ EC2 answers */

FX_FN const char *ec2_response(const char *action_name, const char *set, const char *items)
{
    return fmt("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<%sResponse "
               "xmlns=\"http://ec2.amazonaws.com/doc/2016-11-15/\"><requestId>r-1</requestId>"
               "<%s>%s</%s></%sResponse>",
               action_name, set, items, set, action_name);
}

FX_FN const char *ec2_error(const char *code, const char *message)
{
    return fmt("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Response><Errors><Error><Code>%s"
               "</Code><Message>%s</Message></Error></Errors><RequestID>r-2</RequestID>"
               "</Response>",
               code, message);
}

FX_FN const char *subnet(const char *id, const char *zone, const char *zone_id, int ips)
{
    return fmt("<item><subnetId>%s</subnetId><vpcId>vpc-1</vpcId><availabilityZone>%s"
               "</availabilityZone><availabilityZoneId>%s</availabilityZoneId>"
               "<availableIpAddressCount>%d</availableIpAddressCount><state>available</state>"
               "</item>",
               id, zone, zone_id, ips);
}

FX_FN const char *subnets(const char *items)
{
    return ec2_response("DescribeSubnets", "subnetSet", items);
}

FX_FN const char *group(const char *id, const char *name)
{
    return fmt("<item><groupId>%s</groupId><groupName>%s</groupName><vpcId>vpc-1</vpcId></item>",
               id, name);
}

FX_FN const char *groups(const char *items)
{
    return ec2_response("DescribeSecurityGroups", "securityGroupInfo", items);
}

/* `deprecation` NULL: not deprecated. */
FX_FN const char *image(const char *id, const char *name, const char *arch, const char *created,
                        const char *deprecation)
{
    return fmt("<item><imageId>%s</imageId><name>%s</name><architecture>%s</architecture>"
               "<imageState>available</imageState><creationDate>%s</creationDate>%s</item>",
               id, name, arch, created,
               deprecation ? fmt("<deprecationTime>%s</deprecationTime>", deprecation) : "");
}

FX_FN const char *images(const char *items)
{
    return ec2_response("DescribeImages", "imagesSet", items);
}

/* ------------------------------------------------------- SSM, IAM answers */

FX_FN const char *ssm_value(const char *value)
{
    return fmt("{\"Parameter\":{\"Name\":\"p\",\"Type\":\"String\",\"Value\":\"%s\","
               "\"Version\":1}}",
               value);
}

FX_FN const char *ssm_not_found(void)
{
    return "{\"__type\":\"ParameterNotFound\",\"message\":\"not found\"}";
}

/* The SSM parameter name request `i` asked for. */
FX_FN const char *ssm_asked(size_t i)
{
    cJSON *j = cJSON_Parse(body(i));
    cr_assert_not_null(j, "SSM request %zu is JSON", i);
    const char *name = kp_arena_strdup(
        fx.arena, cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(j, "Name")));
    cJSON_Delete(j);
    return name;
}

FX_FN const char *iam_profile(const char *action_name, const char *name, const char *role)
{
    return fmt("<%sResponse xmlns=\"https://iam.amazonaws.com/doc/2010-05-08/\"><%sResult>"
               "<InstanceProfile><InstanceProfileName>%s</InstanceProfileName>"
               "<InstanceProfileId>AIPA1</InstanceProfileId><Arn>arn:aws:iam::1:"
               "instance-profile/%s</Arn><Path>/</Path><Roles>%s</Roles></InstanceProfile>"
               "</%sResult></%sResponse>",
               action_name, action_name, name, name,
               role ? fmt("<member><RoleName>%s</RoleName></member>", role) : "", action_name,
               action_name);
}

FX_FN const char *iam_ok(const char *action_name)
{
    return fmt("<%sResponse><ResponseMetadata><RequestId>r</RequestId></ResponseMetadata>"
               "</%sResponse>",
               action_name, action_name);
}

FX_FN const char *iam_error(const char *code)
{
    return fmt("<ErrorResponse><Error><Type>Sender</Type><Code>%s</Code><Message>m</Message>"
               "</Error><RequestId>r</RequestId></ErrorResponse>",
               code);
}

/* ------------------------------------------------------------ CreateFleet */

FX_FN const char *fleet_overrides(const char *type, const char *zone, const char *subnet_id)
{
    return fmt("<launchTemplateAndOverrides><launchTemplateSpecification><launchTemplateName>"
               "karpenter.k8s.aws/1</launchTemplateName><version>$Latest</version>"
               "</launchTemplateSpecification><overrides><instanceType>%s</instanceType>"
               "<subnetId>%s</subnetId><availabilityZone>%s</availabilityZone></overrides>"
               "</launchTemplateAndOverrides>",
               type, subnet_id, zone);
}

FX_FN const char *fleet_instance(const char *id, const char *type, const char *zone,
                                 const char *subnet_id, const char *lifecycle)
{
    return fmt("<item>%s<lifecycle>%s</lifecycle><instanceIds><item>%s</item></instanceIds>"
               "<instanceType>%s</instanceType></item>",
               fleet_overrides(type, zone, subnet_id), lifecycle, id, type);
}

FX_FN const char *fleet_error(const char *code, const char *type, const char *zone,
                              const char *subnet_id)
{
    return fmt("<item>%s<lifecycle>spot</lifecycle><errorCode>%s</errorCode><errorMessage>"
               "no %s in %s</errorMessage></item>",
               fleet_overrides(type, zone, subnet_id), code, type, zone);
}

FX_FN const char *fleet(const char *instances, const char *errors)
{
    return fmt("<CreateFleetResponse><requestId>r</requestId><fleetId>fleet-1</fleetId>"
               "<errorSet>%s</errorSet><fleetInstanceSet>%s</fleetInstanceSet>"
               "</CreateFleetResponse>",
               errors, instances);
}

/* ---------------------------------------------------------- catalogs */

/* A type offered on-demand and spot in us-west-2a and -2b (spot at
 * `spot_price`, < 0: no spot offerings), with cpu and pods capacity and the
 * labels launches read. */
FX_FN kp_instance_type *cat_type(kp_catalog *cat, const char *name, const char *arch,
                                 double od_price, double spot_price, int64_t cpus, int64_t pods)
{
    kp_instance_type *t = kp_catalog_add_type(cat, name);
    kp_it_add_label(cat, t, "node.kubernetes.io/instance-type", name);
    kp_it_add_label(cat, t, "kubernetes.io/arch", arch);
    kp_it_add_label(cat, t, "kubernetes.io/os", "linux");
    const char *dot = strchr(name, '.');
    kp_it_add_label(cat, t, "karpenter.k8s.aws/instance-size", dot ? dot + 1 : name);
    const char *zones[] = {"us-west-2a", "us-west-2b"};
    kp_it_add_req(cat, t, "topology.kubernetes.io/zone", KP_OP_IN, zones, 2);
    kp_it_set_capacity(cat, t, "cpu", cpus * 1000);
    kp_it_set_capacity(cat, t, "memory", cpus * 4 * 1024 * INT64_C(1048576) * 1000);
    kp_it_set_capacity(cat, t, "pods", pods * 1000);
    kp_it_set_overhead(cat, t, "cpu", 100);
    for (int z = 0; z < 2; z++) {
        kp_it_add_offering(cat, t, zones[z], "on-demand", od_price, true);
        if (spot_price >= 0) kp_it_add_offering(cat, t, zones[z], "spot", spot_price, true);
    }
    return t;
}

/* The offering of `t` in `zone` of `capacity_type`. */
FX_FN kp_offering *offering(const kp_instance_type *t, const char *zone, const char *ct)
{
    for (uint32_t i = 0; i < t->n_offerings; i++)
        if (strcmp(t->offerings[i].zone, zone) == 0 &&
            strcmp(t->offerings[i].capacity_type, ct) == 0)
            return &t->offerings[i];
    cr_assert_fail("no %s %s offering", zone, ct);
    return NULL;
}

/* ---------------------------------------------------------------- objects */

FX_FN const kp_ec2nodeclass *nodeclass(const char *json)
{
    cJSON *doc = cJSON_Parse(json);
    cr_assert_not_null(doc, "bad test JSON: %s", json);
    kp_ec2nodeclass *nc = KP_ARENA_NEW(fx.arena, kp_ec2nodeclass, 1);
    KP_ASSERT_OK(kp_decode_ec2nodeclass(fx.arena, doc, nc));
    cJSON_Delete(doc);
    return nc;
}

FX_FN const kp_nodeclaim *nodeclaim(const char *json)
{
    cJSON *doc = cJSON_Parse(json);
    cr_assert_not_null(doc, "bad test JSON: %s", json);
    kp_nodeclaim *c = KP_ARENA_NEW(fx.arena, kp_nodeclaim, 1);
    KP_ASSERT_OK(kp_decode_nodeclaim(fx.arena, doc, c));
    cJSON_Delete(doc);
    return c;
}

/* The value at a dotted path of `j` ("amis.0.id"; numbers index arrays). */
FX_FN const cJSON *jpath(const cJSON *j, const char *path)
{
    char part[128];
    while (j && *path) {
        size_t n = strcspn(path, ".");
        snprintf(part, sizeof(part), "%.*s", (int)n, path);
        if (cJSON_IsArray(j) && isdigit((unsigned char)part[0]))
            j = cJSON_GetArrayItem(j, (int)strtol(part, NULL, 10));
        else
            j = cJSON_GetObjectItemCaseSensitive(j, part);
        path += n + (path[n] == '.');
    }
    return j;
}

FX_FN const char *jstr_at(const cJSON *j, const char *path)
{
    const char *s = cJSON_GetStringValue(jpath(j, path));
    return s ? s : "<absent>";
}

#endif
