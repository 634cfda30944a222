# karpenter-c: one image holding both programs, karpenter-controller and
# karpenter-webhook (deploy/ runs each in its own container of one Pod).
#
#   docker build -t karpenter-c:0.1.0 .
#
# Stage 1 builds with the repository's CMake on Debian 12; stage 2 is Debian 12 slim
# with only the shared libraries the binaries load, running as uid/gid 65532.
# tests/integration/test_dockerfile.sh checks that the runtime stage installs the
# package of every library `ldd` finds for the binaries (run it after changing the
# link line or this file).

FROM debian:12 AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends \
      gcc make cmake pkg-config libc6-dev \
      libmicrohttpd-dev libssl-dev libcjson-dev libcurl4-openssl-dev libyaml-dev libxml2-dev \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
# Only the two programs: the tests need Criterion and a cluster, not an image.
RUN cmake -S . -B /build -DCMAKE_BUILD_TYPE=RelWithDebInfo \
 && cmake --build /build -j "$(nproc)" --target karpenter-controller karpenter-webhook \
 && strip --strip-debug /build/karpenter-controller /build/karpenter-webhook

FROM debian:12-slim
# One package per library the binaries load (libc6 and zlib1g are in the base):
#   libcjson1 libcJSON · libcurl4 libcurl (and through it nghttp2, ssh2, krb5, ldap,
#   brotli, zstd, psl, idn2) · libmicrohttpd12 the webhook's HTTPS server (and GnuTLS)
#   · libssl3 libcrypto (certificates, SigV4) · libyaml-0-2 YAML · libxml2 the AWS
#   provider's EC2 responses · ca-certificates to verify AWS endpoints.
RUN apt-get update \
 && apt-get install -y --no-install-recommends \
      ca-certificates libcjson1 libcurl4 libmicrohttpd12 libssl3 libxml2 libyaml-0-2 \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /build/karpenter-controller /build/karpenter-webhook /usr/local/bin/
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/karpenter-controller"]
CMD ["run"]
