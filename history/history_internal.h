/* history/ internals shared by image.c, walk.c, segment.c, index.c,
 * cursor.c, calls.c and recording.c.  Not for replay/ or plugin/. */
#ifndef PTRR_HISTORY_INTERNAL_H
#define PTRR_HISTORY_INTERNAL_H

#include "history.h"

#include <elfutils/libdwfl.h>
#include <intel-pt.h>
#include <pthread.h>
#include <stdatomic.h>

/* ---- image.c ---- */

struct hist_file_section {
	int isid;		/* id in the image section cache */
	uint64_t vaddr;
	uint64_t size;		/* bytes mapped (clamped to the file) */
	const uint8_t *bytes;	/* our own read-only mapping of them */
	void *map;		/* what to munmap, and its length */
	size_t map_len;
};

struct hist_copy {
	uint64_t vaddr;
	uint64_t size;
	uint8_t *data;
};

/* Instruction lengths remembered by address (direct mapped): each entry
 * is ip << 4 | length, 0 if free.  A history walks the same hot code
 * millions of times; decoding it once is enough. */
#define HIST_LEN_CACHE (1u << 15)

struct hist_image {
	struct pt_image_section_cache *iscache;
	struct pt_image *image;
	struct hist_file_section *files;
	size_t nfiles;
	struct hist_copy *copies;
	size_t ncopies;
	bool overlaps;		/* some sections overlap: no read cache */
	_Atomic uint64_t lens[HIST_LEN_CACHE];
	atomic_bool lens_used;	/* some entry may be set */
	atomic_ulong changes;	/* sections and copies added so far */
};

/* The length of the instruction at @ip remembered by @img, 0 if none;
 * hist_image_len_put() remembers one.  Adding to the image forgets them
 * all (the bytes at an address may change). */
uint8_t hist_image_len_get(struct hist_image *img, uint64_t ip);
void hist_image_len_put(struct hist_image *img, uint64_t ip, uint8_t len);

/* A private libipt image with the same sections and copies as @img, for a
 * decoder running on another thread.  Free with pt_image_free().
 * img->image itself is never decoded through: a libipt image is not safe
 * to use on two threads at once (every lookup moves the section it finds
 * to the front of the image's list), and the histories of one recording
 * share @img and decode on several threads. */
struct pt_image *hist_image_pt_clone(struct hist_image *img);

/* ---- symbols.c: the libdwfl session, for cfi.c ---- */

/* Takes the symtab's lock (every call on it is serialised) and returns
 * its libdwfl session; hist_symtab_unlock() gives the lock back. */
struct Dwfl;
struct Dwfl *hist_symtab_lock(struct hist_symtab *st);
void hist_symtab_unlock(struct hist_symtab *st);

/* ---- walk.c: following code without trace ---- */

struct hist_insn_info {
	uint8_t size;
	enum hist_iclass iclass;
	bool needs_trace;	/* its successor is unknown without trace */
	bool has_target;	/* a direct jump or call: */
	uint64_t target;	/* its destination */
};

/* Decodes the instruction at @ip from @img. */
int hist_insn_info_at(struct hist_image *img, uint64_t ip,
		      struct hist_insn_info *out);

/* A straight-line stretch of instructions at consecutive addresses. */
struct hist_run {
	uint64_t ip;		/* first instruction */
	uint64_t end_ip;	/* last instruction */
	uint32_t ninsn;
	uint8_t iclass;		/* class of the last instruction */
	uint8_t flags;		/* HIST_F_* of the first instruction */
	uint8_t kind;		/* HIST_ENTRY_INSN or HIST_ENTRY_GAP */
	int gap_code;		/* gaps: negative pt_error_code */
	uint64_t gap_offset;	/* gaps: trace offset */
};

/* Appends to @runs the instructions executed from @from up to but not
 * including @to, following only code that needs no trace (fall-through,
 * direct jumps and calls), at most @limit instructions.  Returns 0 when
 * @to was reached, PTRR_ERR_NOTFOUND when it was not. */
struct hist_runs {
	struct hist_run *v;
	size_t n, cap;
};
int hist_runs_push(struct hist_runs *rs, const struct hist_run *r);
int hist_walk(struct hist_image *img, uint64_t from, uint64_t to,
	      uint64_t limit, struct hist_runs *runs);

