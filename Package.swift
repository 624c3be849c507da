// swift-tools-version:6.0
import PackageDescription

// Dependency direction is the architecture:
//   Core     pure Swift: request, geometry, canonical form, config model, error codes.
//   Server   the `aspect` executable: wires the other targets together.
// Later targets (their folders come with their issues): CVips (C shim over libvips'
// varargs calls) and Imaging (owns every VipsImage), CLinux (epoll, eventfd, accept4)
// and HTTP (codec and event loop). Nothing in Core depends on any of them.
let strict: [SwiftSetting] = []

let package = Package(
    name: "Aspect",
    products: [
        .executable(name: "aspect", targets: ["Server"]),
        .library(name: "Core", targets: ["Core"]),
    ],
    targets: [
        .target(name: "Core", swiftSettings: strict),
        .executableTarget(name: "Server", dependencies: ["Core"], swiftSettings: strict),
        .testTarget(name: "CoreTests", dependencies: ["Core"], swiftSettings: strict),
        // Runs the built `aspect` as a subprocess.
        .testTarget(name: "CLITests", dependencies: ["Server"], swiftSettings: strict),
    ],
    swiftLanguageModes: [.v6]
)
