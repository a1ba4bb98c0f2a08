import Messaging

/// The advice given to an operator whose worker or client the coordinator refused (CurveZMQ).
enum ClusterSecurityHint {
    /// What to do after `failure`, for a `peer` ("worker" or "client") connecting to `endpoint`.
    static func refused(endpoint: String, failure: HandshakeFailure, peer: String) -> String {
        switch failure.reason {
        case .refused(400):
            "the coordinator at \(endpoint) refused this \(peer)'s public key: is it on the coordinator's allow-list? "
                + "Add the .pub file of this \(peer)'s --secret-key (SHIFTWORK_SECRET_KEY) to the coordinator's "
                + "--allow-keys directory or file, and restart the coordinator."
        case .refused(let status):
            "the coordinator at \(endpoint) could not check this \(peer)'s key (ZAP status \(status)); see the coordinator's log."
        case .protocolError, .unspecified:
            "the CurveZMQ handshake with the coordinator at \(endpoint) failed (\(failure)): does the coordinator run "
                + "with keys (--secret-key, --allow-keys), and is --coordinator-key (SHIFTWORK_COORDINATOR_KEY) its "
                + "public key? A coordinator started with --insecure accepts no keys."
        }
    }
}
