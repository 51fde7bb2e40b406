#if canImport(Glibc)
import Glibc
#endif

/// A growable array of plain values in one malloc'd buffer, for the parse's hot
/// loop and the receipt's tables: no reference count to update atomically, no
/// uniqueness check per write, no object header. It is ~Copyable, so exactly one
/// owner frees it. Indices are checked: a bug traps instead of reading astray.
struct PlainVector<Element: BitwiseCopyable>: ~Copyable {
    private var base: UnsafeMutablePointer<Element>?
    private(set) var count = 0
    private var capacity = 0

    init() {}

    deinit { free(base) }

    /// Makes room for `total` elements in all; false when memory is exhausted.
    mutating func reserve(_ total: Int) -> Bool {
        guard total > capacity else { return true }
        let (bytes, overflow) = total.multipliedReportingOverflow(by: MemoryLayout<Element>.stride)
        guard !overflow, let grown = realloc(base, bytes) else { return false }
        base = grown.assumingMemoryBound(to: Element.self)
        capacity = total
        return true
    }

    /// False when memory is exhausted.
    @inline(__always)
    mutating func append(_ element: Element) -> Bool {
        if count == capacity && !reserve(Swift.max(8, capacity &* 2)) { return false }
        base.unsafelyUnwrapped[count] = element
        count &+= 1
        return true
    }

    /// Appends `element` `repeated` times; false when memory is exhausted.
    mutating func append(_ element: Element, repeated: Int) -> Bool {
        if count + repeated > capacity && !reserve(Swift.max(count + repeated, capacity &* 2)) { return false }
        (base.unsafelyUnwrapped + count).initialize(repeating: element, count: repeated)
        count += repeated
        return true
    }

    subscript(index: Int) -> Element {
        @inline(__always) get {
            precondition(index >= 0 && index < count, "PlainVector index out of range")
            return base.unsafelyUnwrapped[index]
        }
        @inline(__always) set {
            precondition(index >= 0 && index < count, "PlainVector index out of range")
            base.unsafelyUnwrapped[index] = newValue
        }
    }

    /// The elements, borrowed: valid while this vector lives and is not appended to.
    var elements: UnsafeBufferPointer<Element> { UnsafeBufferPointer(start: base, count: count) }
}
