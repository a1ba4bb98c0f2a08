/// Builds a page in Prometheus' text exposition format (version 0.0.4).
struct PrometheusText {
    private(set) var text = ""

    /// Adds a metric family: its help, its type and its samples (labels and value).
    mutating func family(_ name: String, _ type: String, _ help: String, _ samples: [([(String, String)], Double)]) {
        text += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n"
        for (labels, value) in samples {
            let rendered = labels.isEmpty ? "" : "{" + labels.map { "\($0.0)=\"\(Self.escape($0.1))\"" }.joined(separator: ",") + "}"
            text += "\(name)\(rendered) \(Self.format(value))\n"
        }
    }

    /// A family with one unlabelled sample.
    mutating func single(_ name: String, _ type: String, _ help: String, _ value: Double) {
        family(name, type, help, [([], value)])
    }

    /// Label values escape backslash, double quote and line feed.
    static func escape(_ value: String) -> String {
        var escaped = ""
        for character in value {
            switch character {
            case "\\": escaped += "\\\\"
            case "\"": escaped += "\\\""
            case "\n": escaped += "\\n"
            default: escaped.append(character)
            }
        }
        return escaped
    }

    private static func format(_ value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return String(value)
    }
}
