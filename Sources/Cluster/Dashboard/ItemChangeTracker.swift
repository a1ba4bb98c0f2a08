import Wire

/// What one event stream of a batch's page has sent of the batch's items, so that each event carries only
/// the items that changed since the event before: all of them in the first event (and whenever the list
/// must be replaced), then only those whose fields differ. The page's script merges them by index.
///
/// It keeps a fingerprint per item (a hash of every field `StatusJSON` shows), not the items: 8 bytes an
/// item for each open stream.
struct ItemChangeTracker {
    /// The fingerprint of each item as last sent, by item index; `nil`: not sent yet.
    private var sent: [Int?] = []
    /// How many items `sent` holds.
    private var sentCount = 0
    private var started = false

    /// The items of `items` to send now, and whether they are the complete list (the first event, or items
    /// that went missing since: the page then replaces its list instead of merging).
    mutating func changes(in items: [ItemStatus]) -> (changed: [ItemStatus], complete: Bool) {
        let complete = !started || items.count < sentCount
        if complete { (sent, sentCount) = ([], 0) }
        started = true
        var changed: [ItemStatus] = []
        for item in items {
            let index = Int(item.itemIndex)
            if index >= sent.count { sent.append(contentsOf: repeatElement(nil, count: index - sent.count + 1)) }
            let fingerprint = Self.fingerprint(item)
            guard sent[index] != fingerprint else { continue }
            if sent[index] == nil { sentCount += 1 }
            sent[index] = fingerprint
            changed.append(item)
        }
        return (changed, complete)
    }

    /// A hash of every field of `item` (`ItemStatus` is `Hashable` by all its fields, attempts included,
    /// so a field added to it counts without a change here).
    static func fingerprint(_ item: ItemStatus) -> Int { item.hashValue }
}
