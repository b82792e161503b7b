/* ptrr-unwind.so, the gdb JIT-reader unwinder (plugin/jit-reader/),
 * loaded with dlopen as gdb loads it and driven through fake gdb
 * callbacks: a target_read serving an unwind range built here (header
 * and frames as plugin/unwind_abi.h lays them out), a reg_get answering
 * the registers of the frame being unwound, a reg_set recording what
 * the reader gives the caller frame.
 *
 * Usage: test-unwind PATH-OF-ptrr-unwind.so (tests/unwind-unit.sh).
 */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include <gdb/jit-reader.h>

#include "unwind_abi.h"
#include "test.h"

#define DWARF_RSP 7
#define DWARF_RIP 16
#define NREGS 17

/* The target gdb would read from: the unwind range's bytes. */
static uint8_t *range;
static size_t range_len;
static int read_fails;		/* every read fails */
static int reads;		/* reads served */

/* The frame being unwound, as gdb's reg_get would answer for it. */
static struct {
	int defined[NREGS];
	int size[NREGS];
	uint64_t value[NREGS];
} in;

/* What the reader set for the caller frame. */
static struct {
	int set[NREGS];
	uint64_t value[NREGS];
} out;

static struct gdb_reader_funcs *reader;

/* gdb's target_read over the fake range: fails outside it, as a remote
 * target fails a read it cannot answer in full. */
static enum gdb_status fake_read(GDB_CORE_ADDR addr, void *buf, int len)
{
	if (read_fails || len < 0 || addr < PTRR_UNWIND_ADDR ||
	    addr - PTRR_UNWIND_ADDR > range_len ||
	    (size_t) len > range_len - (addr - PTRR_UNWIND_ADDR))
		return GDB_FAIL;
	memcpy(buf, range + (addr - PTRR_UNWIND_ADDR), (size_t) len);
	reads++;
	return GDB_SUCCESS;
}

/* Frees a value fake_reg_get made. */
static void fake_free(struct gdb_reg_value *v)
{
	free(v);
}

/* gdb's reg_get: a value always, defined or not. */
static struct gdb_reg_value *fake_reg_get(struct gdb_unwind_callbacks *cb,
					  int regnum)
{
	struct gdb_reg_value *v = calloc(1, sizeof(*v) + 8);

	(void) cb;
	v->size = 8;
	v->free = fake_free;
	if (regnum >= 0 && regnum < NREGS) {
		v->defined = in.defined[regnum];
		v->size = in.size[regnum] ? in.size[regnum] : 8;
		memcpy(v->value, &in.value[regnum], 8);
	}
	return v;
}

/* gdb's reg_set: records the value and frees it, as gdb does. */
static void fake_reg_set(struct gdb_unwind_callbacks *cb, int regnum,
			 struct gdb_reg_value *v)
{
	(void) cb;
	CHECK(regnum >= 0 && regnum < NREGS);
	CHECK(v->defined && v->size == 8);
	if (regnum >= 0 && regnum < NREGS) {
		out.set[regnum] = 1;
		memcpy(&out.value[regnum], v->value, 8);
	}
	v->free(v);
}

static struct gdb_unwind_callbacks callbacks = {
	.reg_get = fake_reg_get,
	.reg_set = fake_reg_set,
	.target_read = fake_read,
};

/* The stack address the server gives frame @k: a CFA, growing outward
 * (the reader takes it as it comes, proven or synthetic). */
static uint64_t sp_of(uint32_t k)
{
	return 0x7ffffffd0000ull + 0x100ull * k;
}

/* Fills the range with a header saying @nframes frames of @frame_size
 * bytes and @count frames: frame k has pc 0x1000 + k, function
 * 0x2000 + k, level count - 1 - k, instance 10 + k and stack address
 * sp_of(k) (as much of it as a record of @frame_size bytes holds). */
