import ArgumentParser
import Cluster
import Fetching

/// The `shiftwork` command: tilt-shift image batches on one machine or across a ZeroMQ cluster.
@main
struct Shiftwork: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "shiftwork",
        abstract: "Tilt-shift image batches, on this machine or across a cluster.",
        discussion: """
            Start with `shiftwork run IMAGE... --out DIR`: it needs no set-up. For a cluster, start \
            `shiftwork coordinator`, any number of `shiftwork worker`, then `shiftwork submit`; \
            `shiftwork keygen` creates the CurveZMQ keys that authenticate and encrypt their traffic.
            Options that configure a service or a batch can also be set through an environment variable \
            named SHIFTWORK_<OPTION> (for example SHIFTWORK_COORDINATOR); each option's help names its \
            variable.
            """,
        version: "0.1.0",
        subcommands: [
            RunCommand.self,
            CoordinatorCommand.self,
            WorkerCommand.self,
            SubmitCommand.self,
            StatusCommand.self,
            ResultsCommand.self,
            RetryCommand.self,
            CancelCommand.self,
            KeygenCommand.self,
            TiltShiftCommand.self,
        ]
    )

    /// Parses and runs the command, like `AsyncParsableCommand.main()`, except that the message of an error
    /// a command throws is escaped (`PrintableText`) before it reaches the terminal: such messages often
    /// quote what a coordinator or a worker said; and the credentials of any URL it quotes are masked
    /// (`SourceRedaction`).
    static func main() async {
        var command: any ParsableCommand
        do {
            command = try await asyncParseAsRoot()
        } catch {
            exit(withError: error)
        }
        do {
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            exit(withError: TerminalSafeError.wrapping(error))
        }
    }
}

/// A command's error, its description escaped for the terminal. ArgumentParser's own errors (exit codes,
/// validation and help requests) pass unchanged: they carry no network text and are formatted by it.
struct TerminalSafeError: Error, CustomStringConvertible {
    let description: String

    static func wrapping(_ error: any Error) -> any Error {
        // ArgumentParser's internal errors (a help request raised while running, for one) are matched by
        // their module: their types are not public.
        if error is ExitCode || error is CleanExit || error is ValidationError
            || String(reflecting: type(of: error)).hasPrefix("ArgumentParser.")
        {
            return error
        }
        // Credentials in a source URL the message quotes are masked (SourceRedaction) before it is escaped.
        return TerminalSafeError(
            description: PrintableText.escape(SourceRedaction.redactURLs(in: String(describing: error))))
    }
}
