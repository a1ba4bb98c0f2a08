// swift-tools-version:6.1
import PackageDescription

/// The operations engine and its tests alone, for `scripts/test-operations-tsan`: built with
/// `--sanitize=thread`, this package compiles only `Operations`, `OperationsTests` and the one test helper
/// they use, instead of the whole Shiftwork graph (the cluster, the codecs, the HTTP server) under ThreadSanitizer.
///
/// Its directories are symbolic links into the main package (`Operations` → `Sources/Operations`,
/// `OperationsTests` → `Tests/OperationsTests`, `Support/SeededGenerator.swift` →
/// `Tests/Support/SeededGenerator.swift`), so there is one copy of every file. The main package ignores
/// this directory (it is not a target of its own).
let package = Package(
    name: "EngineTSan",
    platforms: [.macOS(.v15)],
    targets: [
        .target(name: "Operations", path: "Operations"),
        // The test helper module OperationsTests imports, reduced to the file it uses (no HTTP server, no libcurl).
        .target(name: "ShiftworkTestSupport", path: "Support"),
        .testTarget(name: "OperationsTests", dependencies: ["Operations", "ShiftworkTestSupport"], path: "OperationsTests"),
    ],
    swiftLanguageModes: [.v6]
)
