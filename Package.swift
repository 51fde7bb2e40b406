// swift-tools-version:6.2
import PackageDescription

// Flags that make libreceipt.so embeddable. They belong to the ABI target only:
// SwiftPM passes a target's linker flags to every binary that links it, so tests
// and the CLI depend on ReceiptCore, never on CReceipt.
//
// RECEIPT_INSTRUMENTED=1 (fuzz/ and the sanitizer builds) drops the static stdlib
// and `-z defs`: an instrumented library takes its sanitizer runtime from the
// executable that loads it.
let instrumented = Context.environment["RECEIPT_INSTRUMENTED"] == "1"
let embeddableLinkerFlags: [String] = (instrumented ? [] : ["-static-stdlib", "-Xlinker", "-z", "-Xlinker", "defs"]) + [
    "-use-ld=lld",
    "-Xlinker", "--version-script=\(Context.packageDirectory)/Include/receipt.map",
    "-Xlinker", "-soname=libreceipt.so.1",
]

/// The server, the CLI and the App Store Server API client need packages the core does not.
/// They sit behind the `Server` trait, off unless asked (`make` asks: `swift build --traits
/// Server`), so that a Swift program depending on ReceiptCore resolves none of them.
let server: TargetDependencyCondition? = .when(traits: ["Server"])

let package = Package(
    name: "libreceipt",
    products: [
        .library(name: "ReceiptCore", targets: ["ReceiptCore"]),
        .library(name: "receipt", type: .dynamic, targets: ["CReceipt"]),
        // The App Store Server API over AsyncHTTPClient, for Swift servers (never in libreceipt.so).
        .library(name: "ReceiptServerAPIClient", targets: ["ReceiptServerAPIClient"]),
        .executable(name: "receipt-cli", targets: ["ReceiptCLI"]),
    ],
    traits: [
        .trait(name: "Server", description: "receipt serve, the receipt CLI and ReceiptServerAPIClient, with their packages"),
        .default(enabledTraits: []),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        // `receipt serve` only (the ReceiptServer target): `make lib` never compiles them. Hummingbird's
        // default traits would add swift-configuration and full Foundation, which the server does not use.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.0", traits: []),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.0"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        // The store of `receipt serve` (ReceiptServer only): SQLite, compiled in from sqlite-nio's own copy.
        .package(url: "https://github.com/vapor/sqlite-nio", from: "1.13.0"),
        // …and PostgreSQL, for several servers on one database.
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.0"),
        // TLS to PostgreSQL (sslmode, sslrootcert): postgres-nio's own TLS library.
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.36.0"),
        // ReceiptServerAPIClient only (and the CLI's `receipt api`).
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
    ],
    targets: [
        .systemLibrary(name: "COpenSSL", pkgConfig: "libcrypto",
                       providers: [.apt(["libssl-dev"])]),
        .target(name: "ReceiptCore", dependencies: ["COpenSSL"]),
        // Include/receipt.h as a header-only module: CReceipt implements it with
        // @c @implementation, so any drift between header and Swift fails the build.
        .target(name: "ReceiptHeader", path: "Include", exclude: ["receipt.map", "receipt.pc.in"],
                publicHeadersPath: "."),
        .target(name: "CReceipt", dependencies: ["ReceiptCore", "ReceiptHeader"],
                // The ABI layer implements the opt-in App Store tier of receipt.h too.
                swiftSettings: [.enableExperimentalFeature("CImplementation"),
                                .unsafeFlags(["-Xcc", "-DRECEIPT_APPSTORE_PROTOCOL", "-Xcc", "-DRECEIPT_SERVER_API"])],
                linkerSettings: [.unsafeFlags(embeddableLinkerFlags)]),
        // Named apart from the `receipt` library product: SwiftPM warns every dependent
        // build when a target and a product of another kind share a name.
        // The HTTP server of `receipt serve`: routing, limits, metrics and shutdown around the
        // core's VerifyReceiptEndpoint and VerdictEndpoint. Linked into the CLI, never into libreceipt.so.
        // The Swift runtime's enqueue hook, which `receipt serve` sets (ReceiptServer.installEnqueueHook).
        .target(name: "CConcurrencyHook"),
        // glibc's mallopt, which `receipt serve` sets (ServerAllocator).
        .target(name: "CGlibcMalloc"),
        .target(name: "ReceiptServer", dependencies: [
            "ReceiptCore",
            "CConcurrencyHook",
            "CGlibcMalloc",
            "ReceiptServerAPIClient",  // its RevocationTransport asks OCSP (AsyncHTTPClient)
            .product(name: "Hummingbird", package: "hummingbird", condition: server),
            .product(name: "HummingbirdCore", package: "hummingbird", condition: server),
            .product(name: "Logging", package: "swift-log", condition: server),
            .product(name: "Metrics", package: "swift-metrics", condition: server),
            .product(name: "Prometheus", package: "swift-prometheus", condition: server),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle", condition: server),
            .product(name: "UnixSignals", package: "swift-service-lifecycle", condition: server),
            .product(name: "SQLiteNIO", package: "sqlite-nio", condition: server),
            .product(name: "PostgresNIO", package: "postgres-nio", condition: server),
            .product(name: "NIOSSL", package: "swift-nio-ssl", condition: server),
        ]),
        // The transport of ReceiptCore's ServerAPIExchange; nothing of the API's rules lives here.
        .target(name: "ReceiptServerAPIClient", dependencies: [
            "ReceiptCore",
            .product(name: "AsyncHTTPClient", package: "async-http-client", condition: server),
        ]),
        .executableTarget(name: "ReceiptCLI", dependencies: [
            "ReceiptCore",
            "ReceiptServer",
            "ReceiptServerAPIClient",
            .product(name: "ArgumentParser", package: "swift-argument-parser", condition: server),
        ], path: "Sources/receipt"),
        .executableTarget(name: "print-receipt-example", dependencies: ["ReceiptCore"], path: "examples/swift"),
        .executableTarget(name: "verify-jws-example", dependencies: ["ReceiptCore"], path: "examples/swift-jws"),
        .testTarget(name: "ReceiptCoreTests", dependencies: ["ReceiptCore"]),
        .testTarget(name: "ReceiptServerAPIClientTests", dependencies: ["ReceiptCore", "ReceiptServerAPIClient"]),
    ]
)
