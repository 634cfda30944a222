/*
 * The EC2 instance metadata service, version 2 only: a PUT for a session token,
 * then GETs carrying it. Short timeouts, because off EC2 nothing answers at
 * the link-local address and callers (the credential chain, region discovery)
 * must move on quickly.
 *
 * Endpoint: the argument, else AWS_EC2_METADATA_SERVICE_ENDPOINT, else
 * http://169.254.169.254 (tests point it at a loopback double).
 */
#ifndef KP_CLOUD_AWS_IMDS_H
#define KP_CLOUD_AWS_IMDS_H

#include <stddef.h>

#include "base/buf.h"

/* The endpoint to use, without a trailing '/'. */
const char *kp_aws_imds_endpoint(const char *explicit_endpoint);

/* GET `path` ("/latest/meta-data/placement/region"), appending the body to
 * `out`. KP_ENOTFOUND on HTTP 404; KP_EIO when nothing answers; KP_ERROR on
 * any other status. `timeout_ms` bounds each of the two requests (0: 1000). */
int kp_aws_imds_get(kp_buf *out, const char *endpoint, long timeout_ms, const char *path);

/* The instance's region, for a controller started without one. */
int kp_aws_imds_region(char *out, size_t size, const char *endpoint, long timeout_ms);

#endif
