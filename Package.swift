// swift-tools-version:6.1
import PackageDescription

/// Shiftwork: an operations engine and a ZeroMQ cluster that runs it.
///
/// Layers (dependencies point down):
///   ShiftworkCLI → Cluster → Imaging, Messaging, Wire → Operations, CZeroMQ, CShiftworkProto, CImageCodecs
let package = Package(
    name: "Shiftwork",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "shiftwork", targets: ["ShiftworkCLI"]),
        .library(name: "Operations", targets: ["Operations"]),
        .library(name: "Imaging", targets: ["Imaging"]),
        .library(name: "Cluster", targets: ["Cluster"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.81.0"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.24.0"),
    ],
    targets: [
        // MARK: System and generated C code
        .systemLibrary(name: "CZeroMQ", path: "Sources/CZeroMQ"),
        .target(
            name: "CShiftworkProto",
            path: "Sources/CShiftworkProto",
            linkerSettings: [.linkedLibrary("protobuf-c")]
        ),
        .target(
            name: "CImageCodecs",
            path: "Sources/CImageCodecs",
            cSettings: [.unsafeFlags(["-O2"])],
            linkerSettings: [.linkedLibrary("jpeg"), .linkedLibrary("png"), .linkedLibrary("isal"), .linkedLibrary("lcms2"), .linkedLibrary("m")]
        ),

        // MARK: Libraries
        .target(name: "Operations"),
        .target(name: "Wire", dependencies: ["CShiftworkProto"]),
        .target(name: "Messaging", dependencies: ["CZeroMQ"]),
        .target(
            name: "Imaging",
            dependencies: [
                "CImageCodecs",
                "Operations",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            // The pixel kernels are optimised in debug builds too: unoptimised SIMD code filters at 0.2 MP/s
            // (a 36-megapixel image takes three minutes), which makes debug builds and their tests useless
            // for images of real size.
            swiftSettings: [
                .unsafeFlags(["-Ounchecked"], .when(configuration: .release)),
                .unsafeFlags(["-O"], .when(configuration: .debug)),
            ]
        ),
        .target(
            name: "Cluster",
            dependencies: [
                "Operations", "Wire", "Messaging", "Imaging",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),

        // MARK: The command-line tool
        .executableTarget(
            name: "ShiftworkCLI",
            dependencies: [
                "Cluster", "Imaging", "Operations",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),

        // MARK: Benchmarks (run by scripts/bench-*; never by tests)
        .executableTarget(
            name: "OperationsBenchmark",
            dependencies: ["Operations"],
            path: "Benchmarks/OperationsBenchmark"
        ),

        .executableTarget(
            name: "ClusterBenchmark",
            dependencies: ["Cluster", "Messaging", "Wire"],
            path: "Benchmarks/ClusterBenchmark"
        ),

        // MARK: Test support (a real HTTP server on 127.0.0.1, process helpers); used only by tests
        .target(
            name: "ShiftworkTestSupport",
            dependencies: [
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            path: "Tests/Support"
        ),

        // MARK: Tests
        .testTarget(name: "OperationsTests", dependencies: ["Operations", "ShiftworkTestSupport"]),
        .testTarget(name: "WireTests", dependencies: ["Wire", "ShiftworkTestSupport"]),
        .testTarget(name: "MessagingTests", dependencies: ["Messaging"]),
        .testTarget(
            name: "ImagingTests",
            dependencies: [
                "Imaging", "ShiftworkTestSupport",
            ],
            resources: [.copy("Fixtures")]
        ),
        .testTarget(
            name: "ClusterTests",
            dependencies: [
                "Cluster", "Imaging", "Messaging", "Wire", "ShiftworkCLI", "ShiftworkTestSupport",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
