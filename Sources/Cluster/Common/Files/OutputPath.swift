/// The rule for an output's name as it crosses the network (`BatchItem.output_name`,
/// `TaskAssignment.sink_name`): a *relative path* whose last component is the file's stem (or, in a sink,
/// its name with extension), so that a photo library keeps its folders (`2024/01/IMG_0001`).
///
/// Whoever writes a file under such a name (the client into `--out`, a worker into its sink) checks it
/// here first: it never leaves the directory it is written into. Refused: an empty name or component
/// (`a//b`, a trailing `/`), an absolute path, `.` and `..` components, components starting with `.` (hidden
/// files; the writers' temporary files are hidden), NUL and other control characters, a component longer
/// than ``maxComponentBytes`` or a path longer than ``maxBytes``, more than ``maxDepth`` components.
/// Everything else a file system takes (spaces, `#`, `(`, non-ASCII letters) is kept as it is.
public enum OutputPath {
    /// The longest name, in UTF-8 bytes (`MessageBounds.maxNameBytes`, the wire's bound on the field).
    public static let maxBytes = MessageBounds.maxNameBytes
    /// The longest component, in UTF-8 bytes: room under the file systems' 255 for a `-N` suffix and an
    /// extension.
    public static let maxComponentBytes = 200
    /// The most components (folders and the file).
    public static let maxDepth = 32

    /// What is wrong with `name` as a relative output path, or `nil` when it is one.
    public static func problem(_ name: String) -> String? {
        if name.isEmpty { return "the output has no name" }
        if name.utf8.count > maxBytes { return "the output name is longer than \(maxBytes) bytes" }
        if name.hasPrefix("/") { return "the output name must be a relative path, not an absolute one" }
        if name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
            return "the output name holds NUL or other control characters"
        }
        let components = name.split(separator: "/", omittingEmptySubsequences: false)
        if components.count > maxDepth { return "the output name has more than \(maxDepth) folders" }
        for component in components {
            if component.isEmpty { return "the output name has an empty component ('//', or a '/' at its end)" }
            if component == "." || component == ".." { return "the output name may not hold '.' or '..' components" }
            if component.hasPrefix(".") { return "no component of the output name may start with '.'" }
            if component.utf8.count > maxComponentBytes {
                return "a component of the output name is longer than \(maxComponentBytes) bytes"
            }
        }
        return nil
    }

    /// `name` split into its folders and its last component; call it on a name ``problem(_:)`` accepted.
    public static func split(_ name: String) -> (folders: [String], last: String) {
        let components = name.split(separator: "/").map(String.init)
        return (Array(components.dropLast()), components.last ?? name)
    }
}
