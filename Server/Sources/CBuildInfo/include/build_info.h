#ifndef RECEIPT_BUILD_INFO_H
#define RECEIPT_BUILD_INFO_H

/* The commit `receipt` was built from, as `make` stamped it (scripts/stamp-commit.sh): forty hex
 * digits, with "-modified" when the tree held changes not committed; "unknown" for a build that
 * was not stamped (no git, or `swift build` run by hand). Static storage. */
const char *receipt_build_commit(void);

#endif
