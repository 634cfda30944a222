/*
 * What this build is: the release version, the git commit it was built
 * from, and the compiler and CPU architecture, for --version, the start-up
 * log line and karpenter_build_info.
 */
#ifndef KP_BASE_VERSION_H
#define KP_BASE_VERSION_H

const char *kp_version(void);  /* "0.1.0" */
const char *kp_commit(void);   /* a short git commit, or "unknown" */
const char *kp_compiler(void); /* "gcc 12.2.0" */
const char *kp_arch(void);     /* as Go names it: "amd64", "arm64" */

#endif
