import Wire

/// Which items of a batch have finished and been announced, and, with a journal, what each output
/// looked like (its bytes are in the results directory), so that a client attaching later can be sent
/// every finished item again.
struct FinishedItems {
    private var finished: [Bool]
    private(set) var finishedCount = 0
    /// Media type and size of each finished output, by item index (kept only with a journal).
    private var outputs: [Int: TaskOutput] = [:]

    init(itemCount: Int) {
        finished = Array(repeating: false, count: itemCount)
    }

    var isComplete: Bool { finishedCount == finished.count }

    /// How many items the batch has now.
    var itemCount: Int { finished.count }

    /// Makes room for items a manifest added.
    mutating func grow(by count: Int) {
        finished += repeatElement(false, count: count)
    }

    /// Marks an item finished; `false` when it already was (or is out of range).
    @discardableResult
    mutating func markFinished(_ index: Int) -> Bool {
        guard finished.indices.contains(index), !finished[index] else { return false }
        finished[index] = true
        finishedCount += 1
        return true
    }

    func isFinished(_ index: Int) -> Bool {
        finished.indices.contains(index) && finished[index]
    }

    /// Keeps what an output looked like, without its bytes.
    mutating func noteOutput(_ output: TaskOutput, of index: Int) {
        outputs[index] = TaskOutput(data: [], mediaType: output.mediaType, width: output.width, height: output.height)
    }

    /// What the output of a finished item looked like, if it was noted.
    func output(of index: Int) -> TaskOutput? { outputs[index] }

    /// Finished items not yet in `sent`, in index order.
    func finishedIndexes(notIn sent: [Bool]) -> [Int] {
        finished.indices.filter { finished[$0] && !(sent.indices.contains($0) && sent[$0]) }
    }
}
