/* A timeline as a self-contained SVG flame timeline: x is time (the
 * timeline's unit), y is call depth growing downwards, one band per
 * thread, a rectangle per activation with its function's name where the
 * name fits and a <title> (shown on hover) with its name and entries.
 * No scripts, no external fonts or images: any browser or image viewer
 * draws it as it is.
 */
#include <config.h>

#include "timeline.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

#define SVG_WIDTH	1200.0	/* pixels */
#define SVG_MARGIN	10.0
#define SVG_PLOT	(SVG_WIDTH - 2 * SVG_MARGIN)
#define SVG_ROW		18.0	/* height of a call level */
#define SVG_FONT	12.0	/* names, in a monospaced font */
#define SVG_CHAR	(SVG_FONT * 0.6)	/* its advance */
#define SVG_BAND_HEAD	24.0	/* the thread's heading above its rows */
#define SVG_TOP		56.0	/* title and time axis */
#define SVG_MIN_WIDTH	0.2	/* narrower activations are not drawn */

/* Writes @s to @out escaped for XML text and attributes. */
static void put_xml(FILE *out, const char *s, size_t max)
{
	for (size_t i = 0; s[i] && i < max; i++) {
		unsigned char c = s[i];

		if (c == '&')
			fputs("&amp;", out);
		else if (c == '<')
			fputs("&lt;", out);
		else if (c == '>')
			fputs("&gt;", out);
		else if (c == '"')
			fputs("&quot;", out);
		else if (c < 0x20 || c == 0x7f)
			fputc('?', out);
		else
			fputc(c, out);
	}
}

/* A light warm colour (black text stays legible on it) for function
 * @name, the same for every activation of it, as flame graphs colour
 * (names are hashed, FNV-1a). */
static void put_color(FILE *out, const char *name)
{
	uint32_t h = 2166136261u;

	for (const char *p = name; *p; p++)
		h = (h ^ (unsigned char)*p) * 16777619u;
	fprintf(out, "rgb(%u,%u,%u)", 235 + (h & 0xff) % 21,
		150 + ((h >> 8) & 0xff) % 90, 90 + ((h >> 16) & 0xff) % 60);
}

/* Pixels per unit of time. */
static double scale_of(const struct tl_timeline *tl)
{
	double end = tl_end_time(tl);

	return end > 0 ? SVG_PLOT / end : 1;
}

/* @v time units in a short form ("1500", "12k", "3.5M"). */
static void format_units(double v, char *buf, size_t size)
{
	if (v >= 1e6)
		snprintf(buf, size, "%gM", v / 1e6);
	else if (v >= 1e4)
		snprintf(buf, size, "%gk", v / 1e3);
	else
		snprintf(buf, size, "%g", v);
}

/* The title and the time axis: about ten ticks at round numbers. */
static void put_axis(FILE *out, const struct tl_timeline *tl)
{
	double end = tl_end_time(tl), step = 1, scale = scale_of(tl);
	const char *base = strrchr(tl->exe, '/');
	char label[32];

	if (end > 10) {
		double mag = pow(10, floor(log10(end / 10))), r = end / 10 / mag;

		step = (r <= 1 ? 1 : r <= 2 ? 2 : r <= 5 ? 5 : 10) * mag;
	}
	fprintf(out, "<text x=\"%g\" y=\"20\" class=\"head\">", SVG_MARGIN);
	put_xml(out, base ? base + 1 : tl->exe, 200);
	fprintf(out, ": call history, time in %s</text>\n",
		tl->tsc ? "TSC ticks" : "instructions");
	for (double t = 0; t <= end; t += step) {
		double x = SVG_MARGIN + t * scale;

		format_units(t, label, sizeof(label));
		fprintf(out, "<line x1=\"%.2f\" y1=\"38\" x2=\"%.2f\" y2=\"44\" "
			"class=\"tick\"/><text x=\"%.2f\" y=\"34\" "
			"class=\"axis\">%s</text>\n", x, x, x, label);
	}
}

/* Writes activation @a of @t at vertical offset @top. */
static void put_act(FILE *out, const struct tl_timeline *tl,
		    const struct tl_thread *t, const struct tl_act *a,
		    double top, double scale)
{
	double x = SVG_MARGIN + tl_time(tl, t, a->first) * scale;
	double w = (tl_time(tl, t, a->last + 1) -
		    tl_time(tl, t, a->first)) * scale;
	double y = top + a->depth * SVG_ROW;
	size_t len = strlen(a->name), fit = w > 8 ? (w - 8) / SVG_CHAR : 0;

	fputs("<g><title>", out);
	put_xml(out, a->name, SIZE_MAX);
	fprintf(out, " (0x%" PRIx64 "): entries %" PRIu64 "-%" PRIu64
		", %" PRIu64 " instructions, depth %" PRIu32 "%s</title>",
		a->func, a->first, a->last, a->last - a->first + 1, a->depth,
		a->tailcall ? ", tail call" : "");
	fprintf(out, "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%g\" "
		"fill=\"", x, y, w, SVG_ROW - 2);
	put_color(out, a->name);
	fputs("\"/>", out);
	if (fit >= len || fit >= 3) {
		fprintf(out, "<text x=\"%.2f\" y=\"%.1f\">", x + 4,
			y + SVG_ROW - 5.5);
		put_xml(out, a->name, fit >= len ? len : fit - 2);
		fputs(fit >= len ? "" : "..", out);
		fputs("</text>", out);
	}
	fputs("</g>\n", out);
}

