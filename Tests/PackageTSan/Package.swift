// swift-tools-version:6.1
import PackageDescription

/// The tests that run threads inside the test process, and only what they need, for `scripts/test-package-tsan`:
/// built with `--sanitize=thread`, this package compiles the library modules (Runtime up to Cluster), the test
/// helpers and the test targets MessagingTests, HTTPEndpointsTests, FetchingTests, ImagingTests, RuntimeTests and
/// a ClusterTests made of its units, its support and its three in-process cluster classes. Left out, compared with
/// a TSan build of the whole package: ShiftworkCLI and swift-argument-parser, WireTests, OperationsTests (run
/// under TSan by `scripts/test-operations-tsan`), the benchmarks, and ClusterTests' process tests (which
/// `scripts/test-package-tsan` did not run under TSan either: docs/benchmarks.md, "ThreadSanitizer over the
/// package"), whose compilation was most of that build's time.
///
/// Its directories are symbolic links into the main package, laid out as there (`Sources/Cluster` →
/// `../../../Sources/Cluster`, `Tests/ImagingTests` → `../../ImagingTests`, `Tests/ClusterTests/Units` →
/// `../../../ClusterTests/Units`, `Benchmarks/ClusterSimulation`, and `Fuzz`, `samples` for the tests that find
/// the repository's files from `#filePath`), so there is one copy of every file, and a file added to a linked
/// directory is compiled here too. The main package ignores this directory. **Keep the targets below in step with ../../Package.swift** (the same dependencies, flags and
/// libraries): a module or a dependency added there that these targets use must be added here, or the
/// TSan step of `make test` fails to build (which it says).
let package = Package(
    name: "PackageTSan",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(url: "https://github.com/apple/swift-log", from: "1.16.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.1.0"),
    ],
    targets: [
        // MARK: System and generated C code (as in ../../Package.swift)
        .systemLibrary(name: "CZeroMQ", path: "Sources/CZeroMQ"),
        .target(name: "CLazyLibrary", path: "Sources/CLazyLibrary"),
        .target(name: "CCurl", dependencies: ["CLazyLibrary"], path: "Sources/CCurl"),
        .target(name: "CMicroHTTPD", dependencies: ["CLazyLibrary"], path: "Sources/CMicroHTTPD"),
        .target(
            name: "CShiftworkProto",
            path: "Sources/CShiftworkProto",
            linkerSettings: [.linkedLibrary("protobuf-c")]
        ),
        .target(
            name: "CImageCodecs",
            dependencies: ["CLazyLibrary"],
            path: "Sources/CImageCodecs",
            cSettings: [.unsafeFlags(["-O2"])],
            linkerSettings: [
                .linkedLibrary("jpeg"), .linkedLibrary("png"), .linkedLibrary("isal"), .linkedLibrary("lcms2"),
                .linkedLibrary("webp"), .linkedLibrary("webpmux"), .linkedLibrary("webpdemux"), .linkedLibrary("gif"),
                .linkedLibrary("m"),
            ]
        ),

        // MARK: Libraries (as in ../../Package.swift)
        .target(name: "Runtime", path: "Sources/Runtime"),
        .target(
            name: "Operations", dependencies: ["Runtime", .product(name: "DequeModule", package: "swift-collections")],
            path: "Sources/Operations"),
        .target(name: "Wire", dependencies: ["CShiftworkProto"], path: "Sources/Wire"),
        .target(name: "Messaging", dependencies: ["CZeroMQ", "Runtime"], path: "Sources/Messaging"),
        .target(name: "HTTPEndpoints", dependencies: ["CMicroHTTPD", "Runtime"], path: "Sources/HTTPEndpoints"),
        .target(
            name: "Imaging",
            dependencies: ["CImageCodecs", "Runtime", "Operations"],
            path: "Sources/Imaging",
            swiftSettings: [
                .unsafeFlags(["-Ounchecked"], .when(configuration: .release)),
                .unsafeFlags(["-O"], .when(configuration: .debug)),
            ]
        ),
        .target(
            name: "Fetching", dependencies: ["Imaging", "Runtime", "Operations", "CCurl"], path: "Sources/Fetching"),
        .target(
            name: "Cluster",
            dependencies: [
                "Runtime", "Operations", "Wire", "Messaging", "Imaging", "Fetching", "HTTPEndpoints",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "HeapModule", package: "swift-collections"),
            ],
            path: "Sources/Cluster"
        ),
        .target(name: "ClusterSimulation", dependencies: ["Wire", "Imaging"], path: "Benchmarks/ClusterSimulation"),

        // MARK: Test support (as in ../../Package.swift)
        .target(
            name: "ShiftworkTestSupport", dependencies: ["HTTPEndpoints", "CCurl", "Runtime"], path: "Tests/Support"),
        .target(
            name: "CTestSupport",
            path: "Tests/CTestSupport",
            linkerSettings: [
                .linkedLibrary("jpeg"), .linkedLibrary("lcms2"), .linkedLibrary("tiff"), .linkedLibrary("gif"),
                .linkedLibrary("heif"), .linkedLibrary("png"),
            ]
        ),

        // MARK: Tests
        .testTarget(
            name: "RuntimeTests", dependencies: ["Runtime", "ShiftworkTestSupport"], path: "Tests/RuntimeTests"),
        .testTarget(name: "MessagingTests", dependencies: ["Messaging", "Runtime"], path: "Tests/MessagingTests"),
        .testTarget(
            name: "HTTPEndpointsTests", dependencies: ["HTTPEndpoints", "Runtime"], path: "Tests/HTTPEndpointsTests"),
        .testTarget(
            name: "ImagingTests",
            dependencies: ["Imaging", "Runtime", "ShiftworkTestSupport", "CTestSupport"],
            path: "Tests/ImagingTests",
            resources: [.copy("Fixtures")],
            swiftSettings: [.unsafeFlags(["-O"], .when(configuration: .debug))]
        ),
        .testTarget(
            name: "FetchingTests", dependencies: ["Fetching", "Imaging", "ShiftworkTestSupport"],
            path: "Tests/FetchingTests"),
        // ClusterTests' units, support and in-process clusters: no `shiftwork` process, so no ShiftworkCLI. Also
        // linked: Processes/SimulatedPhotoWorkerTests.swift, whose static helpers some units call (its own tests
        // start processes: scripts/test-package-tsan skips them).
        .testTarget(
            name: "ClusterTests",
            dependencies: [
                "Cluster", "ClusterSimulation", "Imaging", "Messaging", "Runtime", "Wire", "ShiftworkTestSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ],
            path: "Tests/ClusterTests",
            resources: [
                .copy("Processes/Networks/Resources/dns-responder.py"),
                .copy("Processes/Networks/Resources/packet-delay.py"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
