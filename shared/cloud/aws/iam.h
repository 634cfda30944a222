/*
 * IAM over the AWS Query protocol (Action=..., Version=2010-05-08, form POST,
 * XML answers; one global endpoint signed for us-east-1): the instance-profile
 * calls the node-class code makes when a class names a role rather than an
 * instance profile. Results live in the caller's arena; errors are KP_E*
 * codes with the AWS error readable through kp_aws_client_error()
 * (NoSuchEntity is KP_ENOTFOUND).
 */
#ifndef KP_CLOUD_AWS_IAM_H
#define KP_CLOUD_AWS_IAM_H

#include <stddef.h>

#include "base/arena.h"
#include "cloud/aws/aws_http.h"

#define KP_IAM_API_VERSION "2010-05-08"

typedef struct kp_iam_tag {
    const char *key;
    const char *value;
} kp_iam_tag;

typedef struct kp_iam_instance_profile {
    const char *name;
    const char *id;
    const char *arn;
    const char *path;
    const char **roles; /* role names */
    size_t n_roles;
    kp_iam_tag *tags;
    size_t n_tags;
} kp_iam_instance_profile;

typedef struct kp_iam_instance_profile_list {
    kp_iam_instance_profile *items;
    size_t n;
} kp_iam_instance_profile_list;

int kp_iam_get_instance_profile(kp_aws_client *client, kp_arena *arena, const char *name,
                                kp_iam_instance_profile *out);
/* `path` NULL: "/". */
int kp_iam_create_instance_profile(kp_aws_client *client, kp_arena *arena, const char *name,
                                   const char *path, const kp_iam_tag *tags, size_t n_tags,
                                   kp_iam_instance_profile *out);
int kp_iam_add_role_to_instance_profile(kp_aws_client *client, const char *profile,
                                        const char *role);
int kp_iam_remove_role_from_instance_profile(kp_aws_client *client, const char *profile,
                                             const char *role);
int kp_iam_delete_instance_profile(kp_aws_client *client, const char *name);
/* Every profile under `path_prefix` (NULL: all), following Marker to the end. */
int kp_iam_list_instance_profiles(kp_aws_client *client, kp_arena *arena, const char *path_prefix,
                                  kp_iam_instance_profile_list *out);

#endif
