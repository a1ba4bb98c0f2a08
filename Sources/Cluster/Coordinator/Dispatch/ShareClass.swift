import Wire

/// What a batch's tasks share the cluster as: its client and its priority. Batches of one class take
/// turns among themselves; classes take turns with each other, each as often as its weight says.
struct ShareClass: Hashable, Sendable {
    let client: ClientIdentity
    /// `BatchPriority`, -10...10.
    let priority: Int32

    /// How often the class is served relative to others (`BatchPriority.weight(of:)`).
    var weight: UInt64 { BatchPriority.weight(of: priority) }
}
