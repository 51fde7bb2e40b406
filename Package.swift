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

let package = Package(
    name: "libreceipt",
    products: [
        .library(name: "ReceiptCore", targets: ["ReceiptCore"]),
        .library(name: "receipt", type: .dynamic, targets: ["CReceipt"]),
    ],
    // None: a Swift program depending on ReceiptCore resolves nothing else. The server, the CLI and
    // the transports, with their packages, are the package in Server/.
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
        .executableTarget(name: "print-receipt-example", dependencies: ["ReceiptCore"], path: "examples/swift"),
        .executableTarget(name: "verify-jws-example", dependencies: ["ReceiptCore"], path: "examples/swift-jws"),
        .testTarget(name: "ReceiptCoreTests", dependencies: ["ReceiptCore"]),
    ]
)
