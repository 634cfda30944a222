/* AWS error bodies, error classes and form encoding (see aws_http.h). */
#include <cjson/cJSON.h>
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/arena.h"
#include "base/error.h"
#include "cloud/aws/aws_http.h"
#include "cloud/aws/aws_xml.h"

static bool in_set(const char *code, const char *const *set, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(code, set[i]) == 0)
            return true;
    return false;
}

#define IN_SET(code, set) in_set((code), (set), sizeof(set) / sizeof((set)[0]))

bool kp_aws_code_is_throttle(const char *code)
{
    static const char *const codes[] = {
        "Throttling",           "ThrottlingException",   "ThrottledException",
        "RequestThrottledException", "TooManyRequestsException", "TooManyRequests",
        "ProvisionedThroughputExceededException", "TransactionInProgressException",
        "RequestLimitExceeded", "BandwidthLimitExceeded", "LimitExceededException",
        "RequestThrottled",     "SlowDown",              "PriorRequestNotComplete",
        "EC2ThrottledException", "RequestTimeout",       "RequestTimeoutException",
    };
    return code && IN_SET(code, codes);
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

bool kp_aws_code_is_not_found(const char *code)
{
    static const char *const codes[] = {
        "QueueDoesNotExist", "AWS.SimpleQueueService.NonExistentQueue", "NoSuchEntity",
        "ParameterNotFound", "InvalidLaunchTemplateName.NotFoundException",
        "ResourceNotFoundException",
    };
    return code && *code && (IN_SET(code, codes) || ends_with(code, ".NotFound"));
}

bool kp_aws_code_is_insufficient_capacity(const char *code)
{
    static const char *const codes[] = {
        "InsufficientInstanceCapacity", "MaxSpotInstanceCountExceeded", "VcpuLimitExceeded",
        "UnfulfillableCapacity", "Unsupported", "InsufficientFreeAddressesInSubnet",
        "MaxFleetCountExceeded", "ReservationCapacityExceeded",
    };
    return code && IN_SET(code, codes);
}

/* Karpenter's ToReasonMessage, in its order: the first entry whose text
 * appears in "code: message" names the reason. */
const char *kp_aws_launch_failure_reason(const char *code, const char *message)
{
    static const struct {
        const char *needle, *also, *reason;
    } reasons[] = {
        {"AuthFailure.ServiceLinkedRoleCreationNotPermitted", NULL, "SpotSLRCreationFailed"},
        {"Not authorized for images", NULL, "AMIAuthorizationFailure"}, /* an auth error's message */
        {"UnauthorizedOperation", NULL, "Unauthorized"},
        {"AccessDenied", NULL, "Unauthorized"},
        {"AuthFailure", NULL, "Unauthorized"},
        {"InvalidParameter", "belong to different networks", "SecurityGroupSubnetVPCMismatch"},
        {"iamInstanceProfile.name is invalid", NULL, "InstanceProfileNameInvalid"},
        {"InvalidLaunchTemplateId.NotFound", NULL, "LaunchTemplateNotFound"},
        {"InvalidAMIID.Malformed", NULL, "InvalidAMIID"},
        {"InvalidAMIID.NotFound", NULL, "AMINotFound"},
        {"RequestLimitExceeded", NULL, "RequestLimitExceeded"},
        {"InternalError", NULL, "InternalError"},
        {"not eligible for Free Tier", NULL, "FreeTierIneligible"},
        {"MaxFleetCountExceeded", NULL, "FleetQuotaExceeded"},
        {"PendingVerification", NULL, "AccountPendingVerification"},
        {"MaxSpotInstanceCountExceeded", NULL, "SpotQuotaExceeded"},
        {"VcpuLimitExceeded", NULL, "VCPULimitExceeded"},
        {"InsufficientFreeAddressesInSubnet", NULL, "InsufficientFreeAddressesInSubnet"},
    };
    char text[1024];
    snprintf(text, sizeof(text), "%s: %s", code ? code : "", message ? message : "");
    for (size_t i = 0; i < sizeof(reasons) / sizeof(reasons[0]); i++)
        if (strstr(text, reasons[i].needle) && (!reasons[i].also || strstr(text, reasons[i].also)))
            return reasons[i].reason;
    return "LaunchFailed";
}

static bool code_is_auth(const char *code)
{
    static const char *const codes[] = {
        "ExpiredToken", "ExpiredTokenException", "InvalidClientTokenId",
        "UnrecognizedClientException", "SignatureDoesNotMatch", "IncompleteSignature",
        "InvalidSignatureException", "MissingAuthenticationToken", "RequestExpired",
    };
    return IN_SET(code, codes);
}

int kp_aws_error_class(const kp_aws_error *e)
{
    if (e->http_status == 0 && !e->code[0])
        return KP_ERETRY; /* no answer: connection refused, reset, timeout */
    if (kp_aws_code_is_throttle(e->code) || e->http_status == 429 || e->http_status >= 500)
        return KP_ERETRY;
    if (kp_aws_code_is_not_found(e->code))
        return KP_ENOTFOUND;
    if (kp_aws_code_is_insufficient_capacity(e->code))
        return KP_EINSUFFICIENT_CAPACITY;
    if (code_is_auth(e->code) || e->http_status == 401)
        return KP_EUNAUTHORIZED;
    if (e->http_status == 403 || strncmp(e->code, "AuthFailure", 11) == 0 ||
        strcmp(e->code, "UnauthorizedOperation") == 0 || strncmp(e->code, "AccessDenied", 12) == 0)
        return KP_EFORBIDDEN;
    if (e->http_status >= 400 && e->http_status < 500)
        return KP_EINVALID;
    return KP_ERROR;
}

static void copy_field(char *dst, size_t size, const char *src)
{
    snprintf(dst, size, "%s", src ? src : "");
}

static void parse_xml_error(kp_aws_error *e, const char *body, size_t len)
{
    xmlDoc *doc = NULL;
    if (kp_aws_xml_parse(&doc, body, len) < 0)
        return;
    kp_arena *a = kp_arena_new();
    xmlNode *root = xmlDocGetRootElement(doc);
    /* EC2: <Response><Errors><Error>; AWS Query: <ErrorResponse><Error>. */
    xmlNode *err = kp_aws_xml_path(root, "Errors/Error");
    if (!err)
        err = kp_aws_xml_child(root, "Error");
    if (err) {
        copy_field(e->code, sizeof(e->code), kp_aws_xml_text(a, err, "Code"));
        copy_field(e->message, sizeof(e->message), kp_aws_xml_text(a, err, "Message"));
    }
    const char *rid = kp_aws_xml_text(a, root, "RequestID");
    if (!rid)
        rid = kp_aws_xml_text(a, root, "RequestId");
    if (rid)
        copy_field(e->request_id, sizeof(e->request_id), rid);
    kp_arena_free(a);
    xmlFreeDoc(doc);
}

/* "com.amazonaws.sqs#QueueDoesNotExist" -> "QueueDoesNotExist"; "Code:http://..." -> "Code". */
static void json_type_code(char *dst, size_t size, const char *type)
{
    const char *hash = strrchr(type, '#');
    const char *start = hash ? hash + 1 : type;
    size_t len = strcspn(start, ":");
    snprintf(dst, size, "%.*s", (int)len, start);
}

static void parse_json_error(kp_aws_error *e, const char *body, size_t len)
{
    cJSON *doc = cJSON_ParseWithLength(body, len);
    if (!doc)
        return;
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(doc, "__type");
    if (!cJSON_IsString(type))
        type = cJSON_GetObjectItemCaseSensitive(doc, "code");
    if (cJSON_IsString(type))
        json_type_code(e->code, sizeof(e->code), type->valuestring);
    const cJSON *msg = cJSON_GetObjectItemCaseSensitive(doc, "message");
    if (!cJSON_IsString(msg))
        msg = cJSON_GetObjectItemCaseSensitive(doc, "Message");
    if (cJSON_IsString(msg))
        copy_field(e->message, sizeof(e->message), msg->valuestring);
    cJSON_Delete(doc);
}

void kp_aws_error_parse(kp_aws_error *e, enum kp_aws_protocol protocol, const char *body,
                        size_t len)
{
    if (!body || len == 0)
        return;
    if (protocol == KP_AWS_QUERY)
        parse_xml_error(e, body, len);
    else
        parse_json_error(e, body, len);
    if (!e->code[0] && !e->message[0]) {
        /* Not an AWS error document (a proxy's page, say): keep its start, printable only. */
        size_t n = len < 200 ? len : 200, w = 0;
        for (size_t i = 0; i < n && w + 1 < sizeof(e->message); i++)
            e->message[w++] = isprint((unsigned char)body[i]) ? body[i] : ' ';
        e->message[w] = '\0';
    }
}

static int form_encode(kp_buf *form, const char *s)
{
    static const char hex[] = "0123456789ABCDEF";
    int err = 0;
    for (; *s && err == 0; s++) {
        unsigned char c = (unsigned char)*s;
        if (isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~') {
            err = kp_buf_putc(form, (char)c);
        } else {
            char esc[3] = {'%', hex[c >> 4], hex[c & 15]};
            err = kp_buf_append(form, esc, 3);
        }
    }
    return err;
}

int kp_aws_form_add(kp_buf *form, const char *key, const char *value)
{
    int err = form->len ? kp_buf_putc(form, '&') : 0;
    if (err == 0)
        err = form_encode(form, key);
    if (err == 0)
        err = kp_buf_putc(form, '=');
    if (err == 0)
        err = form_encode(form, value ? value : "");
    return err;
}

int kp_aws_form_addf(kp_buf *form, const char *value, const char *key_fmt, ...)
{
    char key[256];
    va_list ap;
    va_start(ap, key_fmt);
    int n = vsnprintf(key, sizeof(key), key_fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof(key))
        return kp_error_set(KP_EINVALID, "form key too long");
    return kp_aws_form_add(form, key, value);
}
