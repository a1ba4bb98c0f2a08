import Foundation

/// Reads `SHIFTWORK_*` environment variables, the fallback for every command-line option.
enum Environment {
    /// The value of `SHIFTWORK_<NAME>`, if set and not empty.
    /// (`getenv`: `ProcessInfo.environment` builds a dictionary of the whole environment on every call.)
    static func value(_ name: String) -> String? {
        guard let pointer = getenv("SHIFTWORK_\(name)"), pointer.pointee != 0 else { return nil }
        return String(cString: pointer)
    }

    /// The option's value, else `SHIFTWORK_<NAME>`, else `nil`.
    static func resolve(_ option: String?, _ name: String) -> String? {
        option ?? value(name)
    }

    /// Whether the flag is set, or `SHIFTWORK_<NAME>` is `1`, `true` or `yes`.
    static func flag(_ option: Bool, _ name: String) -> Bool {
        option || ["1", "true", "yes"].contains(value(name)?.lowercased() ?? "")
    }

    /// The option's value, else `SHIFTWORK_<NAME>`, else `fallback`.
    static func resolve(_ option: String?, _ name: String, default fallback: String) -> String {
        option ?? value(name) ?? fallback
    }

    /// The option's value, else `SHIFTWORK_<NAME>` parsed as an integer, else `fallback`.
    static func resolve(_ option: Int?, _ name: String, default fallback: Int) throws -> Int {
        if let option { return option }
        guard let text = value(name) else { return fallback }
        guard let number = Int(text) else {
            throw CommandError("SHIFTWORK_\(name)=\(text) is not a whole number")
        }
        return number
    }

    /// The option's value, else `SHIFTWORK_<NAME>` parsed as a number, else `fallback`.
    static func resolve(_ option: Double?, _ name: String, default fallback: Double) throws -> Double {
        if let option { return option }
        guard let text = value(name) else { return fallback }
        guard let number = Double(text), number.isFinite else {
            throw CommandError("SHIFTWORK_\(name)=\(text) is not a number")
        }
        return number
    }
}
