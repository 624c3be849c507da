// The SwiftUI view: compiled on Apple platforms only. Linux has no SwiftUI, so this file is
// not built or tested in this repository's CI; it is a thin shell over `AspectLayout` and
// `ThumbHashImage`, which are.
#if canImport(SwiftUI) && canImport(CoreGraphics)
    import CoreGraphics
    import SwiftUI

    /// An image from Aspect, laid out before it loads: the frame is reserved from the
    /// image's ratio (given, or from `/info`), the ThumbHash placeholder fills it, then the
    /// thumbnail `AspectLayout` asks for replaces it.
    ///
    ///     AspectImage("photos/cat.jpg", server: server, kind: .fill(ratio: 4.0 / 3))
    ///     AspectImage("people/ada.jpg", server: server, kind: .circle).frame(width: 64)
    @available(iOS 15.0, macOS 12.0, tvOS 15.0, watchOS 8.0, *)
    public struct AspectImage: View {
        let src: String
        let server: AspectServer
        let kind: AspectLayout.Kind
        let step: Int
        @State private var info: ImageInfo?
        @Environment(\.displayScale) private var scale

        /// `info`: what `/info` said, when the app has it already (a list's data), so no
        /// request is made for it.
        public init(
            _ src: String, server: AspectServer, kind: AspectLayout.Kind, info: ImageInfo? = nil, step: Int = 50
        ) {
            self.src = src
            self.server = server
            self.kind = kind
            self.step = step
            _info = State(initialValue: info)
        }

        private var imageRatio: Double { info?.ratio ?? 1 }

        public var body: some View {
            GeometryReader { proxy in
                let layout = AspectLayout(
                    src: src, imageRatio: imageRatio, kind: kind,
                    container: (Double(proxy.size.width), Double(proxy.size.height)), scale: Double(scale), step: step)
                AsyncImage(url: server.url(layout.thumbnail)) { phase in
                    if let image = phase.image {
                        image.resizable().scaledToFill()
                    } else {
                        placeholder
                    }
                }
                .frame(width: CGFloat(layout.width), height: CGFloat(layout.height))
                .clipShape(ClipShape(kind: kind))
                .frame(width: proxy.size.width, height: proxy.size.height)
            }
            .aspectRatio(CGFloat(AspectLayout.frameRatio(kind, imageRatio: imageRatio)), contentMode: .fit)
            .task(id: src) {
                if info == nil { info = try? await server.info(src: src) }
            }
        }

        @ViewBuilder private var placeholder: some View {
            if let cg = info?.placeholder?.cgImage {
                Image(decorative: cg, scale: 1).resizable().scaledToFill()
            } else {
                Color.secondary.opacity(0.15)
            }
        }
    }

    /// The clip of a kind: a circle, a capsule, or the frame's rectangle.
    @available(iOS 15.0, macOS 12.0, tvOS 15.0, watchOS 8.0, *)
    struct ClipShape: Shape {
        let kind: AspectLayout.Kind

        func path(in rect: CGRect) -> Path {
            switch kind {
            case .circle: Circle().path(in: rect)
            case .capsule: Capsule().path(in: rect)
            default: Rectangle().path(in: rect)
            }
        }
    }

    extension ThumbHashImage {
        /// The placeholder as a CGImage, to draw scaled up (it is blurred by nature).
        public var cgImage: CGImage? {
            guard let provider = CGDataProvider(data: Data(rgba) as CFData) else { return nil }
            return CGImage(
                width: width, height: height, bitsPerComponent: 8, bitsPerPixel: 32, bytesPerRow: width * 4,
                space: CGColorSpaceCreateDeviceRGB(),
                bitmapInfo: CGBitmapInfo(rawValue: CGImageAlphaInfo.last.rawValue), provider: provider, decode: nil,
                shouldInterpolate: true, intent: .defaultIntent)
        }
    }
#endif