/* ---- segment.c: decoding one PSB segment ---- */

/* What decoding one segment found. */
struct hist_seg_result {
	struct hist_runs runs;	/* only filled when asked for */
	uint64_t count;		/* entries (instructions + gaps) */
	uint64_t start_ip, end_ip;
	int32_t depth;		/* net calls minus returns */
	int32_t min_depth;
	uint64_t summary[8];
	bool enabled_at_end;	/* tracing was on when the trace ended */
	bool async_end;		/* tracing ended by an asynchronous event at */
	uint64_t async_ip;	/* this (not executed) instruction */
	bool error_end;		/* decoding ended with an error (a gap) */
	bool started;		/* at least one instruction decoded */
	bool first_resumed;	/* the first one follows a TIP.PGE */
	bool reached_next;	/* decoding reached the next segment's start */
	bool partial;		/* stopped early on request */
	bool pending;		/* decoding stopped at an instruction whose */
	uint64_t pending_ip;	/* trace lies beyond the segment (not counted) */
	uint64_t last_ip;	/* the last instruction decoded */
	uint64_t gaps;		/* gap entries among count */
};

/* Decodes trace bytes [@begin, @end) that start with a PSB.  @next_ip,
 * if not NULL, is where the next segment starts: decoding that ran on
 * past the next PSB without trace is cut there.  With @want_runs,
 * records the instruction runs (for the cursor, which needs no
 * summary); without, fills the summary (for the index); either way
 * counts entries. */
int hist_decode_segment(const struct hist_config *cfg,
			struct pt_image *image, uint64_t begin, uint64_t end,
			const uint64_t *next_ip, bool want_runs,
			struct hist_seg_result *res);

/* Like hist_decode_segment() with runs, but may stop once @stop_at
 * entries are decoded (res->partial then says so; entries beyond the
 * segment's indexed count are not valid in a partial result).  With
 * @want_summary, fills the summary too, as the index does. */
int hist_decode_segment_prefix(const struct hist_config *cfg,
			       struct pt_image *image, uint64_t begin,
			       uint64_t end, const uint64_t *next_ip,
			       uint64_t stop_at, bool want_summary,
			       struct hist_seg_result *res);

/* The IP in the FUP of the PSB+ at trace offset @off: where a segment
 * starts.  False if the PSB+ has none (tracing was off). */
bool hist_psb_start_ip(const struct hist_config *cfg, uint64_t off,
		       uint64_t *ip);
void hist_seg_result_fini(struct hist_seg_result *res);

void hist_summary_add(uint64_t summary[8], uint64_t ip, uint64_t end_ip);

/* True if @summary is all ones: a segment numbered from the table of
 * PSBs and not decoded yet (any code may be in it). */
static inline bool hist_summary_unknown(const uint64_t summary[8])
{
	uint64_t all = ~0ull;

	for (int k = 0; k < 8; k++)
		all &= summary[k];
	return all == ~0ull;
}

/* ---- index.c / cursor.c ---- */

/* A decoded segment, shared by the cache and cursors (reference counted). */
struct hist_decoded {
	size_t seg;		/* index of the segment */
	struct hist_run *runs;
	size_t nruns;
	uint64_t *run_first;	/* entry number of each run's first entry */
	uint64_t valid;		/* entries decoded (all of them unless a
				 * seek asked for a prefix only) */
	bool complete;
	unsigned refs;
	unsigned long generation;	/* of the history it was decoded in */
	bool settled;		/* not the last segment then: hist_extend()
				 * never changes it */
};

/* The cache of decoded segments holds at most HIST_CACHE_SLOTS of them
 * and at most HIST_CACHE_BYTES of their runs, but always the most recent
 * one: a segment of branchy code decodes to a megabyte or more.  (Each
 * cursor holds the segment it is in besides.) */
#define HIST_CACHE_SLOTS 8
#define HIST_CACHE_BYTES ((size_t) 2 << 20)

struct calls;

