#if canImport(Glibc)
import Glibc
#endif

/// The machine's cores, read without Foundation: the server's default workers, SQLite's readers.
enum Processors {
    static var online: Int {
        let count = sysconf(Int32(_SC_NPROCESSORS_ONLN))
        return count > 0 ? count : 1
    }
}
