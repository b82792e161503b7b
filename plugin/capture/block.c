/* Block stepping: straight-line code runs natively, the branch that
 * ends it is emulated; see stepper.h ("--soft-step=block") and
 * stepper_internal.h.
 *
 * A block is the code from a thread's next instruction up to the first
 * instruction that is not CAP_IC_OTHER (its end, E).  If E is a branch
 * branch.c emulates exactly, an int3 is planted over E (once, in the
 * memory every thread shares; the original byte kept in the breakpoint
 * table) and the thread is continued; at the int3's SIGTRAP every
 * instruction of the block is reported as retired and E is emulated.
 * Any other stop in the middle of a block (a signal, an interrupt, an
 * exit) reports the instructions before the one the thread stopped at.
 * Blocks that end otherwise (a system call, the program's own int3, a
 * far transfer, code that cannot be read or decoded) are single-stepped
 * as in --soft-step=insn.
 *
 * A planted int3 is never lifted while a thread may run into it: a
 * thread that is to execute E itself without running the block (it is
 * single-stepping, or starts a block at E) has E emulated directly.
 * All int3s are taken out before the program can run without us: when
 * the run is over, in a forked child's copy of memory, and while a
 * vfork child (or a clone sharing memory) runs untraced in our memory;
 * they are taken out only once no thread is inside a block ("quiet").
 */
#include <config.h>

#include "capture/branch.h"
#include "capture/stepper_internal.h"
#include "error.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>

/* A block is cut after this many instructions (then single-stepped);
 * its code is read in one go. */
#define BLOCK_MAX_INSNS 256
#define BLOCK_READ 4096

/* Direct emulations in a row before a thread is resumed anyway. */
#define MAX_DIRECT 16

/* ------------------------------------------------------------------ */
/* A hash map from addresses to 64-bit values                         */
/* ------------------------------------------------------------------ */

struct slot {
	uint64_t key;		/* address + 1; 0: empty */
	uint64_t val;
};

struct amap {
	struct slot *slots;
	size_t n, cap;		/* cap: a power of two, or 0 */
};

static size_t slot_of(const struct amap *m, uint64_t key)
{
	uint64_t h = key * 0x9e3779b97f4a7c15ull;

	return (size_t) (h >> 17) & (m->cap - 1);
}

/* The value slot of @addr, or NULL. */
static uint64_t *amap_find(const struct amap *m, uint64_t addr)
{
	if (!m->cap)
		return NULL;
	for (size_t i = slot_of(m, addr + 1);; i = (i + 1) & (m->cap - 1)) {
		if (m->slots[i].key == addr + 1)
			return &m->slots[i].val;
		if (!m->slots[i].key)
			return NULL;
	}
}

static int amap_put(struct amap *m, uint64_t addr, uint64_t val);

/* Doubles the table. */
static int amap_grow(struct amap *m)
{
	struct amap big = { calloc(m->cap ? 2 * m->cap : 256,
				   sizeof(struct slot)), 0,
			    m->cap ? 2 * m->cap : 256 };

	if (!big.slots)
		return ptrr_fail(PTRR_ERR_NOMEM, "out of memory for the "
				 "block cache");
	for (size_t i = 0; i < m->cap; i++)
		if (m->slots[i].key)
			amap_put(&big, m->slots[i].key - 1, m->slots[i].val);
	free(m->slots);
	*m = big;
	return 0;
}

/* Sets @addr to @val. */
static int amap_put(struct amap *m, uint64_t addr, uint64_t val)
{
	uint64_t *v = amap_find(m, addr);
	size_t i;

	if (v) {
		*v = val;
		return 0;
	}
	if (2 * (m->n + 1) > m->cap && amap_grow(m))
		return PTRR_ERR_NOMEM;
	for (i = slot_of(m, addr + 1); m->slots[i].key;
	     i = (i + 1) & (m->cap - 1))
		;
	m->slots[i].key = addr + 1;
	m->slots[i].val = val;
	m->n++;
	return 0;
}

static void amap_clear(struct amap *m)
{
	free(m->slots);
	memset(m, 0, sizeof(*m));
}

/* ------------------------------------------------------------------ */
/* State                                                              */
/* ------------------------------------------------------------------ */

/* One instruction of a block. */
struct blk_insn {
	uint16_t off;		/* from the block's start */
	struct cap_insn insn;
};

struct cap_block {
	uint64_t start, end;	/* end: the address of E */
	bool native;		/* else: single-stepped */
	uint16_t n;		/* instructions, E included */
	uint8_t *code;		/* their original bytes */
	struct blk_insn insn[];
};

