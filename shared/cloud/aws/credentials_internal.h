/* Helpers shared by credentials.c and credentials_remote.c; not an interface. */
#ifndef KP_CLOUD_AWS_CREDENTIALS_INTERNAL_H
#define KP_CLOUD_AWS_CREDENTIALS_INTERNAL_H

#include "cloud/aws/credentials.h"

/* Fill `out` after checking lengths; `source` is a static string. */
int kp_creds_set(kp_aws_creds *out, const char *key, const char *secret, const char *token,
                 int64_t expires_ns, const char *source);
/* Overwrite with zeros in a way the compiler keeps. */
void kp_creds_wipe(kp_aws_creds *creds);

#endif
