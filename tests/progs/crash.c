/* A crash a few calls away from its cause: make_record() returns a pointer
 * that lookup() later dereferences after free_record() freed it and
 * clobber() overwrote the pointer field. */
#include <stdlib.h>
#include <string.h>

struct record {
	int id;
	int *value;
};

static struct record *__attribute__((noinline)) make_record(int id)
{
	struct record *r = malloc(sizeof(*r));

	r->id = id;
	r->value = malloc(sizeof(int));
	*r->value = id * 10;
	return r;
}

static void __attribute__((noinline)) clobber(struct record *r)
{
	r->value = (int *) 0x10;	/* the bad pointer is produced here */
}

static int __attribute__((noinline)) lookup(struct record *r)
{
	return *r->value;		/* and used here: SIGSEGV */
}

int main(void)
{
	struct record *r = make_record(4);
	int v = lookup(r);

	clobber(r);
	v += lookup(r);
	return v;
}
