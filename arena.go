//go:build linux

package main

/*
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// One malloc arena for every thread, set before the Go runtime starts
// any: glibc gives each thread that calls malloc an arena of its own
// (64 MB of address space, its first pages touched), and a cgo binary's
// runtime starts several threads. docs/bench.md (Start-up) has the
// figures.
static void __attribute__((constructor)) ibtool_one_malloc_arena(void) {
#ifdef M_ARENA_MAX
	mallopt(M_ARENA_MAX, 1);
#endif
}

static pthread_barrier_t ibtool_arena_barrier;

static void *ibtool_arena_thread(void *arg) {
	void *p = malloc(64);
	pthread_barrier_wait(&ibtool_arena_barrier);
	free(p);
	return NULL;
}

// ibtool_malloc_arenas has n threads malloc at once and returns how many
// arenas malloc_info then lists, or -1 when it cannot tell.
static int ibtool_malloc_arenas(int n) {
	pthread_t t[16];
	int i, started = 0, count = 0;
	if (n > 16)
		n = 16;
	if (pthread_barrier_init(&ibtool_arena_barrier, NULL, n) != 0)
		return -1;
	for (i = 0; i < n; i++)
		if (pthread_create(&t[i], NULL, ibtool_arena_thread, NULL) == 0)
			started++;
	for (i = 0; i < started; i++)
		pthread_join(t[i], NULL);
	pthread_barrier_destroy(&ibtool_arena_barrier);
	if (started != n)
		return -1;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (f == NULL)
		return -1;
	malloc_info(0, f);
	fclose(f);
	for (char *s = buf; (s = strstr(s, "<heap nr=")) != NULL; s++)
		count++;
	free(buf);
	return count;
}
*/
import "C"

// mallocArenas has n C threads malloc at the same time and returns how
// many malloc arenas the process then has (-1 when it cannot tell): 1
// when the constructor above took effect.
func mallocArenas(n int) int {
	return int(C.ibtool_malloc_arenas(C.int(n)))
}
