# Shiftwork: the two commands a newcomer needs are `make demo` and `make test`.
SWIFT ?= swift
OUT ?= out/demo

.PHONY: setup build release demo test test-long test-containers test-unit test-tsan proto format clean

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
## ThreadSanitizer, and the decoders' fuzzer for FUZZ_SECONDS a target), overlapping the steps that do not
## compete: scripts/test-all says how, and prints each step's wall and CPU time.
FUZZ_SECONDS ?= 15
test: setup
	scripts/test-all $(FUZZ_SECONDS)

## The long versions of `make test`'s repeated checks (CI runs it after `make test-containers`): the tests
## that repeat a scenario (TestRounds) with all their rounds, and the fuzzer for FUZZ_LONG_SECONDS a target.
## Ends with `N passed, N failed, N skipped`; scripts/test-long says more.
FUZZ_LONG_SECONDS ?= 60
test-long: setup
	scripts/test-long $(FUZZ_LONG_SECONDS)

## Builds and runs the Swift tests that start no `shiftwork` process: every test target but ClusterTests'
## process tests (Tests/ClusterTests/Processes, TiltShiftCommandTests), each in a process of its own as
## `make test` runs them (`--parallel`: the failed tests' output and the exit status tell the outcome).
## Minutes where `make test` takes several; `scripts/test-units` says more.
test-unit: setup
	scripts/test-units --all --parallel

## Builds and runs the tests that run under ThreadSanitizer (as `make test` does beside the others): the
## engine's (scripts/test-operations-tsan, its own small package) and the package's threaded tests
## (scripts/test-package-tsan: a TSan build, in .build-tsan, of Tests/PackageTSan, the modules and the test
## targets it runs). Fails on any TSan report.
test-tsan: setup
	scripts/test-operations-tsan
	scripts/test-package-tsan

## The container tests, a step of their own (CI runs it after `make test`; needs root): builds the Dockerfile with
## podman against base images made locally, then runs Tests/Containers (the image, bad settings, compose.yaml with
## podman-compose, the Kubernetes pod templates). scripts/test-containers says how.
test-containers: setup
	scripts/test-containers

## Regenerates the generated protobuf code from proto/ (commit the result): Sources/CShiftworkProto
## (protobuf-c), the Python client's clients/python/src/shiftwork_client/_proto (protoc), and the golden
## wire bytes Tests/WireGolden/*/*.bin (protoc --encode of the .txtpb beside each).
proto: setup
	scripts/setup-python
	scripts/generate-proto
	scripts/generate-wire-swift
	scripts/generate-proto-python
	scripts/generate-wire-golden

## Formats every Swift file with the toolchain's `swift format` and .swift-format (swift-nio's rules, lines of
## 120); `make test` checks it (scripts/format --check), so run this before committing.
format:
	scripts/format

## There is no `make bench`: each benchmark is a script of its own (scripts/bench-*, release builds, minutes to
## an hour each); docs/benchmarks.md gives, for every figure of record, the command that reproduces it.

clean:
	rm -rf .build .build-* out
