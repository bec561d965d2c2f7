#if Server
import Foundation
import PipelineKit
import TestSupport
import Testing

@testable import PipelineServer

/// deploy/kubernetes/serve.yaml against the server it deploys: its probes are paths the server
/// answers, its autoscaler's metrics are ones the server exports, and Kubernetes waits for the
/// drain before it kills a pod.
struct DeployManifestTests {
    static let manifest: String = {
        let url = CommandRunner.repositoryRoot.appendingPathComponent("deploy/kubernetes/serve.yaml")
        return (try? String(contentsOf: url, encoding: .utf8)) ?? ""
    }()

    /// The lines of the manifest outside its comments.
    static var settings: [String] { manifest.split(separator: "\n").map(String.init).filter { !$0.hasPrefix("#") } }

    /// Every value of `key:` in the manifest's settings, as written.
    static func values(of key: String) -> [String] {
        settings.compactMap { line in
            guard let range = line.range(of: key + ": ") else { return nil }
            return String(line[range.upperBound...].prefix { $0 != "," && $0 != "}" && $0 != " " })
        }
    }

    @Test func probesAndMetricsAreOnesTheServerAnswers() async throws {
        let probes = Set(Self.values(of: "path").filter { $0.hasPrefix("/") })
        // The autoscaler's rates are the adapter's renaming of the server's counters.
        let metrics = Self.values(of: "metric: {name").map { $0.replacingOccurrences(of: "_per_second", with: "_total") }
        #expect(probes == ["/healthz", "/metrics"], "\(Self.manifest.prefix(200))")
        #expect(metrics.count == 2)

        let directory = try ServeTests.folder()
        try await withServer(ServeTests.json, in: directory) { server in
            #expect(try await server.request("/thumb/a.jpg").status == 200)
            for path in probes { #expect(try await server.request(path).status == 200, "\(path)") }
            let exported = String(decoding: try await server.request("/metrics").body, as: UTF8.self)
            for metric in metrics { #expect(exported.contains("\n\(metric)") || exported.hasPrefix(metric), "\(metric) in \(exported)") }
        }
    }

    /// `/healthz` waits behind `serve.maxConnections` as every request does, up to
    /// `serve.timeout` when every connection waits for a make: a liveness probe that gives up
    /// sooner would restart a pod for being busy.
    @Test func livenessWaitsLongerThanARequestMayWait() throws {
        let timeouts = Self.values(of: "timeoutSeconds").compactMap { Double($0) }
        #expect(timeouts.count == 1 && timeouts.allSatisfy { $0 > ServeSettings.defaultTimeout }, "\(timeouts)")
    }

    /// Past the drain, the encodes on lanes finish, which one codec call each cannot be stopped:
    /// Kubernetes must leave them time before it kills the pod.
    @Test func kubernetesWaitsForTheDrainAndTheEncodesOnLanes() throws {
        let grace = try #require(Self.values(of: "terminationGracePeriodSeconds").first.flatMap { Double($0) })
        #expect(grace >= ServeSettings.defaultDrainTimeout + 60)
    }
}
#endif