struct history {
	struct hist_config cfg;
	struct hist_segment *segs;
	size_t nsegs;
	/* The tail: entries after the last segment's own decode — walked to
	 * the final PC, plus that PC.  Its runs form a pseudo segment. */
	uint64_t size;
	uint64_t ninsn;
	uint64_t skipped_prefix;	/* bytes before the first PSB */

	/* Extra runs appended to segment i when it is decoded: the walk to
	 * the next segment's start (tail runs for the last one). */
	struct hist_runs *extra;	/* one per segment */

	pthread_mutex_t lock;	/* guards the cache and reference counts */
	/* hist_decode_ahead() is decoding segment ahead (if ahead_busy),
	 * outside the lock: hist_get_decoded() of it waits for ahead_done
	 * instead of decoding it too.  Guarded by @lock. */
	size_t ahead;
	bool ahead_busy;
	pthread_cond_t ahead_done;
	struct hist_decoded *cache[HIST_CACHE_SLOTS];
	unsigned long cache_use[HIST_CACHE_SLOTS];
	unsigned long clock;

	/* This history's own copy of cfg.image's libipt image for decoding
	 * segments (hist_image_pt_clone()), made again when cfg.image
	 * changed since (pti_changes); guarded by @lock. */
	struct pt_image *pti;
	unsigned long pti_changes;

	struct calls *calls;
	unsigned long generation;	/* hist_extend() calls so far */
	/* Incremented when every entry may have a new number (the table
	 * of PSBs was found wrong and the history indexed again): the
	 * call segments start over. */
	unsigned long renumbered;
	bool from_index;	/* read from a saved index (index_file.c) */
	/* Segments numbered from cfg.psbs (index.c), none of whose
	 * decodes has disagreed (table_wrong: one has, cursor.c). */
	bool from_table;
	atomic_bool table_wrong;
};

/* Returns the decoded form of segment @i, from the cache or decoded now,
 * with a reference the caller drops with hist_put_decoded().  With
 * @upto > 0, a decode that covers entry @upto is enough. */
int hist_get_decoded(struct history *h, size_t i, uint64_t upto,
		     struct hist_decoded **out);
void hist_put_decoded(struct history *h, struct hist_decoded *d);

/* Decodes segment @i of @h into its cache through @image (the caller's
 * own copy of h's image as it was after @changes changes: this runs on a
 * thread of its own, without h->lock while it decodes), unless the cache
 * has it; 1, and nothing cached, if the image changed since
 * @changes. */
int hist_decode_ahead(struct history *h, struct pt_image *image,
		      unsigned long changes, size_t i);

/* The index of the segment cursor @c is in (0 before it is anywhere). */
size_t hist_cursor_segment(const struct hist_cursor *c);

/* The entry number and address of the last instruction of the run the
 * cursor is in, into *@number and *@ip; false if there is none further
 * on (the cursor is at it, or in a gap, or its segment is decoded only
 * in part). */
bool hist_cursor_run_end(const struct hist_cursor *c, uint64_t *number,
			 uint64_t *ip);

/* Moves the cursor to the last instruction of its run, which
 * hist_cursor_run_end() said is further on, without decoding the
 * instructions between: only the last one is read. */
int hist_cursor_skip_run(struct hist_cursor *c);

/* ---- parallel.c ---- */

/* Runs @fn(@ctx, i) for every i below @n, on as many threads as cores
 * (the caller's among them), in no particular order; returns when all
 * are done. */
void hist_parallel_for(size_t n, void (*fn)(void *ctx, size_t i), void *ctx);

/* ---- index_file.c: a history's index saved with its bundle ---- */

/* A byte string being written; @nomem once it could not grow. */
struct hist_wbuf {
	uint8_t *p;
	size_t n, cap;
	bool nomem;
};
void hist_wbuf_put(struct hist_wbuf *w, const void *data, size_t n);

/* A saved index's body, inflated a chunk at a time when first read:
 * its bytes lie at @p, but only those of the chunks hist_body_fetch()
 * was asked for hold their value (a full recording's body is hundreds
 * of megabytes, of which opening it reads a few).  Not locked: its
 * reader serialises the fetches (the call store, under its lock). */
