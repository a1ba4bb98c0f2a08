/// An error a command reports to the user as one line, then exits with status 1.
struct CommandError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
