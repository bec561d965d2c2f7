// swift-tools-version:6.1
import PackageDescription

// Settings every Swift target shares: Swift 6 mode is the package default;
// ExistentialAny keeps `any` explicit as the codebases we learn from do.
let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny")
]

/// The built-in processor plugins, one module per family under `Plugins/`. Each is a product of
/// its own, so another package can reuse one family without the rest.
let pluginModules = ["VipsResize", "VipsCrop", "VipsFilters", "VipsGeometry", "VipsColour", "VipsComposite", "VipsText", "VipsOperation"]

/// C libraries a plugin module needs beyond libvips.
let pluginCLibraries: [String: [Target.Dependency]] = ["VipsText": ["CFontconfig"]]

let package = Package(
    name: "pipeline",
    // Every layer a third party may build on is a product: a plugin lives in its author's own
    // package and reaches users through that package's own command (see docs/writing-a-plugin.md).
    products: [
        .executable(name: "pipeline", targets: ["pipeline"]),
        .library(name: "Vips", targets: ["Vips"]),
        .library(name: "PipelineKit", targets: ["PipelineKit"]),
        .library(name: "StandardProcessors", targets: ["StandardProcessors"]),
        .library(name: "PipelineCLI", targets: ["PipelineCLI"]),
        .library(name: "PipelineServer", targets: ["PipelineServer"]),
        .library(name: "FaceDetection", targets: ["FaceDetection"]),
    ] + pluginModules.map { .library(name: $0, targets: [$0]) },
    // `pipeline serve` brings Hummingbird and SwiftNIO. A tool built on PipelineCLI that has no
    // use for serving leaves them out with `traits: []` on its `.package` line.
    // `"position": "faces"` brings OpenCV (its cascade classifier, libopencv-objdetect-dev and
    // opencv-data): a build without the Faces trait has no face detection and needs no OpenCV.
    traits: [
        .trait(name: "Server", description: "The `serve` command: on-demand outputs over HTTP (Hummingbird)."),
        .trait(name: "Faces", description: "Cover crops that keep faces (`\"position\": \"faces\"`), with OpenCV's cascade classifier."),
        .default(enabledTraits: ["Server", "Faces"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        // `pipeline serve`: the HTTP server, its start and graceful shutdown. Without Hummingbird's
        // ConfigurationSupport trait: the server is configured from the pipeline file, and
        // swift-configuration would be a large package to build for nothing.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1", traits: ["FullFoundation"]),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        // Reading a file whole off the cooperative pool, to name it by the hash of what is sent.
        .package(url: "https://github.com/apple/swift-nio", from: "2.81.0"),
        // The HTTP parts a connection's idle handler sees (already built for Hummingbird).
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.35.2"),
        // `pipeline serve`'s `/metrics`: the metrics API, and Prometheus' text format for it.
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
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
        // C layer: libdeflate, which inflates common PNGs faster than libpng's zlib does.
        .systemLibrary(
            name: "CDeflate",
            path: "Sources/CDeflate",
            pkgConfig: "libdeflate",
            providers: [.apt(["libdeflate-dev"])]
        ),
        // C layer: libtiff, whose strips the reader for large TIFFs decodes on threads of its own.
        .systemLibrary(
            name: "CTIFF",
            path: "Sources/CTIFF",
            pkgConfig: "libtiff-4",
            providers: [.apt(["libtiff-dev"])]
        ),
        // C layer: libwebp's decoder, called straight for still WebP images.
        .systemLibrary(
            name: "CWebP",
            path: "Sources/CWebP",
            pkgConfig: "libwebp",
            providers: [.apt(["libwebp-dev"])]
        ),
        // C layer: ISA-L's inflate, piece by piece, for large PNGs read row by row ahead of the resize.
        .systemLibrary(
            name: "CISAL",
            path: "Sources/CISAL",
            pkgConfig: "libisal",
            providers: [.apt(["libisal-dev"])]
        ),
        // C layer: libavif's encoder, for AVIF outputs through aom, rav1e or SVT-AV1.
        .systemLibrary(
            name: "CAvif",
            path: "Sources/CAvif",
            pkgConfig: "libavif",
            providers: [.apt(["libavif-dev"])]
        ),
        // C++ layer: OpenCV's cascade classifier behind a C interface, for face detection. Debian
        // ships no pkg-config file for OpenCV's modules alone, so its headers are found through
        // `opencv4`, a link to /usr/include/opencv4.
        .target(
            name: "CFaceDetect",
            path: "Sources/CFaceDetect",
            exclude: ["opencv4"],
            cxxSettings: [.headerSearchPath("opencv4")],
            // OpenCV is loaded on first use (face_detect.cpp says why), so it is not linked.
            linkerSettings: [.linkedLibrary("dl")]
        ),
        // C layer: fontconfig, which the `text` step asks whether a font is installed (Pango, through
        // libvips, would silently draw another).
        .systemLibrary(
            name: "CFontconfig",
            path: "Sources/CFontconfig",
            pkgConfig: "fontconfig",
            providers: [.apt(["libfontconfig-dev"])]
        ),
        // Safe Swift wrapper over libvips; knows nothing of pipelines.
        .target(name: "Vips", dependencies: ["CVips", "CDeflate", "CTIFF", "CWebP", "CISAL", "CAvif"], swiftSettings: swiftSettings),
        // DSL, validation, planning, runner, stages and the plugin protocol.
        // CVips also for GLib's SHA-256 (S3 payload hashes), which libvips already links;
        // CDeflate for the CRC-32s of a damaged PNG's chunks.
        .target(name: "PipelineKit", dependencies: ["Vips", "CVips", "CCurl", "CDeflate"], swiftSettings: swiftSettings),
        // The registry of built-in processors: one line per processor.
        .target(
            name: "StandardProcessors",
            dependencies: ["PipelineKit"] + pluginModules.map { .target(name: $0) } + [
                .target(name: "FaceDetection", condition: .when(traits: ["Faces"]))
            ],
            swiftSettings: swiftSettings
        ),
        // The face detector for `"position": "faces"` (the Faces trait), as a product of its own.
        .target(
            name: "FaceDetection", dependencies: ["PipelineKit", "Vips", "CFaceDetect"], path: "Plugins/FaceDetection",
            swiftSettings: swiftSettings),
        // `pipeline serve` as a library: the outputs a pipeline file declares, made on request
        // through the same plan, journal and stages a batch run uses, over Hummingbird.
        .target(
            name: "PipelineServer",
            // Empty without the Server trait.
            dependencies: [
                "PipelineKit",
                // The one lock type.
                "Vips",
                .product(name: "Hummingbird", package: "hummingbird", condition: .when(traits: ["Server"])),
                .product(name: "HummingbirdCore", package: "hummingbird", condition: .when(traits: ["Server"])),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle", condition: .when(traits: ["Server"])),
                .product(name: "_NIOFileSystem", package: "swift-nio", condition: .when(traits: ["Server"])),
                // A socket's error, to say it in the system's words.
                .product(name: "NIOCore", package: "swift-nio", condition: .when(traits: ["Server"])),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras", condition: .when(traits: ["Server"])),
                // HTTP/1's own rules for keeping a connection, below Hummingbird's version-free requests.
                .product(name: "NIOHTTP1", package: "swift-nio", condition: .when(traits: ["Server"])),
                .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras", condition: .when(traits: ["Server"])),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics", condition: .when(traits: ["Server"])),
                .product(name: "Prometheus", package: "swift-prometheus", condition: .when(traits: ["Server"])),
            ],
            swiftSettings: swiftSettings
        ),
        // The command line as a library: `PipelineCLI.main(processors:)` runs every command
        // with the processors it is given, for `pipeline` and for plugin authors' own tools.
        .target(
            name: "PipelineCLI",
            dependencies: [
                "PipelineKit",
                .target(name: "PipelineServer", condition: .when(traits: ["Server"])),
                "Vips",
                // `plugins --vips` lists what the `vips` step can run.
                "VipsOperation",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                // `serve`: SIGTERM as a graceful shutdown of the server, SIGHUP as a reload.
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle", condition: .when(traits: ["Server"])),
                .product(name: "UnixSignals", package: "swift-service-lifecycle", condition: .when(traits: ["Server"])),
            ],
            swiftSettings: swiftSettings
        ),
        // The `pipeline` command: the CLI with the built-in processors, nothing more.
        .executableTarget(name: "pipeline", dependencies: ["PipelineCLI", "StandardProcessors"], swiftSettings: swiftSettings),

        // Fixtures and helpers every test target shares: images made by libvips, temporary
        // folders and mounts, a loopback HTTP server, the built command, test processors.
        .target(
            name: "TestSupport",
            dependencies: ["PipelineKit", "StandardProcessors", "Vips"],
            path: "Tests/TestSupport",
            swiftSettings: swiftSettings
        ),
        // One test target per module under test, its folders mirroring the module's.
        // CDeflate writes PNG fixtures byte by byte (CRCs, zlib streams) for the whole-PNG reader.
        .testTarget(name: "VipsTests", dependencies: ["Vips", "CDeflate", "CTIFF", "TestSupport"], swiftSettings: swiftSettings),
        .testTarget(
            name: "PipelineKitTests",
            // The library alone, in process: a test that runs the command is in PipelineCLITests.
            // StandardProcessors, for real pipelines whose steps (resize, crop, ...) are built in;
            // VipsResize, for the registry test that names the built-in Resize type.
            // CDeflate, for PNG chunks written byte by byte (compressed text, checksums).
            dependencies: ["PipelineKit", "Vips", "TestSupport", "StandardProcessors", "VipsResize", "CDeflate"],
            // Seed corpora for the fuzz tests, read from the source tree.
            exclude: ["Fixtures"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "PluginTests",
            dependencies: ["PipelineKit", "StandardProcessors", "Vips", "TestSupport"] + pluginModules.map { .target(name: $0) } + [
                .target(name: "FaceDetection", condition: .when(traits: ["Faces"]))
            ],
            // A photograph with a face, read from the source tree, and where it comes from.
            exclude: ["FaceDetection/astronaut.jpg", "FaceDetection/README.md"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "PipelineServerTests",
            // A real server on loopback, asked by a real HTTP client.
            // Empty without the Server trait.
            dependencies: [
                .target(name: "PipelineServer", condition: .when(traits: ["Server"])), "PipelineKit", "StandardProcessors", "Vips",
                "TestSupport",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle", condition: .when(traits: ["Server"])),
                .product(name: "NIOCore", package: "swift-nio", condition: .when(traits: ["Server"])),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "PipelineCLITests",
            // `pipeline` is run as a user runs it: the tests find the built binary. Tests of the
            // library's behaviour that need the command (its exit status, output, signals,
            // limits a shell sets on its process) are here too.
            dependencies: ["PipelineCLI", "PipelineKit", "StandardProcessors", "Vips", "pipeline", "TestSupport"],
            swiftSettings: swiftSettings
        ),
    ]
        + pluginModules.map { module in
            .target(
                name: module, dependencies: ["PipelineKit", "Vips"] + (pluginCLibraries[module] ?? []), path: "Plugins/\(module)",
                swiftSettings: swiftSettings)
        }
)
