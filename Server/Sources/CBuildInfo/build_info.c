#include "build_info.h"

/* build_commit.h is made by `make` and never committed (.gitignore): a C file, because its
 * macro is the only way a value from the build reaches the program without a file beside it. */
#if __has_include("build_commit.h")
#include "build_commit.h"
#endif
#ifndef RECEIPT_BUILD_COMMIT
#define RECEIPT_BUILD_COMMIT "unknown"
#endif

const char *receipt_build_commit(void) { return RECEIPT_BUILD_COMMIT; }