/* Breakpoint table values: the original byte and these flags. */
#define BP_PLANTED 0x100u	/* the int3 is in memory now */
#define BP_BANNED 0x200u	/* E is not to be planted for now */

struct cap_blocks {
	struct amap blocks;	/* start -> struct cap_block * */
	struct amap bps;	/* E -> original byte | BP_* */
	struct amap pinned;	/* blocks dropped while a thread ran them */
	size_t planted;		/* BP_PLANTED entries */
	unsigned vforks;	/* vfork children running in our memory */
	bool off;		/* disarmed for good (CLONE_VM child) */
	pid_t *held;		/* children to let go once disarmed */
	size_t nheld, held_alloc;
};

int cap_blk_init(struct cap_stepper *s)
{
	if (!s->block_mode || s->blk)
		return 0;
	s->blk = calloc(1, sizeof(*s->blk));
	return s->blk ? 0 : ptrr_fail(PTRR_ERR_NOMEM, "out of memory");
}

/* Frees the blocks of @m. */
static void free_blocks(struct amap *m)
{
	for (size_t i = 0; i < m->cap; i++)
		if (m->slots[i].key) {
			struct cap_block *k = (struct cap_block *) (uintptr_t)
					      m->slots[i].val;

			free(k->code);
			free(k);
		}
	amap_clear(m);
}

/* Frees every block (no thread is in one). */
static void drop_blocks(struct cap_blocks *b)
{
	free_blocks(&b->blocks);
	free_blocks(&b->pinned);
}

void cap_blk_free(struct cap_stepper *s)
{
	if (!s->blk)
		return;
	drop_blocks(s->blk);
	amap_clear(&s->blk->bps);
	free(s->blk->held);
	free(s->blk);
	s->blk = NULL;
}

void cap_blk_exec(struct cap_stepper *s)
{
	if (!s->blk)
		return;
	for (size_t i = 0; i < s->nthreads; i++)
		s->threads[i]->in_block = false;
	drop_blocks(s->blk);
	amap_clear(&s->blk->bps);	/* the new image has none */
	s->blk->planted = 0;
}

/* True while no block may start: a child runs untraced in our memory,
 * or is about to. */
static bool disarmed(const struct cap_blocks *b)
{
	return b->off || b->vforks || b->nheld;
}

/* ------------------------------------------------------------------ */
/* Memory: what the program would see                                 */
/* ------------------------------------------------------------------ */

bool cap_blk_planted(const struct cap_stepper *s, uint64_t addr)
{
	const uint64_t *v = s->blk ? amap_find(&s->blk->bps, addr) : NULL;

	return v && *v & BP_PLANTED;
}

void cap_blk_mask(const struct cap_stepper *s, uint64_t addr, void *buf,
		  size_t n)
{
	const struct amap *m = s->blk ? &s->blk->bps : NULL;
	uint8_t *p = buf;

	if (!m || !s->blk->planted || !n)
		return;
	if (n <= 64) {
		for (size_t i = 0; i < n; i++) {
			uint64_t *v = amap_find(m, addr + i);

			if (v && *v & BP_PLANTED)
				p[i] = (uint8_t) *v;
		}
		return;
	}
	for (size_t i = 0; i < m->cap; i++) {
		uint64_t a = m->slots[i].key - 1;

		if (m->slots[i].key && m->slots[i].val & BP_PLANTED &&
		    a >= addr && a - addr < n)
			p[a - addr] = (uint8_t) m->slots[i].val;
	}
}

/* Reads the byte at @addr as it is in memory; false if unmapped. */
static bool read_task_raw(pid_t tid, uint64_t addr, uint8_t *byte)
{
	struct iovec local = { byte, 1 };
	struct iovec remote = { (void *) (uintptr_t) addr, 1 };

	return process_vm_readv(tid, &local, 1, &remote, 1, 0) == 1;
}

/* Writes @byte at @addr in the memory task @tid sees. */
static int poke(pid_t tid, uint64_t addr, uint8_t byte)
{
	uint8_t old;

	return cap_poke_byte(tid, addr, byte, &old);
}

void cap_blk_unplant_in(const struct cap_stepper *s, pid_t tid)
{
	const struct amap *m;

	if (!s->blk)
		return;
	m = &s->blk->bps;
	for (size_t i = 0; i < m->cap; i++)
		if (m->slots[i].key)
			poke(tid, m->slots[i].key - 1,
			     (uint8_t) m->slots[i].val);
}

