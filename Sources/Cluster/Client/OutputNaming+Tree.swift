import Foundation

extension OutputNaming {
    /// The output name of each input, in order, for `layout`: decided once, before the batch is submitted, so
    /// that the same inputs always get the same names whatever order their outputs finish in.
    ///
    /// - Parameters:
    ///   - inputs: the sources, in the order they are submitted (a directory's images in its sorted walk order).
    ///   - pathsInDirectories: for each input that came from a directory input, its path inside that
    ///     directory (`2024/01/IMG_0001.HEIC`); `nil` (or missing) for an input given by itself.
    public static func names(for inputs: [String], pathsInDirectories: [String?], layout: OutputLayout) -> [String] {
        switch layout {
        case .flat:
            var naming = OutputNaming()
            return inputs.map { naming.stem(for: $0) }
        case .tree:
            return treeNames(for: inputs, pathsInDirectories: pathsInDirectories)
        }
    }

    /// Relative output paths (`OutputPath`) that keep a library as it is: an input from a directory is named
    /// by its path inside that directory without the extension (`2024/01/IMG_0001`), an input given by itself
    /// by its last path component (`street` for `https://example.org/a/street.jpg`). Characters are kept
    /// (`my photo #1 (copy)`, `café`), except what no file system takes or what would leave the output
    /// directory: NUL and other control characters, a `/` inside a component (a URL's `%2F`), and a leading
    /// `.` (so no `..`, and nothing hidden) become `_`; a component is cut to fit ``OutputPath``'s bounds; a
    /// path too long or too deep for them keeps its last component only. Names that are the same (compared
    /// without case) get `-2`, `-3`, … on the file's name, in input order.
    static func treeNames(for inputs: [String], pathsInDirectories: [String?]) -> [String] {
        var taken = DistinctNames()
        var names: [String] = []
        names.reserveCapacity(inputs.count)
        for (index, source) in inputs.enumerated() {
            let inDirectory = index < pathsInDirectories.count ? pathsInDirectories[index] : nil
            var components: [String]
            if let inDirectory, !inDirectory.isEmpty {
                components = inDirectory.split(separator: "/").map(String.init)
            } else {
                components = [lastComponent(of: source, decodingLocalPaths: false)]
            }
            let file = safeComponent(withoutExtension(components.last ?? ""), fallback: "image")
            var folders = components.dropLast().map { safeComponent($0, fallback: "_") }
            // Room for a `-N` suffix within the bound of the whole name.
            if folders.count + 1 > OutputPath.maxDepth
                || (folders + [file]).joined(separator: "/").utf8.count > OutputPath.maxBytes - 16
            {
                folders = []
            }
            let prefix = folders.isEmpty ? "" : folders.joined(separator: "/") + "/"
            names.append(taken.claim(prefix + file))
        }
        return names
    }

    /// `component` as one safe path component: control characters (NUL among them) and `/` become `_`, a
    /// leading `.` becomes `_`, cut (at a character) to leave room for a `-N` suffix and an extension.
    static func safeComponent(_ component: String, fallback: String) -> String {
        var scalars = String.UnicodeScalarView()
        for scalar in component.unicodeScalars {
            let unsafe = scalar == "/" || scalar.properties.generalCategory == .control
            scalars.append(unsafe ? "_" : scalar)
        }
        var safe = String(scalars)
        if safe.hasPrefix(".") { safe = "_" + safe.dropFirst() }
        let limit = OutputPath.maxComponentBytes - 20
        while safe.utf8.count > limit { safe.removeLast() }
        return safe.isEmpty ? fallback : safe
    }
}
