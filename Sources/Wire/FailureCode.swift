// FailureCode is generated from proto/ (Generated/Enums.generated.swift); what it means beyond its values is here.

extension FailureCode {
    /// The code's name as logs, `status` and JSON show it: `download`, `limit`, `timed-out`…
    public var name: String {
        switch self {
        case .unspecified: "unspecified"
        case .download: "download"
        case .decode: "decode"
        case .processing: "processing"
        case .cancelled: "cancelled"
        case .dependency: "dependency"
        case .limit: "limit"
        case .internal: "internal"
        case .inputMissing: "input-missing"
        case .timedOut: "timed-out"
        case .sink: "sink"
        case .workerLost: "worker-lost"
        case .upload: "upload"
        }
    }
}
