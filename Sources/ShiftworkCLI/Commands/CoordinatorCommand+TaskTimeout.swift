import ArgumentParser
import Cluster

extension CoordinatorCommand {
    /// `--task-timeout` (or `SHIFTWORK_TASK_TIMEOUT`) in seconds, validated; the default when not given.
    static func resolveTaskTimeout(_ given: Int?) throws -> Int {
        let allowed = CoordinatorConfiguration.allowedTaskTimeoutSeconds
        let seconds = try Environment.resolve(
            given, "TASK_TIMEOUT", default: Int(CoordinatorConfiguration.defaultTaskTimeout.components.seconds))
        guard allowed.contains(seconds) else {
            throw ValidationError(
                "--task-timeout (or SHIFTWORK_TASK_TIMEOUT) must be between \(allowed.lowerBound) and "
                    + "\(allowed.upperBound) seconds (got \(seconds))")
        }
        return seconds
    }
}
