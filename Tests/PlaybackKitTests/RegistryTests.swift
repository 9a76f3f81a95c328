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

    @Test func aListOfNamesMeansTheSameAsArgumentAndInTheEnvironment() async throws {
        let log = ScriptLog()
        Backends.register(ScriptedBackend(name: "registry-scripted", log: log))
        #expect(Backends.names(in: " nonesuch, registry-scripted ,,") == ["nonesuch", "registry-scripted"])
        #expect(Backends.requestedNames("nonesuch,registry-scripted") == ["nonesuch", "registry-scripted"])
        let clip = URL(fileURLWithPath: "/media/clip.mp4")
        let fromArgument = try Backends.makePlayer(backend: "nonesuch,registry-scripted", url: clip, options: PlaybackOptions())
        setenv(Backends.environmentVariable, "nonesuch,registry-scripted", 1)
        defer { unsetenv(Backends.environmentVariable) }
        #expect(Backends.requestedNames(nil) == ["nonesuch", "registry-scripted"])
        let fromEnvironment = try Backends.makePlayer(backend: nil, url: clip, options: PlaybackOptions())
        for player in [fromArgument, fromEnvironment] {
            try await player.prepare()
            #expect(player.backendName == "registry-scripted")
            player.shutdown()
        }
        #expect(throws: PlaybackError.self) { try Backends.makePlayer(backend: " , ", url: clip, options: PlaybackOptions()) }
    }
}