static void serve(uint32_t nframes, uint32_t frame_size, uint32_t count,
		  uint64_t position)
{
	struct ptrr_unwind_header h = {
		.magic = PTRR_UNWIND_MAGIC, .tid = 42, .position = position,
		.nframes = nframes, .frame_size = frame_size,
	};

	free(range);
	range_len = sizeof(h) + (size_t) count * frame_size;
	range = calloc(1, range_len);
	memcpy(range, &h, sizeof(h));
	for (uint32_t k = 0; k < count; k++) {
		struct ptrr_unwind_frame f = {
			.pc = 0x1000 + k, .func = 0x2000 + k,
			.level = (int32_t) (count - 1 - k), .instance = 10 + k,
			.sp = sp_of(k), .flags = PTRR_UNWIND_CFA,
		};

		memcpy(range + sizeof(h) + (size_t) k * frame_size, &f,
		       frame_size < sizeof(f) ? frame_size : sizeof(f));
	}
	read_fails = 0;
}

/* The header served, to change in place. */
static struct ptrr_unwind_header *served(void)
{
	return (struct ptrr_unwind_header *) range;
}

/* Makes the frame being unwound have @rip, and @rsp if @have_rsp. */
static void frame(uint64_t rip, int have_rsp, uint64_t rsp)
{
	memset(&in, 0, sizeof(in));
	in.defined[DWARF_RIP] = 1;
	in.value[DWARF_RIP] = rip;
	in.defined[DWARF_RSP] = have_rsp;
	in.value[DWARF_RSP] = have_rsp ? rsp : 0;
}

/* Calls the reader's unwind; clears what was set before. */
static enum gdb_status unwind(void)
{
	memset(&out, 0, sizeof(out));
	return reader->unwind(reader, &callbacks);
}

/* Calls get_frame_id as gdb does: reg_set NULL. */
static struct gdb_frame_id frame_id(void)
{
	struct gdb_unwind_callbacks cb = callbacks;

	cb.reg_set = NULL;
	return reader->get_frame_id(reader, &cb);
}

/* Checks that the frame being unwound is frame @k of the stack served
 * by serve(.., @count, ..): its caller gets frame k + 1's pc (pc 0 for
 * the outermost) and, as rsp, frame k's stack address (a caller's rsp
 * after the return is its callee's CFA); its id is frame k's function
 * and stack address. */
static void check_frame(uint32_t k, uint32_t count)
{
	struct gdb_frame_id id;

	CHECK(unwind() == GDB_SUCCESS);
	CHECK(out.set[DWARF_RIP] && out.set[DWARF_RSP]);
	CHECK_EQ_U64(out.value[DWARF_RIP], k + 1 < count ? 0x1000 + k + 1 : 0);
	CHECK_EQ_U64(out.value[DWARF_RSP], sp_of(k));
	for (int r = 0; r < NREGS; r++)
		CHECK(!out.set[r] || r == DWARF_RIP || r == DWARF_RSP);
	id = frame_id();
	CHECK_EQ_U64(id.code_address, 0x2000 + k);
	CHECK_EQ_U64(id.stack_address, sp_of(k));
}

/* Checks that the reader declines the frame being unwound and sets
 * nothing. */
static void check_declines(void)
{
	CHECK(unwind() == GDB_FAIL);
	for (int r = 0; r < NREGS; r++)
		CHECK(!out.set[r]);
}

/* Frame 0: the pc is the stack's first, rsp unavailable (replay) or a
 * real stack address. */
static void test_frame0(void)
{
	serve(3, sizeof(struct ptrr_unwind_frame), 3, 100);
	frame(0x1000, 0, 0);
	check_frame(0, 3);
	frame(0x1000, 1, 0x7ffffffde000);
	check_frame(0, 3);
}

/* A whole backtrace as gdb walks it: each outer frame known by the rsp
 * the reader gave it; ids grow toward outer frames. */
