import FoundationEssentials
import PlaybackBackends
import PlaybackConformance
import CommandLineSupport
import PlaybackKit

/// `mediaplay conformance`: runs the conformance suite against one backend (`backendName`, or
/// each of a list of them separated by commas) or every registered one (nil), prints the matrix (or JSON with `json`) to stdout and progress
/// lines to stderr. Returns 0 when every check passed or failed only as a known failure of a
/// built-in backend (`PlaybackBackends.knownConformanceFailures`), 1 when any other failed,
/// 2 on a usage error.
func runConformanceCommand(backendName: String?, json: Bool, fixtures: URL, only: Set<String>?) async -> Int32 {
    func complain(_ message: String) {
        StandardStreams.writeError("mediaplay: error: \(message)\n")
    }
    var backends: [any PlaybackBackend] = []
    if let backendName {
        // One name, or a list ("vlc,ffmpeg"): each is run.
        for name in Backends.names(in: backendName) {
            guard let backend = Backends.backend(named: name) else {
                let known = Backends.all.map(\.name).joined(separator: ", ")
                complain("unknown backend '\(name)'; known backends: \(known.isEmpty ? "none" : known)")
                return 2
            }
            backends.append(backend)
        }
    } else {
        backends = Backends.all
    }
    guard !backends.isEmpty else {
        complain("no backend is compiled in (build with a trait: GStreamer, FFmpeg, MPV or VLC)")
        return 2
    }
    if let only {
        let unknown = ConformanceSuite.unknownNames(in: only)
        guard unknown.isEmpty else {
            complain("unknown check(s) \(unknown.joined(separator: ", ")); known: \(ConformanceSuite.checkNames.joined(separator: ", "))")
            return 2
        }
    }
    var reports: [ConformanceReport] = []
    for backend in backends {
        let name = backend.name
        let suite = ConformanceSuite(backend: backend, fixtures: fixtures)
        let report = await suite.run(only: only) { progress in
            guard case .finished(let result) = progress else { return }
            var line = "[\(name)] \(result.name): \(result.outcome.status) (\(String(cFormat: "%.1f", result.seconds)) s)"
            if let reason = result.outcome.reason { line += " — \(reason)" }
            StandardStreams.writeError(line + "\n")
        }
        StandardStreams.writeError(report.summaryLine + "\n")
        reports.append(report)
    }
    let matrix = ConformanceMatrix(reports: reports)
    if json {
        do {
            StandardStreams.writeOutput(Array(try matrix.jsonData()))
            StandardStreams.writeOutput("\n")
        } catch {
            complain("could not encode the report: \(error)")
            return 1
        }
    } else {
        StandardStreams.writeOutput(matrix.renderText())
    }
    // Failures the package lists as known (open defects, see README) are reported, and only
    // the others fail the run; a known failure that passed is pointed out.
    var unexpected = 0
    for report in reports {
        for result in report.results {
            let known = PlaybackBackends.knownFailure(backend: report.backend, check: result.name)
            if result.outcome.status == "fail" {
                if let known {
                    StandardStreams.writeError("conformance: \(report.backend) \(result.name): known failure (\(known))\n")
                } else {
                    unexpected += 1
                }
            } else if known != nil, result.outcome.status == "pass" {
                StandardStreams.writeError("conformance: \(report.backend) \(result.name) passed although listed as a known failure\n")
            }
        }
    }
    return unexpected == 0 ? 0 : 1
}