struct hist_body {
	uint8_t *p;		/* size bytes: an anonymous mapping, or a
				 * malloc'd buffer whole from the start */
	size_t size;
	bool mapped;		/* p is a mapping (munmap, not free) */
	uint8_t *file;		/* the compressed file: the body's to free or
				 * unmap */
	size_t file_size;
	bool file_mapped;
	const uint8_t *in;	/* the first compressed chunk in file */
	uint64_t *at;		/* chunk i is in[at[i] .. at[i + 1]) */
	uint8_t *state;		/* per chunk: BODY_* (index_file.c) */
	size_t nchunks;
};

/* A body of @size bytes at @p (malloc'd), whole already; NULL if out of
 * memory (then @p is still the caller's). */
struct hist_body *hist_body_whole(uint8_t *p, size_t size);
/* Inflates the chunks of @b that hold bytes @from .. @from + @n - 1 if
 * they are not yet (several on all cores); false if one of them does
 * not inflate to its size (the file is damaged) or @n runs past the
 * body. */
bool hist_body_fetch(struct hist_body *b, size_t from, size_t n);
/* The bytes of @b inflated so far. */
size_t hist_body_inflated(const struct hist_body *b);
void hist_body_free(struct hist_body *b);

/* Bytes being read from a body; @bad once a read asked for more than is
 * left, or for bytes that do not inflate. */
struct hist_rbuf {
	const uint8_t *p;	/* body->p */
	size_t n, off;
	bool bad;
	struct hist_body *body;	/* a reader may keep it (it then sets body
				 * to NULL and frees it) */
};
/* Copies the next @n bytes to @out (zeros, and bad, if there are not
 * as many). */
void hist_rbuf_get(struct hist_rbuf *r, void *out, size_t n);
/* The next @n bytes in place, inflated; NULL, and bad, if there are not
 * as many. */
const void *hist_rbuf_take(struct hist_rbuf *r, size_t n);
/* The place of the next @n bytes, passed over without inflating them;
 * NULL, and bad, if there are not as many. */
const void *hist_rbuf_skip(struct hist_rbuf *r, size_t n);

/* The bundle file beside @trace_file ("threads/TID.pt") whose name ends
 * in @ext instead of ".pt" (".idx": "threads/TID.idx", its saved index;
 * ".psbs", its table of PSBs), allocated. */
char *hist_trace_sibling(const char *trace_file, const char *ext);

/* A 64-bit hash of @n bytes at @data, going on from hash @h. */
uint64_t hist_hash(uint64_t h, const void *data, size_t n);

/* The saved form of @h's index under @key, in a new buffer *@data of
 * *@size bytes.  @complete: with its call segments, and every segment
 * numbered from a table of PSBs decoded, computing them if they are not
 * yet (the call segments are left out if the file would be larger than
 * @max bytes with them); else the segments as they are, without call
 * segments (the history reading it computes those, and decodes the
 * segments, when it needs them). */
int hist_index_save(struct history *h, uint64_t key, size_t max,
		    bool complete, uint8_t **data, size_t *size);

/* A saved index's body is compressed in chunks of this many bytes, on
 * all cores (index_file.c). */
#define HIST_INDEX_CHUNK ((size_t) 1 << 20)

/* A saved index keeps the call segments only if it stays within this
 * many times the size of its trace (docs/history.md, "The saved
 * index"). */
#define HIST_INDEX_MAX_RATIO 2

/* A history for @cfg read from the saved form @data (@size bytes, a
 * mapping of the file if @mapped, else malloc'd): PTRR_ERR_BUNDLE if it
 * is of another key, trace or layout, or its segments do not hold
 * together.  On success the history keeps @data, and inflates and checks
 * the blocks of call segments in it when they are first read; on failure
 * @data is still the caller's. */
int hist_index_load(const struct hist_config *cfg, uint64_t key,
		    uint8_t *data, size_t size, bool mapped,
		    struct history **out);
/* The bytes of @h's saved index inflated so far (0 without one). */
size_t hist_index_inflated(struct history *h);

/* recording.c: the configuration of thread @i's history, and the key
 * of its saved index. */
struct hist_config hist_recording_config(struct hist_recording *r, size_t i);
uint64_t hist_recording_index_key(struct hist_recording *r, size_t i);

