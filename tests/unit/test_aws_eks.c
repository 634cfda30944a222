/*
 * EKS DescribeCluster on the in-process double (moto has no EKS): the REST
 * request (GET /clusters/<name>, SigV4 for service "eks"), the fields read
 * from AWS's documented answer, and every error EKS documents for the call.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "cloud/aws/eks.h"
#include "test_aws_double.h"

static kp_aws_client *client;
static kp_arena *arena;
static dbl_server server;
static kp_aws_credentials *creds;

static void serve(const dbl_response *script, size_t n)
{
    dbl_start(&server, script, n);
    kp_aws_creds c = {.access_key_id = "AKIDTEST", .secret_access_key = "secret"};
    cr_assert_eq(kp_aws_credentials_new_static(&creds, &c), 0);
    kp_aws_client_options o = {.region = "us-west-2", .endpoint_url = server.url,
                               .credentials = creds, .max_attempts = 2, .backoff_base_ms = 1,
                               .backoff_max_ms = 2};
    cr_assert_eq(kp_aws_client_new(&client, &o), 0, "%s", kp_error_last());
    arena = kp_arena_new();
}

static void teardown(void)
{
    client = kp_aws_client_free(client);
    arena = kp_arena_free(arena);
    dbl_free(&server);
    creds = kp_aws_credentials_free(creds);
}

TestSuite(aws_eks, .fini = teardown);

/* AWS's documented answer shape (DescribeCluster, API reference example). */
static const char *const CLUSTER =
    "{\"cluster\":{\"name\":\"prod\",\"arn\":\"arn:aws:eks:us-west-2:012345678910:cluster/prod\","
    "\"createdAt\":1.527807879988E9,\"version\":\"1.33\",\"endpoint\":"
    "\"https://A0DCCD80A04F01705DD065655C30CC3D.yl4.us-west-2.eks.amazonaws.com\","
    "\"roleArn\":\"arn:aws:iam::012345678910:role/eks-role\",\"resourcesVpcConfig\":{"
    "\"subnetIds\":[\"subnet-6782e71e\"],\"securityGroupIds\":[\"sg-6979fe18\"],"
    "\"vpcId\":\"vpc-950809ec\"},\"kubernetesNetworkConfig\":{\"serviceIpv4Cidr\":"
    "\"172.20.0.0/16\",\"ipFamily\":\"ipv4\"},\"status\":\"ACTIVE\",\"certificateAuthority\":"
    "{\"data\":\"LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0t\"},\"platformVersion\":\"eks.1\"}}";

Test(aws_eks, describe_cluster_reads_endpoint_ca_cidr_and_version)
{
    dbl_response script[] = {{200, "Content-Type: application/json\r\n", CLUSTER}};
    serve(script, 1);
    kp_eks_cluster c;
    cr_assert_eq(kp_eks_describe_cluster(client, arena, "prod", &c), 0, "%s", kp_error_last());
    dbl_stop(&server);
    cr_expect_str_eq(c.endpoint,
                     "https://A0DCCD80A04F01705DD065655C30CC3D.yl4.us-west-2.eks.amazonaws.com");
    cr_expect_str_eq(c.ca_data, "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0t");
    cr_expect_str_eq(c.service_ipv4_cidr, "172.20.0.0/16");
    cr_expect_null(c.service_ipv6_cidr);
    cr_expect_str_eq(kp_eks_service_cidr(&c), "172.20.0.0/16");
    cr_expect_str_eq(c.version, "1.33");
    cr_expect_str_eq(c.status, "ACTIVE");
    cr_expect_str_eq(c.ip_family, "ipv4");
    const dbl_request *r = &server.requests[0];
    cr_expect_str_eq(r->method, "GET");
    cr_expect_str_eq(r->path, "/clusters/prod");
    cr_expect_eq(r->body_len, 0);
    char h[512];
    cr_assert_not_null(dbl_header(r, "Authorization", h, sizeof(h)));
    cr_expect(strstr(h, "/us-west-2/eks/aws4_request") != NULL, "%s", h);
    cr_expect_null(dbl_header(r, "X-Amz-Target", h, sizeof(h)), "REST, not JSON-RPC");
}

