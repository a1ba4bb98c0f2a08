import Foundation
import Logging
import Wire

/// A worker's side of liveness: its hello, its heartbeats, and the warning when nothing answers.
extension Worker {
    /// The heartbeat interval a coordinator asked for, within 100 ms … 60 s: a coordinator (or a peer
    /// posing as one) cannot make this worker flood the network (1 ms would be ~1,000 heartbeats a
    /// second), nor fall silent for so long that it looks dead.
    static func heartbeatInterval(askedMs: UInt32) -> Duration {
        .milliseconds(Int(min(max(askedMs, heartbeatIntervalRangeMs.lowerBound), heartbeatIntervalRangeMs.upperBound)))
    }

    /// The heartbeat intervals a worker accepts, in milliseconds.
    static let heartbeatIntervalRangeMs: ClosedRange<UInt32> = 100...60_000

    func sayHello() {
        helloSentAt = .now
        send(
            .workerHello(
                WorkerHello(
                    workerID: configuration.workerID, slots: UInt32(configuration.slots),
                    version: ShiftworkVersion.current, hostname: ProcessInfo.processInfo.hostName, acceptsBatches: true,
                    acceptsChainedTasks: configuration.acceptsChainedTasks,
                    giveBackThreads: configuration.giveBackThreads)))
    }

    /// Sends a heartbeat every interval (the coordinator's welcome may change it) until cancelled or stopping.
    func heartbeat() async {
        while !Task.isCancelled {
            try? await Task.sleep(for: heartbeatInterval)
            guard !Task.isCancelled, !isStopping else { return }
            logger.logSuppressed(logThrottle.expired(now: .now), window: logThrottle.window)
            send(
                .heartbeat(
                    Heartbeat(
                        workerID: configuration.workerID, running: UInt32(running.count),
                        droppedMessages: droppedMessages, lastSequence: lastSequence,
                        holding: running.values.flatMap { task in
                            // A download whose result is held back is still this worker's.
                            task.heldBack == nil
                                ? [task.assignment.taskKey] : [task.chainedAfter, task.assignment.taskKey]
                        })))
        }
    }

    /// Waits for the first `Welcome` as long as `welcomeWarningDelay`, then warns if none came.
    func warnUnlessWelcomed(usingKeys: Bool) async {
        try? await Task.sleep(for: welcomeWarningDelay)
        guard !Task.isCancelled else { return }
        warnIfUnregistered(usingKeys: usingKeys)
    }

    /// Says so when no coordinator has answered yet: with keys, a wrong coordinator key looks the same.
    private func warnIfUnregistered(usingKeys: Bool) {
        guard !isRegistered, !isStopping else { return }
        let advice =
            usingKeys
            ? "With CurveZMQ: does it run with keys, is this worker's public key on its allow-list, and is --coordinator-key its public key?"
            : "If it runs with keys (CurveZMQ), give this worker --secret-key and --coordinator-key."
        logger.warning(
            "no answer from a coordinator yet: is one running at this endpoint? \(advice)",
            metadata: [
                "coordinator": "\(PrintableText.escape(currentCoordinator))", "waited": "\(welcomeWarningDelay)",
            ])
    }
}