/* calls.c: appends the call segments of @h, brought up to date, to @w /
 * takes them from @r for @h, whose index is complete (PTRR_ERR_BUNDLE if
 * they do not hold together: @h then computes its own). */
int hist_calls_save(struct history *h, struct hist_wbuf *w);
int hist_calls_load(struct history *h, struct hist_rbuf *r);

/* ---- calls_store.c: the compact storage of call segments ---- */

/* Segments per block: blocks are encoded and decoded whole, and each
 * block's first entry number is kept apart. */
#define CALL_STRIDE 64

/* A call segment as calls.c reads and changes it (its id is its index
 * + 1): blocks of them are decoded into the store's cache. */
struct call_rec {
	uint32_t off;		/* first entry - its block's first entry, or
				 * UINT32_MAX: see call_store.far */
	int32_t level;		/* call depth as built (may be negative) */
	uint32_t up;		/* hist_call.up */
	uint32_t inst;		/* hist_call.inst */
	uint32_t next;		/* hist_call.next */
	uint32_t fn;		/* function number | flags << CALL_FN_BITS */
};

/* The flags of a call_rec: HIST_CALL_* and what only calls.c uses. */
#define CALL_FN_BITS	27
#define CALL_FN_MASK	((1u << CALL_FN_BITS) - 1)
#define CALL_PUBLIC	0x7u	/* HIST_CALL_* */
#define CALL_NOSYM	0x8u	/* no symbol covers it: func is its first IP */
#define CALL_ENDS_CALL	0x10u	/* its last instruction is a call */

/* A block of CALL_STRIDE segments as kept: a few bytes a segment. */
struct call_block {
	uint64_t first;		/* first entry of its first segment */
	uint8_t *code;		/* its segments, encoded (calls_store.c) */
	uint16_t len;		/* bytes of code */
	uint8_t ncode;		/* segments in code */
	int8_t slot;		/* the cache slot it is decoded in, or -1 */
	bool lazy;		/* read back, its code not yet inflated and
				 * checked (call_store_load) */
};

/* Blocks decoded at a time: the pass's working set (the newest blocks
 * and those of the callers up the stack) and a reader's. */
#define CALL_CACHE_SLOTS 32

struct call_slot {
	size_t block;		/* the block it holds */
	unsigned long use;	/* when last used, for LRU eviction */
	bool dirty;		/* changed: encode it when it leaves */
	struct call_rec rec[CALL_STRIDE];
};

struct call_far {
	size_t i;		/* index of a segment */
	uint64_t first;		/* its first entry */
};

struct call_undo {
	uint32_t id;
	struct call_rec rec;	/* as it was before a change */
};

struct call_store {
	size_t n;		/* segments */
	struct call_block *blocks;
	size_t capblocks;
	struct call_slot *cache;	/* CALL_CACHE_SLOTS, from the first push */
	unsigned long clock;
	size_t code_bytes;	/* of all blocks' code */
	bool lost;		/* out of memory while encoding a block: its
				 * latest changes are lost */
	struct call_far *far;	/* by increasing i */
	size_t nfar, capfar;
	uint64_t *funcs;	/* function addresses, by number */
	size_t nfuncs, capfuncs;
	uint32_t *slots;	/* hash of funcs: number + 1, 0 if free */
	size_t nslots;
	bool marking;		/* changes are logged since a mark: */
	bool undo_lost;		/* (not all of them: out of memory) */
	size_t mark_n, mark_nfar;
	struct call_undo *undo;
	size_t nundo, capundo;
	/* Read back from a saved index (call_store_load): */
	struct hist_body *body;	/* the body blocks' code may point into */
	uint64_t entries;	/* the history's entries */
	int32_t min_level;	/* the lowest level saved */
	bool damaged;		/* a block failed its checks when first
				 * read: it reads as no segments */
};

/* Appends a segment with no links at level 0 (its inst is its own id). */
int call_store_push(struct call_store *s, uint64_t first, uint64_t func,
		    uint32_t flags);