/* Takes every int3 out of our memory through task @tid, if any (no
 * thread is in a block). */
static void unplant_all(struct cap_stepper *s, pid_t tid)
{
	struct amap *m = &s->blk->bps;

	if (tid)
		cap_blk_unplant_in(s, tid);
	for (size_t i = 0; i < m->cap; i++)
		m->slots[i].val &= ~(uint64_t) BP_PLANTED;
	s->blk->planted = 0;
}

void cap_blk_finish(struct cap_stepper *s)
{
	pid_t tid = cap_stepper_mem_tid(s);

	if (s->blk && s->blk->planted)
		unplant_all(s, tid);
}

/* Plants the int3 over @addr through task @tid (once). */
static int plant(struct cap_stepper *s, pid_t tid, uint64_t addr)
{
	uint64_t *v = amap_find(&s->blk->bps, addr);
	uint8_t orig;
	int err;

	if (v && *v & BP_PLANTED)
		return 0;
	err = cap_poke_byte(tid, addr, 0xcc, &orig);
	if (err)
		return err;
	if (v)
		orig = (uint8_t) *v;	/* what we read may be a stale int3 */
	err = amap_put(&s->blk->bps, addr, orig | BP_PLANTED);
	if (err) {
		poke(tid, addr, orig);
		return err;
	}
	s->blk->planted++;
	return 0;
}

/* Takes the int3 at @addr out for now (no thread is in a block ending
 * there) and bans planting it again until the thread that needs it gone
 * has single-stepped it. */
static void evict(struct cap_stepper *s, pid_t tid, uint64_t addr)
{
	uint64_t *v = amap_find(&s->blk->bps, addr);

	if (!v)
		return;
	if (*v & BP_PLANTED) {
		poke(tid, addr, (uint8_t) *v);
		s->blk->planted--;
	}
	*v = (*v & ~(uint64_t) BP_PLANTED) | BP_BANNED;
}

/* ------------------------------------------------------------------ */
/* Blocks                                                             */
/* ------------------------------------------------------------------ */

/* True if a planted int3 lies in [@addr, @addr + @len): the code there
 * overlaps a branch another block ends with. */
static bool hits_planted(const struct cap_blocks *b, uint64_t addr,
			 size_t len)
{
	for (size_t i = 0; i < len; i++) {
		const uint64_t *v = amap_find(&b->bps, addr + i);

		if (v && *v & BP_PLANTED)
			return true;
	}
	return false;
}

/* Decodes the instructions at @start from @code (@n bytes) into @insn
 * (BLOCK_MAX_INSNS of them); returns their number, 0 if the block is
 * not to run natively. */
static unsigned decode_block(const struct cap_blocks *b, uint64_t start,
			     const uint8_t *code, size_t n,
			     struct blk_insn *insn)
{
	size_t off = 0;

	for (unsigned i = 0; i < BLOCK_MAX_INSNS; i++) {
		struct cap_insn *ci = &insn[i].insn;
		int len = cap_insn_decode(code + off, n - off, ci);

		if (len <= 0)
			return 0;
		insn[i].off = (uint16_t) off;
		if (ci->iclass != CAP_IC_OTHER)
			return cap_branch_emulable(code + off, n - off) &&
			       !hits_planted(b, start + off + 1,
					     (size_t) len - 1) ? i + 1 : 0;
		if (hits_planted(b, start + off, (size_t) len))
			return 0;
		off += (size_t) len;
	}
	return 0;
}

/* Builds the block starting at @start, read through task @tid. */
static struct cap_block *build(const struct cap_blocks *b, pid_t tid,
			       const struct cap_stepper *s, uint64_t start)
{
	static struct blk_insn insn[BLOCK_MAX_INSNS];
	uint8_t *code = malloc(BLOCK_READ);
	struct cap_block *k = NULL;
	ssize_t got = code ? cap_read_task(s, tid, start, code,
					   BLOCK_READ) : -1;
	unsigned n = got > 0 ? decode_block(b, start, code, (size_t) got,
					    insn) : 0;

	k = calloc(1, sizeof(*k) + n * sizeof(insn[0]));
	if (!k) {
		free(code);
		return NULL;
	}
	k->start = start;
	k->n = (uint16_t) n;
	k->native = n > 0;
	if (n) {
		size_t bytes = insn[n - 1].off + insn[n - 1].insn.len;

		memcpy(k->insn, insn, n * sizeof(insn[0]));
		k->end = start + insn[n - 1].off;
		k->code = realloc(code, bytes);
		code = k->code ? NULL : code;
		if (!k->code)
			k->native = false;
	}
	free(code);
	return k;
}

