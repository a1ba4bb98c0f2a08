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
        let how: String
        do {
            try await gracefulShutdown()
            how = "gracefully"
        } catch {
            how = "at once (cancelled)"
        }
        logger.info(
            "coordinator stopping",
            metadata: [
                "shutdown": "\(how)",
                "unfinished_batches":
                    "\(configuration.dataDirectory == nil ? "lost (no data directory)" : "kept for the next start on the data directory")",
            ])
        await stop()
    }
}