static void test_walk(void)
{
	uint64_t last = 0;

	serve(4, sizeof(struct ptrr_unwind_frame), 4, 100);
	frame(0x1000, 0, 0);
	for (uint32_t k = 0; k < 4; k++) {
		uint64_t rip = out.value[DWARF_RIP], rsp = out.value[DWARF_RSP];

		if (k > 0)
			frame(rip, 1, rsp);
		check_frame(k, 4);
		CHECK(frame_id().stack_address > last);
		last = frame_id().stack_address;
	}
}

/* The outermost frame known: a stack of one frame, and the last of a
 * longer one reached directly. */
static void test_outermost(void)
{
	serve(1, sizeof(struct ptrr_unwind_frame), 1, 7);
	frame(0x1000, 0, 0);
	check_frame(0, 1);
	serve(3, sizeof(struct ptrr_unwind_frame), 3, 7);
	frame(0x1002, 1, sp_of(1));
	check_frame(2, 3);
}

/* Beyond the outermost frame: the frame at pc 0 whose rsp is the
 * outermost frame's stack address is ours, at the stack top, and so is
 * its caller, one address up, and so on. */
static void test_beyond(void)
{
	struct gdb_frame_id id;

	serve(2, sizeof(struct ptrr_unwind_frame), 2, 7);
	frame(0, 1, sp_of(1));
	CHECK(unwind() == GDB_SUCCESS);
	CHECK_EQ_U64(out.value[DWARF_RIP], 0);
	CHECK_EQ_U64(out.value[DWARF_RSP], PTRR_UNWIND_STACK_TOP);
	id = frame_id();
	CHECK_EQ_U64(id.code_address, 0);
	CHECK_EQ_U64(id.stack_address, PTRR_UNWIND_STACK_TOP);
	for (uint64_t j = 0; j < 3; j++) {
		frame(0, 1, PTRR_UNWIND_STACK_TOP + j);
		CHECK(unwind() == GDB_SUCCESS);
		CHECK(out.set[DWARF_RIP] && out.set[DWARF_RSP]);
		CHECK_EQ_U64(out.value[DWARF_RIP], 0);
		CHECK_EQ_U64(out.value[DWARF_RSP],
			     PTRR_UNWIND_STACK_TOP + j + 1);
		id = frame_id();
		CHECK_EQ_U64(id.code_address, 0);
		CHECK_EQ_U64(id.stack_address, PTRR_UNWIND_STACK_TOP + j + 1);
	}
	/* Not replaying: not ours either. */
	serve(0, sizeof(struct ptrr_unwind_frame), 0, 7);
	frame(0, 1, PTRR_UNWIND_STACK_TOP);
	check_declines();
}

/* The stack addresses are the server's, proven or synthetic (a low one
 * under a proven frame, high ones above): the reader gives each frame
 * its own as id and as its caller's rsp, and knows the callers by them. */
static void test_server_sps(void)
{
	const uint64_t sps[3] = {
		PTRR_UNWIND_LOW_TOP - PTRR_UNWIND_LOW_STEP,
		0x7ffffffde000ull,
		PTRR_UNWIND_STACK_TOP - (1ull << 32) + 12,
	};
	struct ptrr_unwind_frame *f;

	serve(3, sizeof(struct ptrr_unwind_frame), 3, 1);
	f = (struct ptrr_unwind_frame *) (range + sizeof(*served()));
	for (int k = 0; k < 3; k++)
		f[k].sp = sps[k];
	frame(0x1000, 0, 0);
	for (uint32_t k = 0; k < 3; k++) {
		if (k > 0)
			frame(0x1000 + k, 1, sps[k - 1]);
		CHECK(unwind() == GDB_SUCCESS);
		CHECK_EQ_U64(out.value[DWARF_RSP], sps[k]);
		CHECK_EQ_U64(frame_id().stack_address, sps[k]);
		CHECK_EQ_U64(frame_id().code_address, 0x2000 + k);
	}
}

