/* Only the declaration in include/concurrency_hook.h: SwiftPM wants a source in a C target. */
#include "concurrency_hook.h"
