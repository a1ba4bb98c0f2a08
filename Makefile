# Shiftwork: the two commands a newcomer needs are `make demo` and `make test`.
SWIFT ?= swift
OUT ?= out/demo

.PHONY: setup build release demo test test-containers test-unit test-tsan proto bench clean

## Installs the Debian packages the build needs (only those missing).
setup:
	@scripts/setup

build: setup
	$(SWIFT) build

release: setup
	$(SWIFT) build -c release --product shiftwork

## Sets up, builds and runs the embedded default over the sample photos; outputs land in $(OUT).
demo: release
	"$$($(SWIFT) build -c release --show-bin-path)/shiftwork" run samples --out $(OUT)
	@echo "tilt-shifted images are in $(OUT)/"

## Sets up, then runs every test (the Python client's against real processes, the engine's tests under
## ThreadSanitizer, and the decoders' fuzzer for FUZZ_SECONDS), overlapping the steps that do not compete:
## scripts/test-all says how, and prints each step's wall and CPU time.
FUZZ_SECONDS ?= 60
test: setup
	scripts/test-all $(FUZZ_SECONDS)

## The container tests, a step of their own (CI runs it after `make test`; needs root): builds the Dockerfile with
## podman against base images made locally, then runs Tests/Containers (the image, bad settings, compose.yaml with
## podman-compose, the Kubernetes pod templates). scripts/test-containers says how.
test-containers: setup
	scripts/test-containers

## Regenerates the generated protobuf code from proto/ (commit the result): Sources/CShiftworkProto
## (protobuf-c) and the Python client's clients/python/src/shiftwork_client/_proto (protoc).
proto: setup
	scripts/setup-python
	scripts/generate-proto
	scripts/generate-proto-python

clean:
	rm -rf .build .build-* out
