import FoundationEssentials
import Glibc
import PlaybackKit

/// A certificate authority of its own, and server certificates it signs, for the local https
/// server: made with the openssl command-line tool (EC P-256, valid for two days) in a
/// temporary folder. Give `authority` as `PlaybackOptions.tlsCertificateAuthorities` to trust
/// it; a certificate of another `TestCertificates` is one no player should trust.
public struct TestCertificates: Sendable {
    /// The folder holding every file; `remove()` deletes it.
    public let folder: URL
    /// The authority's certificate (PEM).
    public var authority: URL { folder.appendingPathComponent("authority.pem") }
    private var authorityKey: URL { folder.appendingPathComponent("authority.key") }

    /// Makes a new authority in a fresh temporary folder.
    public static func make() throws -> TestCertificates {
        var template = Array("/tmp/playbackkit-tls-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else {
            throw ServerError("TLS: cannot make a temporary folder: \(String(cString: strerror(errno)))")
        }
        let certificates = TestCertificates(folder: URL(fileURLWithPath: String(cString: made)))
        try certificates.openssl(["req", "-x509", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                                  "-nodes", "-keyout", certificates.authorityKey.path, "-out", certificates.authority.path,
                                  "-days", "2", "-subj", "/CN=PlaybackKit test authority",
                                  "-addext", "basicConstraints=critical,CA:TRUE",
                                  "-addext", "keyUsage=critical,keyCertSign,cRLSign"])
        return certificates
    }

    /// A server identity whose certificate names `hosts` (IP addresses or DNS names), signed
    /// by this authority; `name` names its files.
    public func identity(named name: String, hosts: [String] = ["127.0.0.1", "localhost"]) throws -> TLSServerIdentity {
        let key = folder.appendingPathComponent("\(name).key")
        let request = folder.appendingPathComponent("\(name).csr")
        let certificate = folder.appendingPathComponent("\(name).pem")
        let extensions = folder.appendingPathComponent("\(name).ext")
        let names = hosts.map { host in host.allSatisfy { $0.isNumber || $0 == "." } ? "IP:\(host)" : "DNS:\(host)" }
        let text = "subjectAltName=\(names.joined(separator: ","))\nbasicConstraints=CA:FALSE\n"
            + "keyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\n"
        try Data(text.utf8).write(to: extensions)
        try openssl(["req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                     "-keyout", key.path, "-out", request.path, "-subj", "/CN=\(hosts.first ?? "localhost")"])
        try openssl(["x509", "-req", "-in", request.path, "-CA", authority.path, "-CAkey", authorityKey.path,
                     "-set_serial", String(UInt32.random(in: 1...UInt32.max)), "-days", "2",
                     "-extfile", extensions.path, "-out", certificate.path])
        return try TLSServerIdentity(certificateChain: certificate, privateKey: key)
    }

    /// Deletes the folder and everything in it.
    public func remove() {
        try? FileManager.default.removeItem(at: folder)
    }

    private func openssl(_ arguments: [String]) throws {
        let status: Int32
        do {
            status = try Subprocess.run("openssl", arguments, quiet: true).status
        } catch {
            throw ServerError("TLS: the openssl command-line tool is needed to make test certificates: \(error)")
        }
        guard status == 0 else {
            throw ServerError("TLS: openssl \(arguments.prefix(1).joined()) exited with \(status)")
        }
    }
}
