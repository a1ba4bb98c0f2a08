// swift-tools-version:6.1
import PackageDescription

/// The runtime (locks, threads), the operations engine and their tests alone, for `scripts/test-operations-tsan`: built with
/// `--sanitize=thread`, this package compiles only `Runtime`, `Operations`, their tests and the one test helper
/// they use, instead of the whole Shiftwork graph (the cluster, the codecs, the HTTP server) under ThreadSanitizer.
///
/// Its directories are symbolic links into the main package (`Runtime` → `Sources/Runtime`, `Operations` → `Sources/Operations`, `RuntimeTests` → `Tests/RuntimeTests`,
/// `OperationsTests` → `Tests/OperationsTests`, `Support/SeededGenerator.swift` →
/// `Tests/Support/SeededGenerator.swift`), so there is one copy of every file. The main package ignores
/// this directory (it is not a target of its own).
let package = Package(
    name: "EngineTSan",
    platforms: [.macOS(.v15)],
    // The engine's queues are swift-collections' Deque, as in the main package.
    dependencies: [.package(url: "https://github.com/apple/swift-collections", from: "1.1.0")],
    targets: [
        .target(name: "Runtime", path: "Runtime"),
        .target(
            name: "Operations",
            dependencies: ["Runtime", .product(name: "DequeModule", package: "swift-collections")],
            path: "Operations"),
        // The test helper module OperationsTests imports, reduced to the file it uses (no HTTP server, no libcurl).
        .target(name: "ShiftworkTestSupport", path: "Support"),
        .testTarget(name: "RuntimeTests", dependencies: ["Runtime", "ShiftworkTestSupport"], path: "RuntimeTests"),
        .testTarget(
            name: "OperationsTests", dependencies: ["Runtime", "Operations", "ShiftworkTestSupport"],
            path: "OperationsTests"),
    ],
    swiftLanguageModes: [.v6]
)