/* The block at @start, built and cached on first use; NULL when out of
 * memory (ptrr_fail set). */
static struct cap_block *lookup(struct cap_stepper *s, pid_t tid,
				uint64_t start)
{
	uint64_t *v = amap_find(&s->blk->blocks, start);
	struct cap_block *k;

	if (v)
		return (struct cap_block *) (uintptr_t) *v;
	k = build(s->blk, tid, s, start);
	if (!k) {
		ptrr_fail(PTRR_ERR_NOMEM, "out of memory for the block cache");
		return NULL;
	}
	if (amap_put(&s->blk->blocks, start, (uint64_t) (uintptr_t) k)) {
		free(k->code);
		free(k);
		return NULL;
	}
	return k;
}

/* ------------------------------------------------------------------ */
/* Reporting and emulating                                            */
/* ------------------------------------------------------------------ */

/* Reports the first @count instructions of @t's block as retired, each
 * continuing at the next. */
static int report_first(struct cap_stepper *s, struct cap_thread *t,
			unsigned count)
{
	const struct cap_block *k = t->blk;
	int err = 0;

	for (unsigned i = 0; !err && i < count; i++) {
		const struct blk_insn *bi = &k->insn[i];
		uint64_t ip = k->start + bi->off;

		err = cap_report_code(s, t, ip, ip + bi->insn.len,
				      k->code + bi->off, &bi->insn);
	}
	return err;
}

static ssize_t mem_read(void *arg, uint64_t addr, void *buf, size_t n)
{
	const struct cap_thread *t = arg;

	return cap_read_task(t->owner, t->tid, addr, buf, n);
}

static ssize_t mem_write(void *arg, uint64_t addr, const void *buf,
			 size_t n)
{
	const struct cap_thread *t = arg;
	struct iovec local = { (void *) (uintptr_t) buf, n };
	struct iovec remote = { (void *) (uintptr_t) addr, n };

	return process_vm_writev(t->tid, &local, 1, &remote, 1, 0);
}

/* Executes branch @ip (bytes @code, class @insn) for stopped thread @t:
 * its registers are changed as the branch would change them and it is
 * reported.  If its memory access faults (a stack that must grow, a bad
 * pointer), the thread is put back on @ip to single-step it for real
 * once the int3 there is evicted (t->evict). */
static int emulate(struct cap_stepper *s, struct cap_thread *t, uint64_t ip,
		   const uint8_t *code, const struct cap_insn *insn)
{
	struct cap_mem mem = { t, mem_read, mem_write };
	struct user_regs_struct regs = t->regs;
	uint64_t next;
	int err = cap_branch_emulate(code, insn->len, ip, &regs, &mem, &next);

	if (err == PTRR_ERR_IO) {
		uint64_t *v = amap_find(&s->blk->bps, ip);

		if (v)
			*v |= BP_BANNED;
		t->evict = ip;
		t->regs.rip = ip;
		t->ip = ip;
		return cap_set_regs(t);
	}
	if (err)
		return ptrr_fail(err, "cannot emulate the branch at 0x%" PRIx64
				 " of thread %d", ip, (int) t->tid);
	t->regs = regs;
	err = cap_set_regs(t);
	t->ip = next;
	return err ? err : cap_report_settled(s, t, ip, next, code, insn);
}

/* ------------------------------------------------------------------ */
/* Stops of a thread in a block                                       */
/* ------------------------------------------------------------------ */

/* Reports the instructions of @t's block before @stop (where the thread
 * stopped without running it) and leaves the block there. */
static int cut_at(struct cap_stepper *s, struct cap_thread *t,
		  uint64_t stop)
{
	const struct cap_block *k = t->blk;
	unsigned i = 0;

	while (i < k->n && k->start + k->insn[i].off < stop)
		i++;
	t->in_block = false;
	if (i == k->n || k->start + k->insn[i].off != stop)
		return ptrr_fail(PTRR_ERR_IO, "thread %d stopped at 0x%" PRIx64
				 ", not at an instruction of the block it ran "
				 "(0x%" PRIx64 "-0x%" PRIx64 "): code changed "
				 "under ptrr; record with --soft-step=insn",
				 (int) t->tid, stop, k->start, k->end);
	t->ip = stop;
	return report_first(s, t, i);
}

