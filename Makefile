# Thin front door. The real build is CMake; see README.md.
BUILD      ?= build
ASAN_BUILD ?= build-asan
JOBS       ?= $(shell nproc)
CMAKE      ?= cmake
EXAMPLE    ?= examples/nginx

.PHONY: all deps build build-asan install run demo test bench bench-karpenter bench-e2e e2e fuzz format check-source clean

all: build

deps:
	@scripts/install-deps.sh build

build: deps
	@$(CMAKE) -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	@$(CMAKE) --build $(BUILD) -j $(JOBS)

build-asan: deps
	@$(CMAKE) -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DKP_SANITIZE=ON >/dev/null
	@$(CMAKE) --build $(ASAN_BUILD) -j $(JOBS)

# The two programs into $(PREFIX)/bin (default /usr/local/bin), so the docs' commands
# find them on PATH.
PREFIX  ?= /usr/local
install: build
	install -d $(DESTDIR)$(PREFIX)/bin
	install -m 0755 $(BUILD)/karpenter-controller $(BUILD)/karpenter-webhook $(DESTDIR)$(PREFIX)/bin/

# The main job on its embedded default: plan the example cluster offline.
run: build
	$(BUILD)/karpenter-controller simulate -f $(EXAMPLE) -o table

# The autoscaler on a local control plane with the kwok provider; Ctrl-C ends it.
# Only the two programs are built (not the tests).
demo: deps
	@$(CMAKE) -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	@$(CMAKE) --build $(BUILD) -j $(JOBS) --target karpenter-controller karpenter-webhook
	@scripts/install-deps.sh e2e
	@BUILD=$(BUILD) scripts/demo.sh

# Every test, under AddressSanitizer and UndefinedBehaviorSanitizer.
test: build-asan check-source
	@scripts/install-deps.sh moto cel
	@cd $(ASAN_BUILD) && ctest --output-on-failure -j $(JOBS)

# End-to-end tests on a real control plane (built once, cached under ~/.cache).
e2e: build
	@scripts/install-deps.sh e2e
	@tests/e2e/run.sh

# Provisioning latency and RSS, and drift roll time serial vs parallel, on the real
# control plane (kwok provider).
bench-e2e: build
	@scripts/install-deps.sh e2e
	@tests/e2e/bench_provisioning.sh
	@tests/e2e/bench_disruption.sh

# libFuzzer targets (tests/fuzz), each for FUZZ_SECONDS.
FUZZ_SECONDS ?= 60
fuzz: deps
	@scripts/install-deps.sh fuzz
	@$(CMAKE) -S . -B build-fuzz -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=Debug -DKP_FUZZ=ON >/dev/null
	@$(CMAKE) --build build-fuzz -j $(JOBS) --target fuzzers
	@scripts/run-fuzzers.sh build-fuzz $(FUZZ_SECONDS)

bench: build
	@scripts/install-deps.sh bench
	@scripts/bench.sh $(BUILD)

# Only Karpenter's scheduling benchmark next to ours (also part of make bench).
bench-karpenter: build
	@scripts/install-deps.sh bench
	@tests/bench/bench_karpenter.sh $(BUILD)

check-source:
	@scripts/check-source.sh

format:
	@clang-format -i $$(git ls-files '*.c' '*.h')

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) build-fuzz
