/*
 * measure.c prints layout.h's table, a "name<TAB>value" line each, over
 * package verbs' ibt_verbs_abi.h, or with IBT_REAL over libibverbs'
 * <infiniband/verbs.h>; without that header it prints nothing and exits
 * 3. abi_test.go builds and runs it with the C compiler cgo uses.
 */
#include <stddef.h>
#include <stdio.h>

#ifdef IBT_REAL
#if !__has_include(<infiniband/verbs.h>)
int main(void) { return 3; }
#define IBT_NO_HEADER
#else
#include <infiniband/verbs.h>
#endif
#else
#include "ibt_verbs_abi.h"
#endif

#ifndef IBT_NO_HEADER
struct ibt_entry {
	const char *name;
	long long value;
};

#include "layout.h"

int main(void)
{
	size_t i;

	for (i = 0; i < sizeof(ibt_table) / sizeof(ibt_table[0]); i++)
		printf("%s\t%lld\n", ibt_table[i].name, ibt_table[i].value);
	return 0;
}
#endif
