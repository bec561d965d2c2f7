// swift-tools-version:6.0
import PackageDescription

// A plugin for `pipeline` that lives in its own package: one processor (`sepia`), and a command
// that is `pipeline` with that processor added. Nothing in the pipeline repository changes.
let package = Package(
    name: "PluginPackage",
    products: [
        .executable(name: "sepia-pipeline", targets: ["sepia-pipeline"]),
        .library(name: "SepiaProcessor", targets: ["SepiaProcessor"]),
    ],
    dependencies: [
        // Your package would name the pipeline repository by URL and version instead.
        .package(name: "pipeline", path: "../.."),
    ],
    targets: [
        .target(
            name: "SepiaProcessor",
            dependencies: [
                .product(name: "PipelineKit", package: "pipeline"),
                .product(name: "Vips", package: "pipeline"),
            ]
        ),
        .executableTarget(
            name: "sepia-pipeline",
            dependencies: [
                "SepiaProcessor",
                .product(name: "PipelineCLI", package: "pipeline"),
                .product(name: "StandardProcessors", package: "pipeline"),
            ]
        ),
        .testTarget(
            name: "SepiaProcessorTests",
            dependencies: ["SepiaProcessor", .product(name: "Vips", package: "pipeline")]
        ),
    ]
)
