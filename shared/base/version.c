/* Build identity (see version.h); the two strings come from the build. */
#include "base/version.h"

#include "kp_version_info.h"

#define KP_STR2(x) #x
#define KP_STR(x) KP_STR2(x)

const char *kp_version(void)
{
    return KP_VERSION_STRING;
}

const char *kp_commit(void)
{
    return KP_COMMIT_STRING;
}

const char *kp_compiler(void)
{
#if defined(__clang__)
    return "clang " __clang_version__;
#elif defined(__GNUC__)
    return "gcc " KP_STR(__GNUC__) "." KP_STR(__GNUC_MINOR__) "." KP_STR(__GNUC_PATCHLEVEL__);
#else
    return "unknown";
#endif
}

const char *kp_arch(void)
{
#if defined(__x86_64__)
    return "amd64";
#elif defined(__aarch64__)
    return "arm64";
#elif defined(__i386__)
    return "386";
#else
    return "unknown";
#endif
}
