import FoundationEssentials
import PlaybackConformance

/// This checkout's fixtures, made once per process (`CheckoutFixtures`).
enum TestFixtures {
    static func ensure() throws -> URL { try CheckoutFixtures.folder(containing: #filePath) }
    static func file(_ name: String) throws -> URL { try CheckoutFixtures.file(name, containing: #filePath) }
}
