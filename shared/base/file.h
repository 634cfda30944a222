/*
 * Reading a whole file into a capped buffer: the one loop every reader of a
 * certificate, kubeconfig, policy, manifest or catalog needs. The cap is the
 * buffer's (KP_BUF_INIT(cap)); a larger file is KP_ETOOLARGE, a missing one
 * KP_ENOTFOUND, any other failure KP_EIO, each with the path in the message.
 */
#ifndef KP_BASE_FILE_H
#define KP_BASE_FILE_H

#include "base/buf.h"

/* Append the contents of `path` to `out`. */
int kp_file_read(kp_buf *out, const char *path);

#endif