/* A frame whose CFA the server cannot prove (PTRR_UNWIND_NOBASE) is
 * the last: its callee gives it its pc and no rsp, and the reader
 * declines it, so that gdb unwinds it without a frame address.  Frame
 * 0 so marked is declined too. */
static void test_nobase(void)
{
	struct ptrr_unwind_frame *f;

	serve(3, sizeof(struct ptrr_unwind_frame), 3, 5);
	f = (struct ptrr_unwind_frame *) (range + sizeof(*served()));
	f[2].flags = PTRR_UNWIND_NOBASE;
	frame(0x1000, 0, 0);
	check_frame(0, 3);
	frame(0x1001, 1, sp_of(0));
	CHECK(unwind() == GDB_SUCCESS);
	CHECK(out.set[DWARF_RIP] && !out.set[DWARF_RSP]);
	CHECK_EQ_U64(out.value[DWARF_RIP], 0x1002);
	CHECK_EQ_U64(frame_id().stack_address, sp_of(1));
	frame(0x1002, 0, 0);
	check_declines();

	serve(2, sizeof(struct ptrr_unwind_frame), 2, 6);
	f = (struct ptrr_unwind_frame *) (range + sizeof(*served()));
	f[0].flags = PTRR_UNWIND_NOBASE;
	frame(0x1000, 0, 0);
	check_declines();
}

/* Not replaying (nframes 0), a wrong magic, a frame record too small
 * or absurdly large, more frames than the range holds: declined. */
static void test_bad_headers(void)
{
	serve(0, sizeof(struct ptrr_unwind_frame), 0, 1);
	frame(0x1000, 0, 0);
	check_declines();
	serve(3, sizeof(struct ptrr_unwind_frame), 3, 1);
	served()->magic ^= 1;
	check_declines();
	serve(3, sizeof(struct ptrr_unwind_frame) - 8, 3, 1);
	check_declines();
	serve(3, 1u << 20, 0, 1);
	check_declines();
	serve(PTRR_UNWIND_MAX_FRAMES + 1, sizeof(struct ptrr_unwind_frame),
	      3, 1);
	check_declines();
	serve(UINT32_MAX, sizeof(struct ptrr_unwind_frame), 3, 1);
	check_declines();
	/* Frames promised that cannot be read (the server's answer ends
	 * early): declined, and no stale frames from an earlier read. */
	serve(3, sizeof(struct ptrr_unwind_frame), 3, 1);
	check_frame(0, 3);
	serve(5, sizeof(struct ptrr_unwind_frame), 3, 1);
	check_declines();
	frame(0x1001, 1, sp_of(0));
	check_declines();
}

/* The range cannot be read at all (a target without ptrr's server):
 * declined, for frame 0 and for a frame that looks like an outer one. */
static void test_read_fails(void)
{
	serve(3, sizeof(struct ptrr_unwind_frame), 3, 1);
	read_fails = 1;
	frame(0x1000, 0, 0);
	check_declines();
	frame(0x1001, 1, sp_of(0));
	check_declines();
	free(range);
	range = NULL;
	range_len = 0;
	frame(0x1000, 0, 0);
	check_declines();
}

/* Frames not ours: another pc with no rsp or a real rsp, an rsp in our
 * range naming no frame of the stack, no rip at all, registers of the
 * wrong size. */
static void test_not_ours(void)
{
	serve(3, sizeof(struct ptrr_unwind_frame), 3, 1);
	frame(0x1001, 0, 0);
	check_declines();
	frame(0x4000, 1, 0x7ffffffde000);
	check_declines();
	frame(0x1001, 1, sp_of(0) + 8);
	check_declines();
	frame(0x1000, 0, 0);
	in.defined[DWARF_RIP] = 0;
	check_declines();
	frame(0x1000, 0, 0);
	in.size[DWARF_RIP] = 4;
	check_declines();
	/* Frame 0's own rsp (below its CFA) is no outer frame's. */
	frame(0x1000, 1, sp_of(0) - 0x20);
	check_frame(0, 3);
}

