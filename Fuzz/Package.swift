// swift-tools-version:6.1
import PackageDescription

/// libFuzzer targets for what Shiftwork reads from the network and from disk. Built apart from the main
/// package, with `-sanitize=fuzzer`, by `scripts/fuzz` (which `make test` runs for a minute).
let package = Package(
    name: "ShiftworkFuzz",
    dependencies: [.package(name: "Shiftwork", path: "..")],
    targets: [
        .executableTarget(
            name: "WireFuzzer",
            dependencies: [.product(name: "Wire", package: "Shiftwork")]
        ),
        // The image decoders (every format read, recognised by its signature), seeds in corpus/images.
        .executableTarget(
            name: "ImageFuzzer",
            dependencies: [.product(name: "Imaging", package: "Shiftwork")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
