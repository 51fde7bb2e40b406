/* Reading the files Tests/c's Makefile makes, for the cmocka test files. */
#ifndef RECEIPT_TEST_FILES_H
#define RECEIPT_TEST_FILES_H
#include <stdio.h>
#include <stdlib.h>

/* The whole file, NUL-terminated (free it); with trim_newlines, without the
 * line breaks a text file (a PEM, a token) ends with, never for DER. */
static char *read_whole_file(const char *path, size_t *length, int trim_newlines) {
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *data = calloc(1, (size_t)size + 1);
    size_t read = fread(data, 1, (size_t)size, f);
    fclose(f);
    while (trim_newlines && read > 0 && (data[read - 1] == '\n' || data[read - 1] == '\r')) data[--read] = 0;
    if (length) *length = read;
    return data;
}
#endif