int cap_blk_cut(struct cap_stepper *s, struct cap_thread *t)
{
	uint64_t rip = t->regs.rip;

	if (!t->in_block)
		return 0;
	return cut_at(s, t, rip == t->blk->end + 1 ? t->blk->end : rip);
}

int cap_blk_event_stop(struct cap_stepper *s, struct cap_thread *t)
{
	int err = cap_get_regs(t, true);

	if (err)
		return err;
	if (t->regs.rip == t->blk->end + 1) {
		t->drain = true;	/* its int3's SIGTRAP is queued */
		return 0;
	}
	return cap_blk_cut(s, t);
}

int cap_blk_stop(struct cap_stepper *s, struct cap_thread *t, int stopsig)
{
	const struct cap_block *k = t->blk;
	const struct blk_insn *e = &k->insn[k->n - 1];
	siginfo_t si;
	int err = cap_get_regs(t, true);

	if (!err)
		err = cap_get_siginfo(t, &si);
	if (err)
		return err;
	if (!si.si_signo)
		return cap_blk_cut(s, t);
	if (stopsig == SIGTRAP && si.si_code == SI_KERNEL &&
	    t->regs.rip == k->end + 1) {
		t->in_block = false;
		err = report_first(s, t, k->n - 1u);
		return err ? err : emulate(s, t, k->end, k->code + e->off,
					   &e->insn);
	}
	err = cap_blk_cut(s, t);
	if (err)
		return err;
	cap_fetch_insn(t, t->ip);
	return cap_signal_stop(s, t, &si);
}

/* ------------------------------------------------------------------ */
/* Starting a block                                                   */
/* ------------------------------------------------------------------ */

/* True if a thread other than @t is in a block that ends at @addr (or,
 * @addr 0, in any block). */
static bool anyone_in(const struct cap_stepper *s,
		      const struct cap_thread *t, uint64_t addr)
{
	for (size_t i = 0; i < s->nthreads; i++) {
		const struct cap_thread *o = s->threads[i];

		if (o != t && o->in_block && (!addr || o->blk->end == addr))
			return true;
	}
	return false;
}

/* @t must single-step t->evict for real: once no thread runs toward its
 * int3, the int3 goes.  True if @t is to wait. */
static bool evicting(struct cap_stepper *s, struct cap_thread *t)
{
	if (anyone_in(s, t, t->evict))
		return true;
	evict(s, t->tid, t->evict);
	t->unban = t->evict;
	t->evict = 0;
	return false;
}

/* Emulates the branches at planted int3s @t is about to execute: it
 * must not run them. */
static int emulate_planted(struct cap_stepper *s, struct cap_thread *t)
{
	int err = 0;

	for (int i = 0; !err && i < MAX_DIRECT && !t->evict &&
	     !cap_stopping(s); i++) {
		uint64_t *v = amap_find(&s->blk->bps, t->ip);

		if (!v || !(*v & BP_PLANTED))
			break;
		cap_fetch_insn(t, t->ip);
		err = emulate(s, t, t->ip, t->cur.code, &t->cur.insn);
	}
	return err;
}

/* Unbans the int3 @t single-stepped past. */
static void unban(struct cap_stepper *s, struct cap_thread *t)
{
	uint64_t *v = amap_find(&s->blk->bps, t->unban);

	if (v)
		*v &= ~(uint64_t) BP_BANNED;
	t->unban = 0;
}

int cap_blk_prepare(struct cap_stepper *s, struct cap_thread *t)
{
	struct cap_block *k;
	uint64_t *v;
	int err;

	if (!s->blk || !s->stepping || !s->block_mode)
		return 0;
	if (t->unban)
		unban(s, t);
	if (t->evict && evicting(s, t))
		return 1;
	if (t->evict || t->sig || t->expect_handler)
		return 0;	/* single-step */
	err = emulate_planted(s, t);
	if (err || t->evict || cap_stopping(s) || disarmed(s->blk))
		return err ? err : t->evict ? cap_blk_prepare(s, t) : 0;
	k = lookup(s, t->tid, t->ip);
	if (!k)
		return PTRR_ERR_NOMEM;
	v = amap_find(&s->blk->bps, k->end);
	if (!k->native || (v && *v & BP_BANNED) ||
	    (s->must_stop && s->must_stop(s->arg, k->start, k->end)))
		return 0;
	if (plant(s, t->tid, k->end)) {
		k->native = false;	/* not writable: single-step it */
		return 0;
	}
	t->in_block = true;
	t->blk = k;
	return 0;
}

