// swift-tools-version:6.2
import PackageDescription

// `receipt serve`, the `receipt` CLI and the transports (the App Store Server API and OCSP over
// AsyncHTTPClient), over the core package one directory up. The core's package depends on no
// other; everything that needs Hummingbird, SwiftNIO, PostgresNIO and the rest is here, so that a
// Swift program depending on ReceiptCore resolves none of them.
// The release `receipt` without what only a shared object needs: the toolchain's static-stdlib flags
// export every symbol (`-export-dynamic`: 4.8 MB of dynamic symbol table, which no code looks up:
// the runtime finds its metadata through the sections it registers; a crash backtrace of the stripped
// program then shows addresses, the unstripped Server/.build/release/receipt-cli names), and relative
// relocations packed (`DT_RELR`) instead of 24 bytes each, which needs glibc 2.36 (Debian 12) where
// it is built and run. lld, the toolchain's, links both; gold knows neither. docs/performance.md has them measured.
let leanExecutableLinkerFlags = ["-use-ld=lld", "-Xlinker", "--no-export-dynamic", "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs"]

let package = Package(
    name: "receipt-server",
    products: [
        // The App Store Server API over AsyncHTTPClient, for Swift servers (never in libreceipt.so).
        .library(name: "ReceiptServerAPIClient", targets: ["ReceiptServerAPIClient"]),
        .executable(name: "receipt-cli", targets: ["ReceiptCLI"]),
    ],
    dependencies: [
        .package(name: "libreceipt", path: ".."),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        // Hummingbird's default traits would add swift-configuration and full Foundation, which the server does not use.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.0", traits: []),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.0"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        // The store: SQLite, compiled in from sqlite-nio's own copy…
        .package(url: "https://github.com/vapor/sqlite-nio", from: "1.13.0"),
        // …and PostgreSQL, for several servers on one database.
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.0"),
        // TLS to PostgreSQL (sslmode, sslrootcert): postgres-nio's own TLS library.
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.36.0"),
        // ReceiptServerAPIClient (and through it the server's OCSP and the CLI's `receipt api`).
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        // `receipt serve --config`: YAML, whose nodes keep their line for FILE:LINE errors.
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.0"),
    ],
    targets: [
        // The Swift runtime's enqueue hook, which `receipt serve` sets (ReceiptServer.installEnqueueHook).
        .target(name: "CConcurrencyHook"),
        // glibc's mallopt, which `receipt serve` sets (ServerAllocator).
        .target(name: "CGlibcMalloc"),
        // The commit `make` stamped into the build (ServerBuild): `receipt --version`, /metrics.
        .target(name: "CBuildInfo"),
        // The HTTP server of `receipt serve`: routing, limits, metrics and shutdown around the
        // core's endpoints. Linked into the CLI, never into libreceipt.so.
        .target(name: "ReceiptServer", dependencies: [
            .product(name: "ReceiptCore", package: "libreceipt"),
            "CConcurrencyHook",
            "CGlibcMalloc",
            "CBuildInfo",
            "ReceiptServerAPIClient",  // its RevocationTransport asks OCSP (AsyncHTTPClient)
            .product(name: "Hummingbird", package: "hummingbird"),
            .product(name: "HummingbirdCore", package: "hummingbird"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "Metrics", package: "swift-metrics"),
            .product(name: "Prometheus", package: "swift-prometheus"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            .product(name: "SQLiteNIO", package: "sqlite-nio"),
            .product(name: "PostgresNIO", package: "postgres-nio"),
            .product(name: "NIOSSL", package: "swift-nio-ssl"),
        ], resources: [
            // GET /openapi.json: the routes described (OpenAPIDocument), compiled into the program
            // as bytes, so that no file need be installed beside it.
            .embedInCode("Endpoints/openapi.json"),
        ]),
        // The transport of ReceiptCore's ServerAPIExchange; nothing of the API's rules lives here.
        .target(name: "ReceiptServerAPIClient", dependencies: [
            .product(name: "ReceiptCore", package: "libreceipt"),
            .product(name: "AsyncHTTPClient", package: "async-http-client"),
        ]),
        .executableTarget(name: "ReceiptCLI", dependencies: [
            .product(name: "ReceiptCore", package: "libreceipt"),
            "ReceiptServer",
            "ReceiptServerAPIClient",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
            .product(name: "Yams", package: "Yams"),
        ], path: "Sources/receipt", linkerSettings: [.unsafeFlags(leanExecutableLinkerFlags, .when(platforms: [.linux], configuration: .release))]),
        .testTarget(name: "ReceiptServerAPIClientTests", dependencies: [
            .product(name: "ReceiptCore", package: "libreceipt"), "ReceiptServerAPIClient"]),
        .testTarget(name: "ReceiptServerTests", dependencies: [
            "ReceiptServer",
            .product(name: "ReceiptCore", package: "libreceipt"),
            .product(name: "Hummingbird", package: "hummingbird"),
            .product(name: "HummingbirdTesting", package: "hummingbird"),
            .product(name: "Logging", package: "swift-log"),
        ]),
    ]
)
