import Wire

/// A batch submitted by a client: per item, a download task and a tilt-shift task that depends on it.
struct BatchRecord {
    /// The outcome of one input image.
    enum ItemState: String {
        case queued, running, succeeded, failed, cancelled

        var isFinished: Bool { self == .succeeded || self == .failed || self == .cancelled }
    }

    struct Item {
        let source: String
        let outputName: String
        let downloadTaskID: String
        let tiltShiftTaskID: String
        var state: ItemState = .queued
        var error: String = ""
    }

    let id: String
    /// The client that submitted it; item results are sent there as they finish.
    let client: PeerIdentity
    let parameters: WireTiltShiftParameters
    var items: [Item]
    var finishedCount = 0

    var isFinished: Bool { finishedCount == items.count }

    func count(_ state: ItemState) -> UInt32 {
        UInt32(items.lazy.filter { $0.state == state }.count)
    }
}
