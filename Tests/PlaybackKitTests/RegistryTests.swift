import Foundation
import Testing
@testable import PlaybackKit

/// A backend that makes no player: enough to test the registry's choice and its errors.
private struct NamedBackend: PlaybackBackend {
    let name: String
    var engineVersion: String { "test 1.0" }
    func makePlayer(url: URL, options: PlaybackOptions) throws -> any MediaPlayback {
        throw PlaybackError(code: .backendUnavailable, message: "chosen: \(name)")
    }
}

@Suite(.serialized) struct RegistryTests {
    @Test func registersOncePerNameAndFindsCaseInsensitively() throws {
        Backends.register(NamedBackend(name: "registry-alpha"))
        Backends.register(NamedBackend(name: "registry-beta"))
        Backends.register(NamedBackend(name: "registry-alpha"))
        #expect(Backends.all.filter { $0.name == "registry-alpha" }.count == 1)
        #expect(try Backends.resolve("REGISTRY-BETA").name == "registry-beta")
    }

    @Test func unknownNameListsTheKnownOnes() {
        Backends.register(NamedBackend(name: "registry-alpha"))
        do {
            _ = try Backends.makePlayer(backend: "nonesuch", url: URL(fileURLWithPath: "/x"), options: PlaybackOptions())
            Issue.record("an unknown backend must throw")
        } catch let error as PlaybackError {
            #expect(error.code == .backendUnavailable)
            #expect(error.message.contains("nonesuch"))
            #expect(error.message.contains("registry-alpha"))
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test func nilNameUsesTheEnvironmentThenTheFirst() throws {
        Backends.register(NamedBackend(name: "registry-alpha"))
        Backends.register(NamedBackend(name: "registry-beta"))
        setenv(Backends.environmentVariable, "registry-beta", 1)
        defer { unsetenv(Backends.environmentVariable) }
        #expect(try Backends.resolve(nil).name == "registry-beta")
        unsetenv(Backends.environmentVariable)
        #expect(try Backends.resolve(nil).name == Backends.all.first?.name)
    }
}
