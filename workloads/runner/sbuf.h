/* SPDX-License-Identifier: GPL-2.0 */
/* A growable string buffer with just enough JSON to write the runner's records. */
#ifndef AMPKIT_SBUF_H
#define AMPKIT_SBUF_H

#include <stddef.h>
#include <stdint.h>

struct sbuf {
	char *data;
	size_t len, cap;
};

void sb_init(struct sbuf *sb);
void sb_free(struct sbuf *sb);
void sb_printf(struct sbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Appends s as a JSON string literal, quotes included. */
void sb_json_str(struct sbuf *sb, const char *s);
void sb_json_strn(struct sbuf *sb, const char *s, size_t n);
/* Reads a whole file (sysfs, procfs, tracefs); NULL if it cannot be read. Trailing newline dropped. */
char *read_text(const char *path);
/* Writes text to a file in one write() (a sysctl takes one); 0 or the errno of the open or write. */
int write_text(const char *path, const char *text);
/* Writes the buffer to fd in one write() where the kernel allows, so lines stay whole. */
int sb_write(const struct sbuf *sb, int fd);

#endif
