import Foundation

extension ComposeService {
    /// `deploy.replicas` (1 when not set): how many containers both Docker Compose and podman-compose start;
    /// 0 starts none (compose.single.yaml's coordinator-b).
    func replicaCount() throws -> Int {
        guard let deploy = definition["deploy"] as? [String: Any], let replicas = deploy["replicas"] else {
            return 1
        }
        guard let count = (replicas as? NSNumber)?.intValue, count >= 0 else {
            throw DeploymentTestError("\(name): deploy.replicas \(replicas) is not a count")
        }
        return count
    }
}
