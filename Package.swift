// swift-tools-version:6.0
import PackageDescription

// Settings every Swift target shares: Swift 6 mode is the package default;
// ExistentialAny keeps `any` explicit as the codebases we learn from do.
let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
]

let package = Package(
    name: "pipeline",
    products: [
        .executable(name: "pipeline", targets: ["pipeline"]),
        .library(name: "PipelineKit", targets: ["PipelineKit", "StandardProcessors"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
    ],
    targets: [
        // C layer: libvips through pkg-config, with fixed-arity shims for its varargs calls.
        .systemLibrary(
            name: "CVips",
            path: "Sources/CVips",
            pkgConfig: "vips",
            providers: [.apt(["libvips-dev"])]
        ),
        // C layer: libcurl through pkg-config, with typed setters for curl_easy_setopt.
        .systemLibrary(
            name: "CCurl",
            path: "Sources/CCurl",
            pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"])]
        ),
        // Safe Swift wrapper over libvips; knows nothing of pipelines.
        .target(name: "Vips", dependencies: ["CVips"], swiftSettings: swiftSettings),
        // DSL, validation, planning, runner, stages and the plugin protocol.
        .target(name: "PipelineKit", dependencies: ["Vips", "CCurl"], swiftSettings: swiftSettings),

        // Processor plugins: one module each under Plugins/.
        .target(name: "VipsResize", dependencies: ["PipelineKit", "Vips"], path: "Plugins/VipsResize", swiftSettings: swiftSettings),
        .target(name: "VipsCrop", dependencies: ["PipelineKit", "Vips"], path: "Plugins/VipsCrop", swiftSettings: swiftSettings),
        .target(name: "VipsBlur", dependencies: ["PipelineKit", "Vips"], path: "Plugins/VipsBlur", swiftSettings: swiftSettings),
        // The registry of built-in processors: one line per plugin module.
        .target(
            name: "StandardProcessors",
            dependencies: ["PipelineKit", "VipsResize", "VipsCrop", "VipsBlur"],
            swiftSettings: swiftSettings
        ),

        // The command-line tool: argument parsing and printing; no pipeline logic.
        .executableTarget(
            name: "pipeline",
            dependencies: [
                "PipelineKit", "StandardProcessors",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),

        .testTarget(
            name: "PipelineKitTests",
            dependencies: ["PipelineKit", "StandardProcessors", "Vips", "VipsResize", "VipsCrop", "VipsBlur", "pipeline"],
            // Seed corpora for the fuzz tests, read from the source tree.
            exclude: ["Fixtures"],
            swiftSettings: swiftSettings
        ),
    ]
)
