import ArgumentParser

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
            CancelCommand.self,
            KeygenCommand.self,
            TiltShiftCommand.self,
        ]
    )
}
