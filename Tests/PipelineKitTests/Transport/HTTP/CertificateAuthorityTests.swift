import Foundation
import TestSupport
import Testing

@testable import PipelineKit

/// https inputs from an origin whose certificate no system authority signed, as an internal
/// server or a MinIO with its own certificate has: refused with a reason that says how to trust
/// it, and fetched once its authority is named, against OpenSSL's own server on loopback.
@Suite struct CertificateAuthorityTests {
    static let body = Data("not an image, only bytes".utf8)

    func load(_ url: String, trusting authorities: CertificateAuthorities) -> Result<DataResponse, FetchError> {
        let loader = CurlDataLoader(settings: .init(certificateAuthorities: authorities))
        do {
            return .success(try loader.load(DataRequest(url: url, maxBytes: 1 << 20), isCancelled: { false }))
        } catch {
            return .failure(error)
        }
    }

    @Test func aPrivateAuthorityIsRefusedUntilNamedByFileOrFolder() throws {
        let origin = try TLSOrigin(files: ["a.bin": Self.body])

        guard case .failure(let refused) = load(origin.url("a.bin"), trusting: CertificateAuthorities()) else {
            Issue.record("a certificate no system authority signed was accepted")
            return
        }
        // Not retried: the same certificate would be refused again.
        #expect(refused.kind == .other && !refused.isRetryable)
        #expect(refused.message.contains("certificate was refused"), "\(refused.message)")
        // libcurl's own words for why, not only its code's.
        #expect(refused.message.contains("self-signed"), "\(refused.message)")
        #expect(refused.message.contains("set SSL_CERT_FILE"), "\(refused.message)")

        let byFile = try load(origin.url("a.bin"), trusting: CertificateAuthorities(file: origin.authorityFile)).get()
        #expect(byFile.status == 200 && byFile.body == Self.body)
        let byFolder = try load(origin.url("a.bin"), trusting: CertificateAuthorities(folder: origin.authorityFolder)).get()
        #expect(byFolder.status == 200 && byFolder.body == Self.body)
    }

    /// Naming authorities replaces the system's: the message says which were trusted.
    @Test func aRefusalNamesTheAuthoritiesTrusted() throws {
        let origin = try TLSOrigin(files: ["a.bin": Self.body])
        let other = try TLSOrigin(files: [:])
        let trusted = CertificateAuthorities(file: other.authorityFile, source: "SSL_CERT_FILE")
        guard case .failure(let refused) = load(origin.url("a.bin"), trusting: trusted) else {
            Issue.record("a certificate signed by another authority was accepted")
            return
        }
        #expect(refused.message.contains("those SSL_CERT_FILE names (\(other.authorityFile))"), "\(refused.message)")
        // A machine-wide variable read first hides the user's: the refusal says which was passed over
        let hiding = CertificateAuthorities.fromEnvironment(["CURL_CA_BUNDLE": other.authorityFile, "SSL_CERT_FILE": origin.authorityFile])
        guard case .failure(let hidden) = load(origin.url("a.bin"), trusting: hiding) else {
            Issue.record("a certificate signed by an authority not read was accepted")
            return
        }
        #expect(
            hidden.message.contains("(\(other.authorityFile)); SSL_CERT_FILE is set too, but not read: CURL_CA_BUNDLE comes first"),
            "\(hidden.message)")
    }

    @Test func anUnreadableAuthorityFileIsNamed() throws {
        let origin = try TLSOrigin(files: ["a.bin": Self.body])
        let missing = origin.folder.path + "/no-such.pem"
        guard case .failure(let error) = load(origin.url("a.bin"), trusting: CertificateAuthorities(file: missing, source: "SSL_CERT_FILE"))
        else {
            Issue.record("a missing authority file was taken")
            return
        }
        #expect(error.message.contains("cannot read the certificate authorities SSL_CERT_FILE names (\(missing))"), "\(error.message)")
    }

    /// The variables curl and OpenSSL's tools read, in their order; an empty one is unset.
    @Test func theEnvironmentNamesTheAuthorities() {
        #expect(CertificateAuthorities.fromEnvironment([:]) == CertificateAuthorities())
        #expect(
            CertificateAuthorities.fromEnvironment(["SSL_CERT_FILE": "/a.pem", "CURL_CA_BUNDLE": "/b.pem"])
                == CertificateAuthorities(file: "/b.pem", source: "CURL_CA_BUNDLE", passedOver: ["SSL_CERT_FILE"]))
        #expect(
            CertificateAuthorities.fromEnvironment(["SSL_CERT_FILE": "/b.pem", "CURL_CA_BUNDLE": "/b.pem"])
                == CertificateAuthorities(file: "/b.pem", source: "CURL_CA_BUNDLE"))
        #expect(
            CertificateAuthorities.fromEnvironment(["SSL_CERT_FILE": "/a.pem", "CURL_CA_BUNDLE": ""])
                == CertificateAuthorities(file: "/a.pem", source: "SSL_CERT_FILE"))
        #expect(
            CertificateAuthorities.fromEnvironment(["SSL_CERT_DIR": "/certs", "SSL_CERT_FILE": "/a.pem"])
                == CertificateAuthorities(file: "/a.pem", folder: "/certs", source: "SSL_CERT_FILE and SSL_CERT_DIR"))
    }

    /// S3 reads the AWS command line's variable first.
    @Test func s3ReadsAWSCABundleFirst() {
        let environment = ["AWS_CA_BUNDLE": "/aws.pem", "CURL_CA_BUNDLE": "/b.pem"]
        #expect(
            CertificateAuthorities.fromEnvironment(environment, firstReading: [CertificateAuthorities.awsFileVariable])
                == CertificateAuthorities(file: "/aws.pem", source: "AWS_CA_BUNDLE", passedOver: ["CURL_CA_BUNDLE"]))
        #expect(CertificateAuthorities.fromEnvironment(environment).file == "/b.pem")
    }
}
