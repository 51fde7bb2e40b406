#ifndef RECEIPT_CONCURRENCY_HOOK_H
#define RECEIPT_CONCURRENCY_HOOK_H

/* The Swift runtime's hook through which every job for the global concurrent executor
 * passes (swift/Runtime/Concurrency.h): a thin function (job, original enqueue), or NULL.
 * Declared here for `receipt serve`, which sets it to run Swift concurrency on its event
 * loops. SwiftNIO finds the hook with dlsym, which cannot see it once the runtime is linked
 * statically (the toolchain links its static libraries with --exclude-libs ALL); the linker
 * resolves this declaration in either case. */
extern void *swift_task_enqueueGlobal_hook;

/* Where the hook is: Swift 6 refuses to touch a C global variable directly. */
static inline void **concurrency_enqueue_global_hook(void) { return &swift_task_enqueueGlobal_hook; }

#endif