/* The frames read for frame 0 serve the outer frames while the header
 * stays the same; a new header (another position) is read afresh. */
static void test_cache(void)
{
	struct ptrr_unwind_frame *f1;

	serve(3, sizeof(struct ptrr_unwind_frame), 3, 1);
	frame(0x1000, 0, 0);
	check_frame(0, 3);
	f1 = (struct ptrr_unwind_frame *) (range + sizeof(*served())) + 1;
	f1->func = 0x9999;
	frame(0x1001, 1, sp_of(0));
	reads = 0;
	CHECK(unwind() == GDB_SUCCESS);
	CHECK(reads == 1);		/* the header only */
	CHECK_EQ_U64(frame_id().code_address, 0x2001);
	served()->position = 2;
	CHECK_EQ_U64(frame_id().code_address, 0x9999);
	/* Frame 0 is always read afresh: the next stop may have the same
	 * header and another stack (a live history grown meanwhile). */
	frame(0x1000, 0, 0);
	f1->func = 0x2001;
	reads = 0;
	check_frame(0, 3);
	CHECK(reads == 4);		/* header and frames, twice */
}

/* A later layout with longer frame records: the known fields are read
 * from the start of each. */
static void test_longer_records(void)
{
	serve(3, sizeof(struct ptrr_unwind_frame) + 16, 3, 1);
	frame(0x1000, 0, 0);
	check_frame(0, 3);
	frame(0x1001, 1, sp_of(0));
	check_frame(1, 3);
}

/* A stack deeper than the reader keeps: it ends at the deepest kept
 * frame, whose caller is at pc 0. */
static void test_deep(void)
{
	uint32_t count = 5000, kept = 4096;

	serve(count, sizeof(struct ptrr_unwind_frame), count, 1);
	frame(0x1000, 0, 0);
	check_frame(0, count);
	frame(0x1000 + kept - 1, 1, sp_of(kept - 2));
	CHECK(unwind() == GDB_SUCCESS);
	CHECK_EQ_U64(out.value[DWARF_RIP], 0);
	CHECK_EQ_U64(out.value[DWARF_RSP], sp_of(kept - 1));
}

/* What gdb finds in the module: the license mark, the entry point, a
 * reader of the interface's version with every callback. */
static int load(const char *path)
{
	void *so = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	struct gdb_reader_funcs *(*init)(void);

	if (!so) {
		fprintf(stderr, "dlopen %s: %s\n", path, dlerror());
		return 0;
	}
	CHECK(dlsym(so, "plugin_is_GPL_compatible") != NULL);
	*(void **) &init = dlsym(so, "gdb_init_reader");
	CHECK(init != NULL);
	if (!init)
		return 0;
	reader = init();
	CHECK(reader != NULL);
	if (!reader)
		return 0;
	CHECK(reader->reader_version == GDB_READER_INTERFACE_VERSION);
	CHECK(reader->read && reader->unwind && reader->get_frame_id &&
	      reader->destroy);
	return reader->read && reader->unwind && reader->get_frame_id &&
	       reader->destroy;
}

/* The read callback is there and describes nothing. */
static void test_read_callback(void)
{
	uint8_t mem[16] = { 0 };

	CHECK(reader->read(reader, NULL, mem, sizeof(mem)) == GDB_FAIL);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: test-unwind PATH/ptrr-unwind.so\n");
		return 2;
	}
	if (!load(argv[1]))
		return 1;
	RUN(test_read_callback);
	RUN(test_frame0);
	RUN(test_walk);
	RUN(test_outermost);
	RUN(test_beyond);
	RUN(test_server_sps);
	RUN(test_nobase);
	RUN(test_bad_headers);
	RUN(test_read_fails);
	RUN(test_not_ours);
	RUN(test_cache);
	RUN(test_longer_records);
	RUN(test_deep);
	reader->destroy(reader);
	free(range);
	return test_summary();
}
