// swift-tools-version:6.0
import PackageDescription

// Dependency direction is the architecture: Core (the request, its parsing, geometry and
// canonical form, the plan) depends on no other target, the HTTP codec on Core's percent
// decoding and Syscalls alone; libvips, libcurl and GLib are reached through one
// C shim each; the service knows its sources, result store and renderer by protocol, and
// the `aspect` executable wires them. docs/design.md draws the arrows, and a doc test holds
// that drawing to the targets below.
// libvips' headers include GLib's, which live outside the default search path. These are
// the two folders `pkg-config --cflags vips` names for them on Debian; written out here
// because SwiftPM's pkg-config support warns about the `-pthread` that vips.pc adds.
#if arch(arm64)
    let multiarch = "aarch64-linux-gnu"
#else
    let multiarch = "x86_64-linux-gnu"
#endif
let glibIncludes = ["-I/usr/include/glib-2.0", "-I/usr/lib/\(multiarch)/glib-2.0/include"]
/// libxml2's headers, where Debian's libxml2-dev puts them.
let xmlIncludes = ["-I/usr/include/libxml2"]

let package = Package(
    name: "Aspect",
    products: [
        .executable(name: "aspect", targets: ["Server"]),
        .library(name: "Core", targets: ["Core"]),
        .library(name: "AspectClient", targets: ["AspectClient"]),
    ],
    targets: [
        .target(name: "Core"),
        // imgproxy's URLs: the grammar, the signature and the planner of what the native
        // parameters cannot say, translated into Core's request (SPEC: imgproxy URLs).
        .target(name: "Imgproxy", dependencies: ["Core", "Hashing", "Signing"]),
        // thumbor's URLs, the same way (SPEC: thumbor URLs).
        .target(name: "Thumbor", dependencies: ["Core", "Hashing", "Signing"]),
        // The configuration: every key with its default, variable and flag; loading from the
        // file, the environment and the flags, in that precedence.
        .target(name: "Configuration", dependencies: ["Core"]),
        // aspect warm and aspect thumb --out: their requests, outputs and progress.
        .target(name: "Batch", dependencies: ["Core"]),
        // ThumbHash and BlurHash encoders, average and dominant colours: pure Swift.
        .target(name: "Placeholders"),
        // The client library for apps: URLs and signatures, Foundation only, no other target.
        .target(name: "AspectClient"),
        .target(
            name: "CVips", cSettings: [.unsafeFlags(glibIncludes)],
            linkerSettings: [
                .linkedLibrary("vips"), .linkedLibrary("heif"), .linkedLibrary("webp"), .linkedLibrary("gobject-2.0"),
                .linkedLibrary("glib-2.0"),
            ]),
        // FFmpeg's libraries behind fixed-arity calls: a video's facts and the frame at a moment.
        .target(
            name: "CAV",
            linkerSettings: [
                .linkedLibrary("avformat"), .linkedLibrary("avcodec"), .linkedLibrary("avutil"),
                .linkedLibrary("swscale"),
            ]),
        // libxml2, locked down (no network, no entity, no DTD ever loaded), for the SVG sanitiser.
        .target(name: "CXML", cSettings: [.unsafeFlags(xmlIncludes)], linkerSettings: [.linkedLibrary("xml2")]),
        // SVG sanitised before librsvg sees it: an allowlist of elements and attributes, no
        // reference that leaves the document, the intrinsic size settled.
        .target(
            name: "SVG", dependencies: ["Core", "CXML"],
            swiftSettings: [.unsafeFlags(xmlIncludes.flatMap { ["-Xcc", $0] })]),
        // dlib's frontal face detector (HOG and a linear SVM, its model inside the library)
        // behind one C call, for gravity=face (SPEC: Faces). Optimised even in a debug
        // build: the detector's templates unoptimised take seconds a picture.
        .target(
            name: "CFaces", cxxSettings: [.unsafeFlags(["-O2"])],
            linkerSettings: [
                .linkedLibrary("dlib"), .linkedLibrary("lapack"), .linkedLibrary("blas"), .linkedLibrary("stdc++"),
            ]),
        .target(
            name: "Imaging", dependencies: ["Core", "CVips", "CAV", "CFaces", "Syscalls", "SVG"],
            swiftSettings: [.unsafeFlags((glibIncludes + xmlIncludes).flatMap { ["-Xcc", $0] })]),
        // SHA-256 and HMAC-SHA256 by GLib (GChecksum, GHmac), in one place for the cache's
        // keys, signed URLs and S3's signatures; it pulls in GLib only, not libvips.
        .target(
            name: "CGLib", cSettings: [.unsafeFlags(glibIncludes)], linkerSettings: [.linkedLibrary("glib-2.0")]),
        .target(
            name: "Hashing", dependencies: ["CGLib"],
            swiftSettings: [.unsafeFlags(glibIncludes.flatMap { ["-Xcc", $0] })]),
        // The caches on disk: DiskLRU (the index, eviction, the atomic write, the rebuild),
        // under the result store (hits handed back open) and the source cache.
        .target(name: "Cache", dependencies: ["Core", "Stores", "Syscalls", "Hashing"]),
        // Signed URLs: HMAC-SHA256 over Core's canonical form.
        .target(name: "Signing", dependencies: ["Core", "Hashing"]),
        // S3: AWS Signature V4 and object URLs (the bucket source builds on it).
        .target(name: "S3", dependencies: ["Core", "Hashing"]),
        // What the service knows of its sources, result store and renderer: protocols and the
        // values they speak, no implementation. The service and the stores both depend on it.
        .target(name: "Stores", dependencies: ["Core", "Syscalls"]),
        // Bounded thread pools and coalescing of identical work: Foundation, and CLinux to
        // name the threads.
        .target(name: "Workers", dependencies: ["CLinux"]),
        // The service: the /thumb and /info flow, a handler for any HTTP server, knowing its
        // sources, result store and renderer by protocol; the executable wires the real ones.
        .target(
            name: "Service",
            dependencies: [
                "Core", "Configuration", "HTTP", "Stores", "Workers", "Hashing", "Signing", "Syscalls", "Placeholders",
                "Imgproxy", "Thumbor",
            ]),
        // libcurl's varargs calls behind fixed-arity ones.
        .target(name: "CCurl", linkerSettings: [.linkedLibrary("curl")]),
        // The process's one libcurl client (one handle pool, one global set-up) and the one
        // place an S3 bucket's location and signer are made from `s3.*`.
        .target(name: "Remote", dependencies: ["CCurl", "Configuration", "S3"]),
        // The source stores: a folder, an HTTP origin, an S3 bucket, and the source cache.
        .target(
            name: "SourceStores",
            dependencies: [
                "Core", "Configuration", "Stores", "Workers", "Cache", "CLinux", "Hashing", "Remote", "S3",
                "Syscalls",
            ]),
        // The shared result tier in S3 behind the local cache (cache.shared).
        .target(
            name: "SharedResults",
            dependencies: ["Core", "Configuration", "Stores", "Hashing", "Remote", "S3", "Workers"]),
        .target(name: "CLinux"),
        // libseccomp and the process calls of the render workers (SPEC: Isolation).
        .target(name: "CSandbox", linkerSettings: [.linkedLibrary("seccomp")]),
        // Renders in sandboxed worker processes: the wire, the worker's loop and the
        // service's renderer that hands jobs to the workers.
        .target(name: "Isolation", dependencies: ["Core", "Stores", "Syscalls", "CLinux", "CSandbox"]),
        // System calls with EINTR retried in one place, and the clocks; Glibc only.
        .target(name: "Syscalls"),
        // The HTTP/1.1 codec (parser and response writer, no I/O) and what a handler sees of
        // a server (handler, route, responder, context); a response's body may be an open file.
        .target(name: "HTTP", dependencies: ["Core", "Syscalls"]),
        // The event loop, connections, worker pool: POSIX sockets and epoll.
        .target(name: "HTTPServer", dependencies: ["Core", "HTTP", "CLinux", "Syscalls", "Workers"]),
        // The `aspect` executable: its commands, and the wiring of the real parts.
        .executableTarget(
            name: "Server",
            dependencies: [
                "Core", "Configuration", "Imaging", "HTTP", "HTTPServer", "Cache", "SharedResults", "Signing",
                "Hashing", "Isolation",
                "CLinux",
                "Syscalls", "Service", "Stores",
                "SourceStores", "Batch", "Placeholders", "Remote",
            ],
            swiftSettings: [.unsafeFlags(glibIncludes.flatMap { ["-Xcc", $0] })]),
        // The in-process imaging benchmark and memory probe (bench/, BENCHMARKS.md).
        .executableTarget(
            name: "aspect-bench", dependencies: ["Core", "Imaging", "Syscalls"], path: "bench/aspect-bench",
            swiftSettings: [.unsafeFlags(glibIncludes.flatMap { ["-Xcc", $0] })]),
        .testTarget(name: "CoreTests", dependencies: ["Core", "Configuration", "TestSupport"]),
        // Each dialect's grammar, tables and planner, held to the real servers' answers.
        .testTarget(name: "DialectTests", dependencies: ["Core", "Imgproxy", "Thumbor", "TestSupport"]),
        .testTarget(name: "AspectClientTests", dependencies: ["AspectClient", "TestSupport"]),
        .testTarget(name: "PlaceholdersTests", dependencies: ["Placeholders", "AspectClient", "TestSupport"]),
        .testTarget(name: "S3Tests", dependencies: ["S3", "TestSupport"]),
        .testTarget(name: "BatchTests", dependencies: ["Batch", "Core"]),
        .testTarget(
            name: "SourceStoresTests",
            dependencies: ["SourceStores", "Stores", "Cache", "Core", "Configuration", "TestSupport"]),
        .testTarget(
            name: "SVGTests", dependencies: ["SVG", "Core"],
            swiftSettings: [.unsafeFlags(xmlIncludes.flatMap { ["-Xcc", $0] })]),
        .testTarget(
            name: "SigningTests", dependencies: ["Signing", "Core", "Hashing", "TestSupport", "Imgproxy", "Thumbor"]),
        // Loopback clients and servers shared by the test targets.
        .target(name: "TestSupport", dependencies: ["HTTP", "HTTPServer", "Syscalls"], path: "Tests/TestSupport"),
        .testTarget(name: "HTTPTests", dependencies: ["HTTP", "HTTPServer", "TestSupport"]),
        // The service in process: simple stores and a renderer at the protocol seams, no server.
        .testTarget(
            name: "ServiceTests",
            dependencies: [
                "Service", "Stores", "HTTP", "Core", "Configuration", "Signing", "Hashing", "Syscalls", "AspectClient",
                "TestSupport",
            ]),
        // The tests' whole-image readers (decode, ICC profile, metadata, animation), kept out
        // of the service's Imaging target.
        .target(
            name: "ImagingTestSupport", dependencies: ["Imaging", "CVips", "CAV", "Core"],
            path: "Tests/ImagingTestSupport",
            swiftSettings: [.unsafeFlags(glibIncludes.flatMap { ["-Xcc", $0] })]),
        .testTarget(
            name: "ImagingTests",
            dependencies: ["Imaging", "ImagingTestSupport", "Core", "TestSupport", "Syscalls", "CVips", "Imgproxy"],
            swiftSettings: [.unsafeFlags(glibIncludes.flatMap { ["-Xcc", $0] })]),
        // Runs the built `aspect` as a subprocess.
        .testTarget(
            name: "CLITests",
            dependencies: [
                "Server", "aspect-bench", "Imaging", "ImagingTestSupport", "Core", "Configuration", "Service",
                "Signing", "Imgproxy", "Thumbor",
                "TestSupport", "AspectClient",
            ],
            swiftSettings: [.unsafeFlags(glibIncludes.flatMap { ["-Xcc", $0] })]),
    ],
    swiftLanguageModes: [.v6]
)