/* Segment @id (1 .. s->n), a copy. */
struct call_rec call_store_get(struct call_store *s, uint32_t id);
/* Segment @id, to be changed (its old value logged after a mark).  The
 * pointer is valid until the next call on @s. */
struct call_rec *call_store_mut(struct call_store *s, uint32_t id);
/* First entry of segment @id; function address of @r. */
uint64_t call_store_first(struct call_store *s, uint32_t id);
uint64_t call_store_func(const struct call_store *s, const struct call_rec *r);
/* Id of the segment holding entry @number (there must be one). */
uint32_t call_store_find(struct call_store *s, uint64_t number);
/* Encodes every changed block: then reading cannot lose data.  Fails if
 * out of memory (now or since the last flush: s->lost). */
int call_store_flush(struct call_store *s);
/* Marks the store as it is now / puts it back to the mark. */
void call_store_mark(struct call_store *s);
int call_store_rollback(struct call_store *s);
size_t call_store_bytes(const struct call_store *s);
void call_store_fini(struct call_store *s);
/* Appends flushed store @s, whose lowest level is @min_level, to @w;
 * PTRR_ERR_BUNDLE if it was read back and a block of it, inflated and
 * checked now, is damaged (s->damaged). */
int call_store_save(struct call_store *s, int32_t min_level,
		    struct hist_wbuf *w);
/* Reads a store saved by call_store_save() back from @r into @s, for a
 * history of @entries entries, giving the lowest level saved: the table
 * of blocks and the last block are checked now (PTRR_ERR_BUNDLE if they
 * do not hold together), every other block when it is first read; one
 * that fails then reads as no segments and sets s->damaged, after which
 * the caller must not trust the store.  @s keeps r->body on success. */
int call_store_load(struct call_store *s, struct hist_rbuf *r,
		    uint64_t entries, int32_t *min_level);
/* The bytes of the saved index @s was read from inflated so far. */
size_t call_store_inflated(const struct call_store *s);

/* ---- calls.c ---- */

/* Release the calls state. */
void hist_calls_free(struct calls *st);

/* A window pass: the call segments of @h's entries from the first of
 * index segment @seg to the end, by the same pass started there with
 * nothing before it known, into a calls state of their own (released
 * with hist_calls_free).  Its segments are the whole pass's from the
 * window on (the first one cut at the window's start), their ids less a
 * constant; what of a segment may differ, for want of what came before
 * the window, is said by hist_calls_window_get.  The first step of the
 * tail pass of docs/history.md ("Not built yet: call stacks near the
 * end without the forward pass"). */
int hist_calls_window(struct history *h, size_t seg, struct calls **out);
size_t hist_calls_window_count(const struct calls *b);
/* The id of the window's segment holding entry @number, 0 if none. */
uint32_t hist_calls_window_find(struct calls *b, uint64_t number);
/* Segment @id (1 .. count) of window @b into @c (levels relative to the
 * window's lowest); returns what may differ from the whole pass's:
 * HIST_WINDOW_* bits, 0 if nothing does. */
unsigned hist_calls_window_get(struct calls *b, uint32_t id,
			       struct hist_call *c);
#define HIST_WINDOW_LEVEL	0x1	/* its level, relative to the others */
#define HIST_WINDOW_UP		0x2
#define HIST_WINDOW_INST	0x4
#define HIST_WINDOW_FLAGS	0x8
#define HIST_WINDOW_NEXT	0x10

/* Around hist_extend(): makes a hist_calls_prepare() running on another
 * thread stop and wait (it goes on afterwards).  False if out of memory
 * (then there is no calls state and nothing to release). */
bool hist_calls_hold(struct history *h);
void hist_calls_release(struct history *h);

/* ---- debuginfo.c: where symbols and debug files are found ---- */

/* libdwfl's callbacks for files read offline, with the separate debug
 * files looked for as gdb does (debuginfo.c). */
const Dwfl_Callbacks *hist_dwfl_callbacks(void);

/* Finds a defined symbol @name in @mod's symbol table (its .symtab, its
 * debug file's, or its .dynsym): into @sym, its address in @addr. */
bool hist_dwfl_find_symbol(Dwfl_Module *mod, const char *name,
			   GElf_Sym *sym, uint64_t *addr);

#endif
