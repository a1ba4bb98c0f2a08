import Runtime

/// An object the loop's thread and the task awaiting a transfer's report both hold, so that ThreadSanitizer
/// sees the report handed over (`ThreadSanitizerAnnotations.handingOver` before the continuation resumes,
/// `tookOver` after the await): when the resume comes before the task has suspended, Swift's runtime lets the
/// task go on without telling TSan, which then reported the body the loop wrote as a race with its reader.
/// No effect outside TSan builds.
final class TransferHandOff: Sendable {}
