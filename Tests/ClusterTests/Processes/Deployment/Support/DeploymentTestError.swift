/// A failure of the deployment tests' own set-up, with everything needed to understand it.
struct DeploymentTestError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
