import FoundationEssentials
import Glibc
import PlaybackKit

/// The fixtures of a package checkout, for test targets: this package's and an adapter's own.
/// The checkout is found from a source file's path (`#filePath` of the caller), going up to the
/// first folder that holds a `Package.swift`; its `Fixtures` folder is made by `FixtureRecipe`
/// once per process.
public enum CheckoutFixtures {
    /// The fixtures folder made for each checkout in this process, or the error making it.
    private static let made = Locked<[String: Result<URL, PlaybackError>]>([:])

    /// The fixtures folder of the checkout holding `sourceFile`, made on the first call.
    public static func folder(containing sourceFile: String) throws -> URL {
        let checkout = try checkoutRoot(of: sourceFile)
        let result = made.withLock { made -> Result<URL, PlaybackError> in
            if let known = made[checkout.path] { return known }
            let result: Result<URL, PlaybackError>
            do {
                result = .success(try FixtureRecipe.make(checkout: checkout))
            } catch let error as PlaybackError {
                result = .failure(error)
            } catch {
                result = .failure(PlaybackError(code: .engine, message: "fixtures: \(error)"))
            }
            made[checkout.path] = result
            return result
        }
        return try result.get()
    }

    /// The fixture `name` of the checkout holding `sourceFile`; throws when the recipe did not
    /// make it.
    public static func file(_ name: String, containing sourceFile: String) throws -> URL {
        let url = try folder(containing: sourceFile).appendingPathComponent(name)
        guard access(url.path, F_OK) == 0 else {
            throw PlaybackError(code: .sourceNotFound, message: "missing fixture \(name) in \(url.deletingLastPathComponent().path)")
        }
        return url
    }

    /// The nearest folder above `sourceFile` that holds a `Package.swift`.
    static func checkoutRoot(of sourceFile: String) throws -> URL {
        var folder = URL(fileURLWithPath: sourceFile).deletingLastPathComponent()
        while folder.path != "/" {
            if access(folder.appendingPathComponent("Package.swift").path, F_OK) == 0 { return folder }
            folder = folder.deletingLastPathComponent()
        }
        throw PlaybackError(code: .sourceNotFound, message: "no Package.swift above \(sourceFile)")
    }
}
