import Foundation

/// CPU time and memory of a process, read from `/proc/PID/stat` and `/proc/PID/status`.
struct ProcessFigures {
    /// User plus system CPU time, in seconds.
    let cpuSeconds: Double
    /// Resident set (VmRSS), in bytes.
    let residentBytes: Int
    /// The largest resident set so far (VmHWM), in bytes.
    let peakResidentBytes: Int

    /// Reads the figures of `pid` now.
    static func read(pid: Int32) throws -> ProcessFigures {
        let cpu = try cpuSeconds(stat: "/proc/\(pid)/stat")
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        func kibibytes(_ key: String) throws -> Int {
            for line in status.split(separator: "\n") where line.hasPrefix(key + ":") {
                let parts = line.split(separator: " ", omittingEmptySubsequences: true)
                if parts.count >= 2, let value = Int(parts[1]) { return value * 1024 }
            }
            throw SimulationError("no \(key) in /proc/\(pid)/status")
        }
        return ProcessFigures(
            cpuSeconds: cpu, residentBytes: try kibibytes("VmRSS"),
            peakResidentBytes: try kibibytes("VmHWM"))
    }

    /// User plus system CPU time of this process's thread `tid`, in seconds (`/proc/self/task/TID/stat`).
    static func threadCPUSeconds(tid: Int32) throws -> Double {
        try cpuSeconds(stat: "/proc/self/task/\(tid)/stat")
    }

    /// The user plus system CPU time in a `stat` file of /proc, in seconds.
    private static func cpuSeconds(stat path: String) throws -> Double {
        let stat = try String(contentsOfFile: path, encoding: .utf8)
        // The command name (field 2) is in parentheses and may hold spaces: fields count from after it.
        guard let close = stat.lastIndex(of: ")") else { throw SimulationError("no command name in \(path)") }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        // After the name: state is field 3, so utime (14) and stime (15) are at offsets 11 and 12.
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else {
            throw SimulationError("unexpected \(path): \(stat.prefix(200))")
        }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// This process's own user plus system CPU time, in seconds.
    static func ownCPUSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }
}

/// Why the simulation stopped.
struct SimulationError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
