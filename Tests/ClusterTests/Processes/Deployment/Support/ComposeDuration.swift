/// Compose durations: `10s`, `1m30s`, `500ms`, `1h`.
enum ComposeDuration {
    static func parse(_ text: String) throws -> Duration {
        var total = Duration.zero
        var rest = Substring(text.trimmingCharacters(in: .whitespaces))
        guard !rest.isEmpty else { throw DeploymentTestError("empty duration") }
        while !rest.isEmpty {
            let digits = rest.prefix { $0.isNumber || $0 == "." }
            guard let value = Double(digits) else {
                throw DeploymentTestError("'\(text)' is not a duration like 10s or 1m30s")
            }
            rest = rest.dropFirst(digits.count)
            let unit = rest.prefix { $0.isLetter }
            rest = rest.dropFirst(unit.count)
            let seconds: Double
            switch unit {
            case "h": seconds = value * 3600
            case "m": seconds = value * 60
            case "s": seconds = value
            case "ms": seconds = value / 1000
            case "us": seconds = value / 1_000_000
            default: throw DeploymentTestError("'\(text)': unknown unit '\(unit)' (use h, m, s, ms or us)")
            }
            total += .milliseconds(Int64((seconds * 1000).rounded()))
        }
        return total
    }
}
