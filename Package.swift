// swift-tools-version:6.1
import PackageDescription

/// Shiftwork: an operations engine and a ZeroMQ cluster that runs it.
///
/// Layers (dependencies point down):
///   ShiftworkCLI → Cluster → Fetching → Imaging; Cluster → Messaging, Wire;
///   all → Runtime (locks, threads, ThreadSanitizer annotations) and the C targets (CZeroMQ, CShiftworkProto,
///   CImageCodecs, CCurl); Operations (the engine) → Runtime; Imaging, Fetching, Cluster → Operations;
///   Cluster → HTTPEndpoints → CMicroHTTPD (the HTTP endpoints, on Debian's libmicrohttpd)
/// libcurl, libavif, libheif, libtiff and libmicrohttpd are not linked: CLazyLibrary opens each on its first use (dlopen), so that
/// a command that needs none of them does not pay for loading them (docs/architecture.md, "Shared libraries").
/// Cluster runs its services under swift-service-lifecycle and reports through swift-metrics into a
/// swift-prometheus registry.
let package = Package(
    name: "Shiftwork",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "shiftwork", targets: ["ShiftworkCLI"]),
        .library(name: "Runtime", targets: ["Runtime"]),
        .library(name: "Operations", targets: ["Operations"]),
        .library(name: "Imaging", targets: ["Imaging"]),
        .library(name: "Fetching", targets: ["Fetching"]),
        .library(name: "Cluster", targets: ["Cluster"]),
        // The wire and journal codecs, for the fuzz targets in Fuzz/ (a package of their own).
        .library(name: "Wire", targets: ["Wire"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        // Deque and Heap for the engine's and the dispatcher's queues (already in the graph through
        // swift-async-algorithms; measured against the hand-written ones: docs/benchmarks.md).
        .package(url: "https://github.com/apple/swift-collections", from: "1.1.0"),
    ],
    targets: [
        // MARK: System and generated C code
        .systemLibrary(name: "CZeroMQ", path: "Sources/CZeroMQ"),
        // Libraries that one feature needs, opened on its first use instead of at every process start (dlopen).
        .target(name: "CLazyLibrary", path: "Sources/CLazyLibrary"),
        // libcurl and libcrypto (Debian's libcurl4-openssl-dev headers), loaded on first use, with typed wrappers
        // (also for the variadic calls). Not linked: see Sources/CCurl/include/CCurl.h.
        .target(name: "CCurl", dependencies: ["CLazyLibrary"], path: "Sources/CCurl"),
        // GNU libmicrohttpd (Debian's libmicrohttpd-dev headers), loaded on first use, with typed wrappers (also for
        // its variadic start). Not linked: see Sources/CMicroHTTPD/include/CMicroHTTPD.h.
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
            // libavif, libheif and libtiff are not linked: opened on the first AVIF decode or encode (avif_library.c),
            // HEIF decode (heif_library.c) and TIFF decode or encode (tiff_library.c).
        ),

        // MARK: Libraries
        // Locks, threads of our own and ThreadSanitizer annotations: what every layer runs on (no engine, no I/O).
        .target(name: "Runtime"),
        // The operations engine: operations, queues, dependencies, injection, groups, conditions.
        .target(
            name: "Operations", dependencies: ["Runtime", .product(name: "DequeModule", package: "swift-collections")]),
        .target(name: "Wire", dependencies: ["CShiftworkProto"]),
        .target(name: "Messaging", dependencies: ["CZeroMQ", "Runtime"]),
        // The HTTP server of the metrics, dashboard and health endpoints (and of the tests' origin server).
        .target(name: "HTTPEndpoints", dependencies: ["CMicroHTTPD", "Runtime"]),
        .target(
            name: "Imaging",
            dependencies: ["CImageCodecs", "Runtime", "Operations"],
            // The pixel kernels are optimised in debug builds too: unoptimised SIMD code filters at 0.2 MP/s
            // (a 36-megapixel image takes three minutes), which makes debug builds and their tests useless
            // for images of real size.
            swiftSettings: [
                .unsafeFlags(["-Ounchecked"], .when(configuration: .release)),
                .unsafeFlags(["-O"], .when(configuration: .debug)),
            ]
        ),
        .target(
            name: "Fetching",
            dependencies: ["Imaging", "Runtime", "Operations", "CCurl"]
        ),
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
            ]
        ),

        // MARK: The command-line tool
        .executableTarget(
            name: "ShiftworkCLI",
            dependencies: [
                "Cluster", "Imaging", "Fetching", "Runtime", "Messaging", "Wire", "HTTPEndpoints",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ]
        ),

        // MARK: Benchmarks (run by scripts/bench-*; never by tests)
        .executableTarget(
            name: "OperationsBenchmark",
            dependencies: ["Runtime", "Operations"],
            path: "Benchmarks/OperationsBenchmark"
        ),

        .executableTarget(
            name: "QueueBenchmark",
            dependencies: [
                "Operations",
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "HeapModule", package: "swift-collections"),
            ],
            path: "Benchmarks/QueueBenchmark"
        ),

        .executableTarget(
            name: "ClusterBenchmark",
            dependencies: ["Cluster", "ClusterSimulation", "Imaging", "Messaging", "Wire", "CEpoll"],
            path: "Benchmarks/ClusterBenchmark"
        ),
        // What the simulated workers answer to photo tasks (as a real worker would), held to a real worker's
        // messages by ClusterTests.
        .target(name: "ClusterSimulation", dependencies: ["Wire", "Imaging"], path: "Benchmarks/ClusterSimulation"),
        // Linux calls for the simulated workers that Swift's Glibc module leaves out (epoll, the thread ID).
        .systemLibrary(name: "CEpoll", path: "Benchmarks/CEpoll"),

        // MARK: Test support (a real HTTP server on 127.0.0.1, process helpers); used only by tests
        .target(
            name: "ShiftworkTestSupport",
            dependencies: ["HTTPEndpoints", "CCurl", "Runtime"],
            path: "Tests/Support"
        ),

        // Test-only C helpers (a CMYK profile made with LittleCMS, CMYK JPEGs written with libjpeg-turbo; TIFF, GIF and
        // HEIC inputs written with libtiff, giflib and libheif, linked here: only the tests' binary loads them so).
        .target(
            name: "CTestSupport",
            path: "Tests/CTestSupport",
            linkerSettings: [
                .linkedLibrary("jpeg"), .linkedLibrary("lcms2"), .linkedLibrary("tiff"), .linkedLibrary("gif"),
                .linkedLibrary("heif"), .linkedLibrary("png"),
            ]
        ),

        // MARK: Tests
        .testTarget(name: "RuntimeTests", dependencies: ["Runtime", "ShiftworkTestSupport"]),
        .testTarget(name: "OperationsTests", dependencies: ["Runtime", "Operations", "ShiftworkTestSupport"]),
        .testTarget(name: "WireTests", dependencies: ["Wire", "ShiftworkTestSupport"]),
        .testTarget(name: "MessagingTests", dependencies: ["Messaging", "Runtime"]),
        .testTarget(name: "HTTPEndpointsTests", dependencies: ["HTTPEndpoints", "Runtime"]),
        .testTarget(
            name: "ImagingTests",
            dependencies: [
                "Imaging", "Runtime", "ShiftworkTestSupport", "CTestSupport",
            ],
            resources: [.copy("Fixtures")],
            // Optimised in debug builds too, like Imaging: the tests hold the kernels to exact reference
            // filters written plainly in Swift (TestImages.exactTiltShift), which unoptimised take minutes
            // (docs/benchmarks.md, "make test": ImagingTests' CPU time with and without).
            swiftSettings: [.unsafeFlags(["-O"], .when(configuration: .debug))]
        ),
        .testTarget(name: "FetchingTests", dependencies: ["Fetching", "Imaging", "ShiftworkTestSupport"]),
        .testTarget(
            name: "ClusterTests",
            dependencies: [
                "Cluster", "ClusterSimulation", "Imaging", "Messaging", "Runtime", "Wire", "ShiftworkCLI",
                "ShiftworkTestSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ],
            resources: [
                .copy("Processes/Deployment/Resources/compose-to-json.py"),
                .copy("Processes/Deployment/Resources/yaml-documents-to-json.py"),
                .copy("Processes/Dashboard/Resources/headless-browser.py"),
                .copy("Processes/Networks/Resources/dns-responder.py"),
                .copy("Processes/Networks/Resources/packet-delay.py"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
