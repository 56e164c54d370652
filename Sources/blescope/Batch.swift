import ArgumentParser
import BLECapture
import BLEReports

/// Options of the commands that take many captures (`info`, `timeline`, `report`).
struct BatchOptions: ParsableArguments {
    @Option(name: .customLong("jobs"), help: "Captures processed at once when several are given (default: the number of cores).")
    var jobs: Int?

    func validate() throws {
        if let jobs, jobs < 1 { throw ValidationError("--jobs: at least 1") }
    }

    var effectiveJobs: Int { max(1, jobs ?? BatchRunner.cores) }
}

/// One line on standard error per glob that matched nothing (`info`, `ota`, `timeline`, `report`).
func reportMissing(_ inputs: CaptureInputs) {
    for m in inputs.missing { writeStandardError("blescope: \(m): no such file (pattern matched nothing)\n") }
}
