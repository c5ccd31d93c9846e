#include <stdlib.h>
#include <string.h>
#include <errno.h>

#include "ring_buffer.h"

struct ring_buffer {
	unsigned char *data;
	size_t capacity;
	size_t head;
	size_t tail;
	size_t used;
};

struct ring_buffer *rb_create(size_t capacity)
{
	struct ring_buffer *rb;

	if (capacity == 0) {
		errno = EINVAL;
		return NULL;
	}
	rb = calloc(1, sizeof(*rb));
	if (!rb)
		return NULL;
	rb->data = malloc(capacity);
	if (!rb->data) {
		free(rb);
		return NULL;
	}
	rb->capacity = capacity;
	return rb;
}

void rb_destroy(struct ring_buffer *rb)
{
	if (!rb)
		return;
	free(rb->data);
	free(rb);
}

size_t rb_used(const struct ring_buffer *rb)
{
	return rb->used;
}

size_t rb_free(const struct ring_buffer *rb)
{
	return rb->capacity - rb->used;
}

/* Copy up to len bytes in; returns how many were written. */
size_t rb_write(struct ring_buffer *rb, const void *src, size_t len)
{
	const unsigned char *p = src;
	size_t written = 0;

	if (len > rb_free(rb))
		len = rb_free(rb);
	while (written < len) {
		size_t chunk = rb->capacity - rb->tail;

		if (chunk > len - written)
			chunk = len - written;
		memcpy(rb->data + rb->tail, p + written, chunk);
		rb->tail = (rb->tail + chunk) % rb->capacity;
		written += chunk;
	}
	rb->used += written;
	return written;
}

/* Copy up to len bytes out; returns how many were read. */
size_t rb_read(struct ring_buffer *rb, void *dst, size_t len)
{
	unsigned char *p = dst;
	size_t done = 0;

	if (len > rb->used)
		len = rb->used;
	while (done < len) {
		size_t chunk = rb->capacity - rb->head;

		if (chunk > len - done)
			chunk = len - done;
		memcpy(p + done, rb->data + rb->head, chunk);
		rb->head = (rb->head + chunk) % rb->capacity;
		done += chunk;
	}
	rb->used -= done;
	return done;
}

/* Look at the next byte without consuming it; -1 when empty. */
int rb_peek(const struct ring_buffer *rb)
{
	if (rb->used == 0)
		return -1;
	return rb->data[rb->head];
}

void rb_clear(struct ring_buffer *rb)
{
	rb->head = 0;
	rb->tail = 0;
	rb->used = 0;
}

int rb_resize(struct ring_buffer *rb, size_t capacity)
{
	unsigned char *data;
	size_t used = rb->used;

	if (capacity < used) {
		errno = ENOSPC;
		return -1;
	}
	data = malloc(capacity);
	if (!data)
		return -1;
	rb_read(rb, data, used);
	free(rb->data);
	rb->data = data;
	rb->capacity = capacity;
	rb->head = 0;
	rb->tail = used % capacity;
	rb->used = used;
	return 0;
}
