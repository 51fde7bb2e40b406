/* Only the inline function in include/glibc_malloc.h: SwiftPM wants a source in a C target. */
#include "glibc_malloc.h"