void cap_stepper_forget_blocks(struct cap_stepper *s)
{
	if (!s->blk)
		return;
	cap_blk_finish(s);
	if (!anyone_in(s, NULL, 0))
		drop_blocks(s->blk);
}

/* True if a thread is in block @k. */
static bool in_use(const struct cap_stepper *s, const struct cap_block *k)
{
	for (size_t i = 0; i < s->nthreads; i++)
		if (s->threads[i]->in_block && s->threads[i]->blk == k)
			return true;
	return false;
}

/* Forgets the blocks with code in [@lo, @hi); one a thread is in stays
 * allocated until the end (on the pinned list). */
static int drop_range(struct cap_stepper *s, uint64_t lo, uint64_t hi)
{
	struct cap_blocks *b = s->blk;
	struct amap keep = { 0 };
	int err = 0;

	for (size_t i = 0; !err && i < b->blocks.cap; i++) {
		struct slot *sl = &b->blocks.slots[i];
		struct cap_block *k = (struct cap_block *) (uintptr_t) sl->val;

		if (!sl->key)
			continue;
		if (k->start >= hi || k->end + CAP_INSN_MAX <= lo)
			err = amap_put(&keep, k->start, sl->val);
		else if (in_use(s, k))
			err = amap_put(&b->pinned, k->start, sl->val);
		else {
			free(k->code);
			free(k);
		}
	}
	amap_clear(&b->blocks);
	b->blocks = keep;
	return err;
}

int cap_blk_remapped(struct cap_stepper *s, const struct cap_thread *t)
{
	struct amap *m = s->blk ? &s->blk->bps : NULL;
	const struct user_regs_struct *r = &t->regs;
	uint64_t lo = r->rdi, hi = r->rdi + r->rsi;
	uint8_t byte;

	if (!m || (int64_t) r->rax < 0)
		return 0;
	if (r->orig_rax == SYS_shmdt)
		lo = 0, hi = ~0ull;
	else if (r->orig_rax != SYS_munmap && r->orig_rax != SYS_mremap &&
		 (r->orig_rax != SYS_mmap || !(r->r10 & MAP_FIXED)))
		return 0;
	for (size_t i = 0; i < m->cap; i++) {
		struct slot *sl = &m->slots[i];

		if (!sl->key || !(sl->val & BP_PLANTED) || sl->key - 1 < lo ||
		    sl->key - 1 >= hi ||
		    (read_task_raw(t->tid, sl->key - 1, &byte) && byte == 0xcc))
			continue;
		sl->val &= ~(uint64_t) BP_PLANTED;	/* the code is gone */
		s->blk->planted--;
	}
	return drop_range(s, lo, hi);
}

/* ------------------------------------------------------------------ */
/* Children sharing our memory                                        */
/* ------------------------------------------------------------------ */

void cap_blk_share(struct cap_stepper *s, bool vfork)
{
	if (!s->blk)
		return;
	if (vfork)
		s->blk->vforks++;
	else
		s->blk->off = true;
}

bool cap_stepper_block_disarmed(const struct cap_stepper *s)
{
	return s->blk && s->blk->off;
}

bool cap_blk_hold_child(struct cap_stepper *s, pid_t child)
{
	struct cap_blocks *b = s->blk;

	if (!b)
		return false;
	if (b->nheld == b->held_alloc) {
		size_t n = b->held_alloc ? 2 * b->held_alloc : 4;
		pid_t *v = realloc(b->held, n * sizeof(*v));

		if (!v)
			return false;
		b->held = v;
		b->held_alloc = n;
	}
	b->held[b->nheld++] = child;
	return true;
}

void cap_blk_vfork_done(struct cap_stepper *s)
{
	if (s->blk && s->blk->vforks)
		s->blk->vforks--;
}

void cap_blk_sync(struct cap_stepper *s)
{
	struct cap_blocks *b = s->blk;

	if (!b || !b->nheld || anyone_in(s, NULL, 0))
		return;
	/* Through each child (it shares our memory, or, a clone without
	 * CLONE_VM reported as PTRACE_EVENT_CLONE, has a copy of it), and
	 * through a thread of ours. */
	for (size_t i = 0; i < b->nheld; i++)
		cap_blk_unplant_in(s, b->held[i]);
	unplant_all(s, cap_stepper_mem_tid(s));
	for (size_t i = 0; i < b->nheld; i++)
		ptrace(PTRACE_DETACH, b->held[i], NULL, NULL);
	b->nheld = 0;
}
