import Foundation

/// Parses `shiftwork status --json`.
struct ClusterStatus {
    struct Worker {
        let id: String
        let completed: Int
    }
    struct Batch {
        let id: String
        let items: Int
        let succeeded: Int
        let failed: Int
        let cancelled: Int
    }
    let workers: [Worker]
    let batches: [Batch]

    init(json text: String) throws {
        guard let start = text.firstIndex(of: "{"),
            let object = try? JSONSerialization.jsonObject(with: Data(text[start...].utf8)) as? [String: Any]
        else { throw DeploymentTestError("`shiftwork status --json` printed no JSON object:\n\(text)") }
        workers = (object["workers"] as? [[String: Any]] ?? []).map {
            Worker(id: $0["id"] as? String ?? "", completed: ($0["completed"] as? NSNumber)?.intValue ?? -1)
        }
        batches = (object["batches"] as? [[String: Any]] ?? []).map {
            Batch(
                id: $0["id"] as? String ?? "", items: ($0["items"] as? NSNumber)?.intValue ?? -1,
                succeeded: ($0["succeeded"] as? NSNumber)?.intValue ?? -1,
                failed: ($0["failed"] as? NSNumber)?.intValue ?? -1,
                cancelled: ($0["cancelled"] as? NSNumber)?.intValue ?? -1)
        }
    }
}
