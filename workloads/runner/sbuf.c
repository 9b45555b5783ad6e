// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE
#include "sbuf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void sb_init(struct sbuf *sb)
{
	sb->cap = 256;
	sb->len = 0;
	sb->data = malloc(sb->cap);
	if (!sb->data)
		abort();
	sb->data[0] = '\0';
}

void sb_free(struct sbuf *sb)
{
	free(sb->data);
	sb->data = NULL;
	sb->len = sb->cap = 0;
}

static void sb_reserve(struct sbuf *sb, size_t more)
{
	if (sb->len + more + 1 <= sb->cap)
		return;
	while (sb->len + more + 1 > sb->cap)
		sb->cap *= 2;
	sb->data = realloc(sb->data, sb->cap);
	if (!sb->data)
		abort();
}

void sb_printf(struct sbuf *sb, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	sb_reserve(sb, (size_t)n);
	va_start(ap, fmt);
	vsnprintf(sb->data + sb->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	sb->len += (size_t)n;
}

void sb_json_strn(struct sbuf *sb, const char *s, size_t n)
{
	size_t i;

	sb_printf(sb, "\"");
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '"' || c == '\\')
			sb_printf(sb, "\\%c", c);
		else if (c == '\n')
			sb_printf(sb, "\\n");
		else if (c == '\t')
			sb_printf(sb, "\\t");
		else if (c < 0x20 || c >= 0x7f)	/* keep the console line ASCII */
			sb_printf(sb, "\\u%04x", c);
		else
			sb_printf(sb, "%c", c);
	}
	sb_printf(sb, "\"");
}

void sb_json_str(struct sbuf *sb, const char *s)
{
	if (!s)
		sb_printf(sb, "null");
	else
		sb_json_strn(sb, s, strlen(s));
}

int write_text(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), err = 0;

	if (fd < 0)
		return errno;
	if (write(fd, text, strlen(text)) < 0)
		err = errno;
	close(fd);
	return err;
}

char *read_text(const char *path)
{
	struct sbuf sb;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC), err;

	if (fd < 0)
		return NULL;
	sb_init(&sb);
	/* to the end: procfs and tracefs files report no size, and hand out a page a read */
	for (;;) {
		sb_reserve(&sb, 4096);
		n = read(fd, sb.data + sb.len, sb.cap - sb.len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		sb.len += (size_t)n;
	}
	err = errno;
	close(fd);
	if (n < 0) {
		sb_free(&sb);
		errno = err;
		return NULL;
	}
	while (sb.len > 0 && (sb.data[sb.len - 1] == '\n' || sb.data[sb.len - 1] == ' '))
		sb.len--;
	sb.data[sb.len] = '\0';
	return sb.data;
}

int sb_write(const struct sbuf *sb, int fd)
{
	size_t off = 0;

	while (off < sb->len) {
		ssize_t n = write(fd, sb->data + off, sb->len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		off += (size_t)n;
	}
	return 0;
}
