#if Server
import Foundation
import Hummingbird
import Logging
import PipelineKit

/// The server's routes, as a Hummingbird `Router` for one plan: `/healthz`, `/metrics`,
/// `/info/{input}` and `/{output}/{input}` (the last two below their signature when the file
/// signs URLs). Every request passes `AccessMiddleware` (metrics, the access log, refusals as
/// JSON) and `RequestLineMiddleware`; the last two paths pass `SignatureMiddleware` too, when the
/// file has a key.
struct ServerRoutes: Sendable {
    /// What answers for the outputs' files.
    let responder: OutputResponder
    /// What answers `/info/{input}`.
    let info: InfoResponder
    private let router: RouterResponder<ServerRequestContext>

    init(pipeline: Pipeline, plan: RunPlan, memory: SharedMemoryBudget, turns: RunTurns, metrics: ServerMetrics, logger: Logger) {
        let responder = OutputResponder(pipeline: pipeline, plan: plan, memory: memory, turns: turns, logger: logger)
        let info = InfoResponder(pipeline: pipeline, plan: plan, catalog: responder.catalog, maker: responder.maker)
        self.info = info
        let signature = plan.definition.serve.signing.map(URLSignature.init)
        let router = Router(context: ServerRequestContext.self, options: .autoGenerateHeadEndpoints)
        // Middleware applies to the routes added after it, and to paths no route takes.
        router.add(middleware: AccessMiddleware(metrics: metrics, catalog: responder.catalog, signed: signature != nil, logger: logger))
        router.add(middleware: RequestLineMiddleware())
        router.get("/healthz") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "text/plain; charset=utf-8"], body: .init(byteBuffer: ByteBuffer(string: "ok\n")))
        }
        router.get("/metrics") { _, _ in
            let text = metrics.text(runs: responder.maker.counts)
            return Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(bytes: text)))
        }
        let files = router.group()
        if let signature { files.add(middleware: SignatureMiddleware(signature: signature)) }
        // The rest of the path is looked up in the catalog as sent (see `OutputRequest`), never
        // taken apart by the router, so that an encoded `/` or `..` stays part of a name. `/info/`
        // is told apart here, below the signature, which the router does not know of.
        files.get("/**") { request, context in
            let path = context.routedPath(of: request)
            if InfoResponder.asksForInfo(path) { return try await info.answer(request, path: path) }
            return try await responder.answer(request, path: path, context: context)
        }
        self.responder = responder
        self.router = router.buildResponder()
    }

    /// Answers `request` through the routes.
    func respond(to request: Request, context: ServerRequestContext) async throws -> Response {
        try await router.respond(to: request, context: context)
    }
}
#endif
