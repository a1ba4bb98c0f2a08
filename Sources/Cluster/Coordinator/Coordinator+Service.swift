import ServiceLifecycle

extension Coordinator: Service {
    /// Serves until the surrounding `ServiceGroup` shuts down gracefully or the task is cancelled, then
    /// stops. Binds first unless `start()` has (call `start()` before, to report the bound endpoint or a
    /// bind error before the group runs).
    ///
    /// Its graceful shutdown is `stop()`, as on SIGTERM before: batches are left unfinished, and a
    /// coordinator restarted on the same data directory carries on with them.
    public func run() async throws {
        if channel == nil { try await start() }
        do {
            try await gracefulShutdown()
            logger.info("shutting down: leaving unfinished batches for the next start")
        } catch {
            logger.info("shutting down now (cancelled)")
        }
        await stop()
    }
}
