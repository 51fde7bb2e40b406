#ifndef RECEIPT_GLIBC_MALLOC_H
#define RECEIPT_GLIBC_MALLOC_H

/* glibc's allocator settings, which Swift's Glibc module leaves out (malloc.h). For `receipt
 * serve` (ServerAllocator), never for libreceipt.so: a program keeps its allocator's settings. */
#include <malloc.h>

/* mallopt(M_TRIM_THRESHOLD, bytes): 1 when set, 0 when refused. */
static inline int glibc_set_trim_threshold(int bytes) { return mallopt(M_TRIM_THRESHOLD, bytes); }

#endif