Test(aws_eks, describe_cluster_ipv6_service_cidr)
{
    dbl_response script[] = {
        {200, NULL,
         "{\"cluster\":{\"name\":\"v6\",\"version\":\"1.32\",\"endpoint\":\"https://x\","
         "\"kubernetesNetworkConfig\":{\"serviceIpv6Cidr\":\"fd30:1c53:5f8a::/108\","
         "\"ipFamily\":\"ipv6\"}}}"}};
    serve(script, 1);
    kp_eks_cluster c;
    cr_assert_eq(kp_eks_describe_cluster(client, arena, "v6", &c), 0, "%s", kp_error_last());
    cr_expect_str_eq(kp_eks_service_cidr(&c), "fd30:1c53:5f8a::/108");
    cr_expect_str_eq(c.ip_family, "ipv6");
    cr_expect_null(c.ca_data);
}

typedef struct eks_error_case {
    int status;
    const char *header; /* x-amzn-ErrorType */
    const char *body;
    int want;
    const char *code;
} eks_error_case;

/* The errors EKS documents for DescribeCluster, in both of AWS's shapes (code
 * in the header, or in the body). */
static const eks_error_case ERRORS[] = {
    {404, "x-amzn-ErrorType: ResourceNotFoundException:http://internal.amazon.com/\r\n",
     "{\"message\":\"No cluster found for name: prod.\"}", KP_ENOTFOUND,
     "ResourceNotFoundException"},
    {403, NULL, "{\"__type\":\"AccessDeniedException\",\"message\":\"not allowed\"}",
     KP_EFORBIDDEN, "AccessDeniedException"},
    {400, "x-amzn-ErrorType: InvalidParameterException\r\n", "{\"message\":\"bad\"}",
     KP_EINVALID, "InvalidParameterException"},
    {400, "x-amzn-ErrorType: ClientException\r\n", "{\"message\":\"client\"}", KP_EINVALID,
     "ClientException"},
};

Test(aws_eks, describe_cluster_errors_carry_aws_code)
{
    for (size_t i = 0; i < sizeof(ERRORS) / sizeof(ERRORS[0]); i++) {
        dbl_response script[] = {{ERRORS[i].status, ERRORS[i].header, ERRORS[i].body}};
        serve(script, 1);
        kp_eks_cluster c = {.name = "untouched"};
        cr_expect_eq(kp_eks_describe_cluster(client, arena, "prod", &c), ERRORS[i].want,
                     "case %zu: %s", i, kp_error_last());
        cr_expect_str_eq(kp_aws_client_error(client)->code, ERRORS[i].code, "case %zu", i);
        cr_expect(strstr(kp_error_last(), ERRORS[i].code) != NULL, "%s", kp_error_last());
        cr_expect_str_eq(c.name, "untouched", "output untouched on failure");
        teardown();
    }
}

Test(aws_eks, describe_cluster_server_errors_are_retried)
{
    dbl_response script[] = {
        {500, "x-amzn-ErrorType: ServerException\r\n", "{\"message\":\"oops\"}"},
        {503, "x-amzn-ErrorType: ServiceUnavailableException\r\n", "{\"message\":\"later\"}"}};
    serve(script, 2);
    kp_eks_cluster c;
    cr_expect_eq(kp_eks_describe_cluster(client, arena, "prod", &c), KP_ERETRY);
    cr_expect_eq(server.n_requests, 2, "the client retried once");
    cr_expect_str_eq(kp_aws_client_error(client)->code, "ServiceUnavailableException");
}

Test(aws_eks, describe_cluster_refuses_bad_names_and_bad_answers)
{
    dbl_response script[] = {{200, NULL, "not json"},
                             {200, NULL, "{\"cluster\":{\"name\":\"prod\",\"status\":\"CREATING\"}}"}};
    serve(script, 2);
    kp_eks_cluster c;
    cr_expect_eq(kp_eks_describe_cluster(client, arena, "../admin", &c), KP_EINVALID);
    cr_expect_eq(kp_eks_describe_cluster(client, arena, "", &c), KP_EINVALID);
    cr_expect_eq(server.n_requests, 0, "nothing sent for a bad name");
    cr_expect_eq(kp_eks_describe_cluster(client, arena, "prod", &c), KP_EINVALID);
    cr_expect_eq(kp_eks_describe_cluster(client, arena, "prod", &c), KP_EINVALID);
    cr_expect(strstr(kp_error_last(), "CREATING") != NULL, "%s", kp_error_last());
}
