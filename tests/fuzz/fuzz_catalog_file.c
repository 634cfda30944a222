/*
 * libFuzzer target for the instance-type catalog file loader
 * (`--instance-types FILE.json`, cloud/catalog_file.c): the input is written
 * to an in-memory file and loaded by path, as a user's file would be. It must
 * load or be refused with a message; never crash or leak.
 */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cloud/instance_types.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int fd = memfd_create("catalog", MFD_CLOEXEC);
    if (fd < 0) return 0;
    if (write(fd, data, size) == (ssize_t)size) {
        char path[64];
        snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
        kp_catalog *catalog = NULL;
        if (kp_catalog_load_file(path, &catalog) == 0) {
            for (size_t i = 0; i < catalog->count; i++)
                kp_catalog_find(catalog, catalog->types[i].name);
            kp_catalog_free(catalog);
        }
    }
    close(fd);
    return 0;
}
