import ServiceLifecycle

extension Coordinator: Service {
    /// Serves until the surrounding `ServiceGroup` shuts down gracefully or the task is cancelled, then
    /// stops. Binds first unless `start()` has (call `start()` before, to report the bound endpoint or a
    /// bind error before the group runs).
    ///
    /// Its graceful shutdown is `stop()`, as on SIGTERM before: batches are left unfinished, and a
    /// coordinator restarted on the same data directory carries on with them.
    public func run() async throws {
        if !isServing { try await start() }
        // The pair's link (with --ha) is read by a child task of this scope; `stop()` closes it, which ends it.
        await withDiscardingTaskGroup { group in
            group.addTask { await self.readPairLink() }
            let how: String
            do {
                try await gracefulShutdown()
                how = "gracefully"
            } catch {
                how = "at once (cancelled)"
            }
            logStopping(how)
            await stop()
        }
    }

    private func logStopping(_ how: String) {
        logger.info(
            "coordinator stopping",
            metadata: [
                "shutdown": "\(how)",
                "unfinished_batches":
                    "\(configuration.dataDirectory == nil ? "lost (no data directory)" : "kept for the next start on the data directory")",
            ])
    }
}
