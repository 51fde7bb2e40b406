import HTTPTypes
import NIOCore
import NIOHTTPTypes

/// Answers `Expect: 100-continue` with `100 Continue`, so that clients which ask
/// before sending a body (libcurl did for any POST over 1 KB, as do some HTTP
/// stacks still) send it at once instead of after their own wait (curl's: 1 s).
/// A body declared larger than the limit gets no 100: the final answer (21002 or
/// 413) comes without the client sending it.
final class ExpectContinueHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundOut = HTTPResponsePart

    private let maxBodyBytes: Int

    init(maxBodyBytes: Int) {
        self.maxBodyBytes = maxBodyBytes
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head(let head) = unwrapInboundIn(data),
           head.headerFields[.expect].map({ $0.lowercased() == "100-continue" }) == true,
           head.headerFields[.contentLength].flatMap({ Int($0) }).map({ $0 <= maxBodyBytes }) ?? true {
            context.writeAndFlush(wrapOutboundOut(.head(HTTPResponse(status: .continue))), promise: nil)
        }
        context.fireChannelRead(data)
    }
}