/* Writes the band of thread @t at vertical offset @top; returns its
 * height. */
static double put_band(FILE *out, const struct tl_timeline *tl,
		       const struct tl_thread *t, double top, size_t index)
{
	double scale = scale_of(tl), rows = top + SVG_BAND_HEAD;
	double height = SVG_BAND_HEAD + (t->max_depth + 1) * SVG_ROW + 8;
	size_t hidden = 0;

	fprintf(out, "<rect x=\"0\" y=\"%.1f\" width=\"%g\" height=\"%.1f\" "
		"class=\"%s\"/>\n", top, SVG_WIDTH, height,
		index % 2 ? "band2" : "band");
	fprintf(out, "<text x=\"%g\" y=\"%.1f\" class=\"thread\">thread %d: "
		"%" PRIu64 " entries, %zu activations, %zu gaps",
		SVG_MARGIN, top + 17, t->tid, t->entries, t->nacts, t->ngaps);
	for (size_t k = 0; k < t->nacts; k++)
		if ((tl_time(tl, t, t->acts[k].last + 1) -
		     tl_time(tl, t, t->acts[k].first)) * scale < SVG_MIN_WIDTH)
			hidden++;
	if (hidden)
		fprintf(out, " (%zu too narrow to draw)", hidden);
	fputs("</text>\n", out);
	for (size_t k = 0; k < t->nacts; k++) {
		const struct tl_act *a = &t->acts[k];

		if ((tl_time(tl, t, a->last + 1) - tl_time(tl, t, a->first)) *
		    scale >= SVG_MIN_WIDTH)
			put_act(out, tl, t, a, rows, scale);
	}
	for (size_t k = 0; k < t->ngaps; k++) {
		double x = SVG_MARGIN +
			   tl_time(tl, t, t->gaps[k].entry) * scale;

		fprintf(out, "<g><title>gap at entry %" PRIu64 ": ",
			t->gaps[k].entry);
		put_xml(out, t->gaps[k].reason, SIZE_MAX);
		fprintf(out, "</title><line x1=\"%.2f\" y1=\"%.1f\" x2=\"%.2f\" "
			"y2=\"%.1f\" class=\"gap\"/></g>\n", x, rows, x,
			top + height - 4);
	}
	return height;
}

/* tl_write_file() callback: writes the SVG of timeline @ctx to @out. */
static int write_svg(FILE *out, void *ctx)
{
	const struct tl_timeline *tl = ctx;
	double height = SVG_TOP;

	for (size_t i = 0; i < tl->nthreads; i++)
		height += SVG_BAND_HEAD + (tl->threads[i].max_depth + 1) *
			  SVG_ROW + 8;
	fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%g\" "
		"height=\"%.0f\" viewBox=\"0 0 %g %.0f\">\n"
		"<style>\n"
		"text { font-family: 'DejaVu Sans Mono', 'Liberation Mono', "
		"monospace; font-size: %gpx; fill: #000; }\n"
		".head { font-size: 16px; font-weight: bold; }\n"
		".axis { font-size: 11px; fill: #444; text-anchor: middle; }\n"
		".thread { font-size: 13px; font-weight: bold; }\n"
		".tick { stroke: #444; }\n"
		".band { fill: #f4f4f4; } .band2 { fill: #e8ecf4; }\n"
		".gap { stroke: #c00; stroke-width: 2; }\n"
		"</style>\n"
		"<rect x=\"0\" y=\"0\" width=\"100%%\" height=\"100%%\" "
		"fill=\"#fff\"/>\n", SVG_WIDTH, height, SVG_WIDTH, height,
		SVG_FONT);
	put_axis(out, tl);
	height = SVG_TOP;
	for (size_t i = 0; i < tl->nthreads; i++)
		height += put_band(out, tl, &tl->threads[i], height, i);
	fputs("</svg>\n", out);
	return 0;
}

int tl_write_svg(const struct tl_timeline *tl, const char *path)
{
	return tl_write_file(path, write_svg, (void *)tl);
}
