/// Names handed out once each, compared without case (for the file systems that ignore it): a name
/// already taken comes back with `-2`, `-3`, … added, the first of those still free.
struct DistinctNames: Sendable {
    private var used: Set<String> = []

    /// `base`, or `base-N` with the smallest N ≥ 2 not taken yet; taken from now on.
    mutating func claim(_ base: String) -> String {
        var candidate = base
        var counter = 2
        while used.contains(candidate.lowercased()) {
            candidate = "\(base)-\(counter)"
            counter += 1
        }
        used.insert(candidate.lowercased())
        return candidate
    }
}
