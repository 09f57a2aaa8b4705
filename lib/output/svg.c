/*
 * The heatmap as SVG: one band per region, a cell's colour on a log scale
 * of the busiest cell's samples, the changes marked on the band's top edge.
 * The scales are shared with the heatmap's text grid.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output/format.h"
#include "output/svg.h"

/*
 * Pixels: a cell's width and height, the label column, the title, legend
 * and time axis above the bands, a band and the gap below it; the
 * characters a label line holds (11 px monospace: 6.6 px a character).
 */
#define SVG_CW 6
#define SVG_RH 3
#define SVG_LABEL 260
#define SVG_TOP 84
#define SVG_BAND_H (MS_HEATMAP_ROWS * SVG_RH)
#define SVG_GAP 26
#define SVG_LABEL_CHARS 37
#define SVG_AXIS_TICKS 8
#define SVG_STR_(x) #x
#define SVG_STR(x) SVG_STR_(x)

int ms_heat_level(uint32_t v, uint32_t max, int levels)
{
	double l;

	if (!v)
		return 0;
	l = max > 1 ? log((double)v) / log((double)max) : 1.0;
	if (l > 1.0)
		l = 1.0;                     /* never past the ramp's end, whatever max was */
	return 1 + (int)(l * (levels - 2) + 0.5);
}

uint32_t ms_heat_level_min(int level, uint32_t max, int levels)
{
	uint32_t lo = 1, hi = max > 1 ? max : 1, mid;

	if (level <= 0)
		return 0;
	if (ms_heat_level(hi, max, levels) < level)
		return 0;
	while (lo < hi) {                    /* the level only grows with v */
		mid = lo + (hi - lo) / 2;
		if (ms_heat_level(mid, max, levels) >= level)
			hi = mid;
		else
			lo = mid + 1;
	}
	return ms_heat_level(lo, max, levels) == level ? lo : 0;   /* a level the scale skips: none */
}

uint64_t ms_time_step(uint64_t span_ns, unsigned int most)
{
	static const unsigned int nice[] = { 1, 2, 5 };
	uint64_t p, step;
	size_t k;

	most = most ? most : 1;
	for (p = 1; p <= UINT64_MAX / 10; p *= 10)
		for (k = 0; k < 3; k++)
			if (span_ns / (step = p * nice[k]) <= most)
				return step;
	return span_ns ? span_ns : 1;
}

int ms_time_decimals(uint64_t step_ns)
{
	int d = 9;

	while (d > 0 && step_ns % 10 == 0) {
		step_ns /= 10;
		d--;
	}
	return d;
}

/*
 * bytes / 2^shift as "%.1f" prints it, and a unit: the quotient is exact
 * in a double (bytes under 2^53), so printf rounds its exact value to the
 * nearest tenth, a tie to even, as this does in integers.
 */
static void tenths(uint64_t bytes, unsigned int shift, const char *unit, char *buf, size_t len)
{
	const unsigned __int128 x = (unsigned __int128)bytes * 10;
	const uint64_t half = 1ULL << (shift - 1), rem = (uint64_t)x & ((1ULL << shift) - 1);
	uint64_t q = (uint64_t)(x >> shift);

	if (rem > half || (rem == half && (q & 1)))
		q++;
	snprintf(buf, len, "%" PRIu64 ".%u %s", q / 10, (unsigned int)(q % 10), unit);
}

void ms_size_text(uint64_t bytes, char *buf, size_t len)
{
	if (bytes >= 1ULL << 53)
		snprintf(buf, len, "%.1f GiB", (double)bytes / (1ULL << 30));
	else if (bytes >= 1ULL << 30)
		tenths(bytes, 30, "GiB", buf, len);
	else if (bytes >= 1ULL << 20)
		tenths(bytes, 20, "MiB", buf, len);
	else
		snprintf(buf, len, "%" PRIu64 " KiB", bytes >> 10);
}

void ms_xml_str(FILE *f, const char *s)
{
	for (; *s; s++)
		switch (*s) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		default:
			/* XML 1.0 allows no control characters; a name's odd bytes become '?'. */
			fputc((unsigned char)*s < 0x20 || (unsigned char)*s >= 0x80 ? '?' : *s, f);
		}
}

/* A cell's colour at level lv of 0..100: blue (few) to red (most). */
static void svg_fill(FILE *f, int lv)
{
	fprintf(f, "hsl(%d,90%%,%d%%)", 240 - lv * 240 / 100, 35 + lv / 5);
}

/*
 * The bands' bytes, put together by hand and written in blocks of 64 KiB
 * (one write for many bands, not one or more for each): an image of a
 * browser's page load has thousands of bands, tens of thousands of cells
 * and marks, and printf's parsing of their formats was most of their cost.
 * Each line below is the bytes of the printf it stands for (sb_i()
 * writes a negative value as "%d" would, though none of these is).
 */
#define SHARE_MEMO 256

struct svg_buf {
	FILE *f;
	size_t n;
	struct {
		uint64_t samples;        /* + 1; 0: unused */
		char text[32];
	} share[SHARE_MEMO];             /* a band's share of the samples ("%.2f"), by its samples: most bands have few */
	char b[1 << 16];                 /* all the bands' bytes, written to f a block at a time */
};

#define SB_LIT(o, lit) sb_put((o), (lit), sizeof(lit) - 1)

static void sb_flush(struct svg_buf *o)
{
	fwrite(o->b, 1, o->n, o->f);
	o->n = 0;
}

static void sb_put(struct svg_buf *o, const char *s, size_t len)
{
	if (len > sizeof(o->b) - o->n) {
		sb_flush(o);
		if (len > sizeof(o->b)) {
			fwrite(s, 1, len, o->f);
			return;
		}
	}
	memcpy(o->b + o->n, s, len);
	o->n += len;
}

/* "%s", NULL as glibc prints it. */
static void sb_str(struct svg_buf *o, const char *s)
{
	s = s ? s : "(null)";
	sb_put(o, s, strlen(s));
}

/* "%u", "%" PRIu64 */
static void sb_u(struct svg_buf *o, uint64_t v)
{
	char tmp[20];

	sb_put(o, tmp, (size_t)(ms_format_dec(tmp, v) - tmp));
}

/* "%d" */
static void sb_i(struct svg_buf *o, int v)
{
	if (v < 0)
		SB_LIT(o, "-");
	sb_u(o, v < 0 ? (uint64_t)-(int64_t)v : (uint64_t)v);
}

/* ms_xml_str() of the len bytes at s. */
static void sb_xml(struct svg_buf *o, const char *s, size_t len)
{
	unsigned char c;
	size_t i;

	for (i = 0; i < len; i++)
		switch ((c = (unsigned char)s[i])) {
		case '&': SB_LIT(o, "&amp;"); break;
		case '<': SB_LIT(o, "&lt;"); break;
		case '>': SB_LIT(o, "&gt;"); break;
		case '"': SB_LIT(o, "&quot;"); break;
		default:
			if (o->n == sizeof(o->b))
				sb_flush(o);
			o->b[o->n++] = c < 0x20 || c >= 0x80 ? '?' : (char)c;
		}
}

/* A band's name, cut in its middle to fit a label line; all of it in the hover title. */
static void sb_label(struct svg_buf *o, int y, const char *s)
{
	size_t len = strlen(s), head = (SVG_LABEL_CHARS - 1) / 2, tail = SVG_LABEL_CHARS - 1 - head;

	SB_LIT(o, "<text x=\"4\" y=\"");
	sb_i(o, y);
	SB_LIT(o, "\" class=\"name\">");
	if (len <= SVG_LABEL_CHARS) {
		sb_xml(o, s, len);
	} else {
		sb_xml(o, s, head);
		SB_LIT(o, "\xe2\x80\xa6");           /* U+2026, the ellipsis */
		sb_xml(o, s + len - tail, tail);
		SB_LIT(o, "<title>");
		sb_xml(o, s, len);
		SB_LIT(o, "</title>");
	}
	SB_LIT(o, "</text>\n");
}

/* The band's head: its group, its four label lines, its background. */
static void sb_band_head(struct svg_buf *o, const struct ms_svg_heatmap *h, const struct ms_heatmap_band *b, int y)
{
	char size[32], row[32], *share = o->share[b->samples % SHARE_MEMO].text;

	ms_size_text(b->size, size, sizeof(size));
	ms_size_text(b->row_bytes, row, sizeof(row));
	if (o->share[b->samples % SHARE_MEMO].samples != b->samples + 1) {
		snprintf(share, sizeof(o->share[0].text), "%.2f",
			 h->total ? 100.0 * (double)b->samples / (double)h->total : 0.0);
		o->share[b->samples % SHARE_MEMO].samples = b->samples + 1;
	}
	SB_LIT(o, "<g class=\"band\" data-region=\"");
	sb_u(o, b->region->id);
	SB_LIT(o, "\" data-pid=\"");
	sb_u(o, b->region->pid);
	SB_LIT(o, "\" data-samples=\"");
	sb_u(o, b->samples);
	SB_LIT(o, "\">\n");
	sb_label(o, y + 14, b->region->name[0] ? b->region->name : "[anon]");
	SB_LIT(o, "<text x=\"4\" y=\"");
	sb_i(o, y + 28);
	SB_LIT(o, "\">");
	sb_str(o, ms_region_kind_name(b->region->kind));
	SB_LIT(o, ", ");
	sb_str(o, size);
	SB_LIT(o, ", pid ");
	sb_u(o, b->region->pid);
	SB_LIT(o, "</text>\n<text x=\"4\" y=\"");
	sb_i(o, y + 42);
	SB_LIT(o, "\">");
	sb_u(o, b->samples);
	SB_LIT(o, " samples (");
	sb_str(o, share);
	SB_LIT(o, "%)</text>\n<text x=\"4\" y=\"");
	sb_i(o, y + 56);
	SB_LIT(o, "\" fill=\"#666\">region ");
	sb_u(o, b->region->id);
	SB_LIT(o, "; a row: ");
	sb_str(o, row);
	SB_LIT(o, "</text>\n<rect x=\"");
	sb_i(o, SVG_LABEL);
	SB_LIT(o, "\" y=\"");
	sb_i(o, y);
	SB_LIT(o, "\" width=\"");
	sb_i(o, MS_HEATMAP_COLS * SVG_CW);
	SB_LIT(o, "\" height=\"");
	sb_i(o, SVG_BAND_H);
	SB_LIT(o, "\" fill=\"#111\"/>\n");
}

/* One region's band, its top at y: a label that fits its column, the cells, the marks. */
static void svg_band(struct svg_buf *o, const struct ms_svg_heatmap *h, const struct ms_heatmap_band *b, int y)
{
	const struct ms_heatmap_cell *cells = h->access ? b->access_cells : b->cells;
	size_t nr = h->access ? b->nr_access_cells : b->nr_cells;
	size_t k;
	int lv;

	sb_band_head(o, h, b, y);
	for (k = 0; k < nr; k++) {       /* svg_fill()'s colour */
		lv = ms_heat_level(cells[k].value, h->max, 101);
		SB_LIT(o, "<rect x=\"");
		sb_i(o, SVG_LABEL + (int)(cells[k].index % MS_HEATMAP_COLS) * SVG_CW);
		SB_LIT(o, "\" y=\"");
		sb_i(o, y + SVG_BAND_H - (int)(cells[k].index / MS_HEATMAP_COLS + 1) * SVG_RH);
		SB_LIT(o, "\" width=\"" SVG_STR(SVG_CW) "\" height=\"" SVG_STR(SVG_RH) "\" fill=\"hsl(");
		sb_i(o, 240 - lv * 240 / 100);
		SB_LIT(o, ",90%,");
		sb_i(o, 35 + lv / 5);
		SB_LIT(o, "%)\"><title>");
		sb_u(o, cells[k].value);
		SB_LIT(o, "</title></rect>\n");
	}
	for (k = 0; k < b->nr_marks; k++) {
		SB_LIT(o, "<path class=\"mark\" d=\"M");
		sb_i(o, SVG_LABEL + (int)b->marks[k].col * SVG_CW);
		SB_LIT(o, " ");
		sb_i(o, y);
		SB_LIT(o, " l3 -6 l3 6 z\" fill=\"");
		sb_str(o, b->marks[k].op == MS_OP_UNMAP ? "#e33" : b->marks[k].op == MS_OP_MAP ? "#3b3" : "#39f");
		SB_LIT(o, "\"><title>");
		sb_str(o, ms_aspace_op_name(b->marks[k].op));
		SB_LIT(o, "</title></path>\n");
	}
	SB_LIT(o, "</g>\n");
}

/* A cell's value as the legend says it: samples, or (access) a share of the cell's bytes. */
static void svg_value(FILE *f, const struct ms_svg_heatmap *h, uint32_t v)
{
	if (h->heat)
		fprintf(f, "%.4g%%", 100.0 * v / MS_HEATMAP_ACCESS_FULL);
	else
		fprintf(f, "%u", v);
}

/* The colour scale: swatches from the first level to the last, each titled with the least value it shows. */
static void svg_legend(FILE *f, const struct ms_svg_heatmap *h, int y)
{
	const int swatches = 11, x0 = SVG_LABEL;
	uint32_t v;
	int i, lv;

	fprintf(f, "<g class=\"legend\">\n<text x=\"4\" y=\"%d\">%s (log scale):</text>\n", y + 10,
		h->heat ? "heat: share accessed" : "heat: samples per cell");
	for (i = 0; i < swatches; i++) {
		lv = 1 + i * 99 / (swatches - 1);
		fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"16\" height=\"10\" fill=\"", x0 + i * 16, y + 1);
		svg_fill(f, lv);
		if ((v = ms_heat_level_min(lv, h->max, 101))) {
			fputs("\"><title>from ", f);
			svg_value(f, h, v);
			fputs("</title></rect>\n", f);
		} else {
			fputs("\"><title>no cell</title></rect>\n", f);
		}
	}
	fprintf(f, "<text x=\"%d\" y=\"%d\">", x0, y + 24);
	svg_value(f, h, h->max ? 1 : 0);
	fprintf(f, "</text><text x=\"%d\" y=\"%d\" text-anchor=\"end\">", x0 + swatches * 16, y + 24);
	svg_value(f, h, h->max);
	fputs("</text>\n", f);
	fprintf(f, "<path d=\"M%d %d l3 -6 l3 6 z\" fill=\"#3b3\"/><text x=\"%d\" y=\"%d\">map</text>"
		"<path d=\"M%d %d l3 -6 l3 6 z\" fill=\"#e33\"/><text x=\"%d\" y=\"%d\">unmap</text>"
		"<path d=\"M%d %d l3 -6 l3 6 z\" fill=\"#39f\"/><text x=\"%d\" y=\"%d\">remap, madvise</text>\n</g>\n",
		x0 + 200, y + 10, x0 + 210, y + 10, x0 + 250, y + 10, x0 + 260, y + 10, x0 + 310, y + 10, x0 + 320, y + 10);
}

/* The time axis, its line at y: ticks at round seconds from the recording's start, labels below or above. */
static void svg_axis(FILE *f, uint64_t col_ns, int y, bool above)
{
	const uint64_t span = col_ns * MS_HEATMAP_COLS, step = ms_time_step(span, SVG_AXIS_TICKS);
	const int dec = ms_time_decimals(step);
	uint64_t t;
	double x;

	fprintf(f, "<g class=\"axis\">\n<path d=\"M%d %d h%d\" stroke=\"#888\"/>\n", SVG_LABEL, y,
		MS_HEATMAP_COLS * SVG_CW);
	for (t = 0; t <= span; t += step) {
		x = SVG_LABEL + (double)t / (double)col_ns * SVG_CW;
		fprintf(f, "<path d=\"M%.1f %d v%d\" stroke=\"#888\"/><text x=\"%.1f\" y=\"%d\" text-anchor=\"%s\">"
			"%.*f</text>\n", x, y, above ? -4 : 4, x, above ? y - 6 : y + 14, t ? "middle" : "start",
			dec, (double)t / 1e9);
		if (span - t < step)
			break;
	}
	fprintf(f, "<text x=\"4\" y=\"%d\">seconds from the start</text>\n</g>\n", above ? y - 6 : y + 14);
}

int ms_svg_heatmap_write(FILE *f, const struct ms_svg_heatmap *h)
{
	const int width = SVG_LABEL + MS_HEATMAP_COLS * SVG_CW + 30, step = SVG_BAND_H + SVG_GAP;
	const int bottom = SVG_TOP + (int)h->n * step;
	const struct ms_heatmap_band *b;
	struct svg_buf *o;
	size_t i;

	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-family=\"monospace\" "
		"font-size=\"11\">\n", width, bottom + 46);
	fprintf(f, "<text x=\"4\" y=\"16\">mapscope heatmap: time along x (a column: %.6f s), offsets in "
		"each region along y; %zu regions, %s", (double)h->col_ns / 1e9, h->n,
		h->order ? h->order : "the busiest first");
	if (h->hidden)
		fprintf(f, "; %zu more under %s", h->hidden, h->hidden_why ? h->hidden_why : "the threshold");
	if (h->heat) {
		fputs("; heat: ", f);
		ms_xml_str(f, h->heat);
	}
	fputs("</text>\n", f);
	svg_legend(f, h, 26);
	svg_axis(f, h->col_ns, SVG_TOP - 10, true);
	if (!(o = malloc(sizeof(*o))))
		return -ENOMEM;
	o->f = f;
	o->n = 0;
	memset(o->share, 0, sizeof(o->share));
	for (i = 0; i < h->n; i++) {
		if (!(b = h->bands ? &h->bands[i] : h->band(h->band_ctx, i))) {
			sb_flush(o);         /* the bands before it, as each was written */
			free(o);
			return -ENOMEM;
		}
		svg_band(o, h, b, SVG_TOP + (int)i * step);
	}
	sb_flush(o);
	free(o);
	svg_axis(f, h->col_ns, bottom - SVG_GAP + 8, false);
	if (h->losses) {
		fprintf(f, "<text class=\"losses\" x=\"4\" y=\"%d\" fill=\"#c00\">losses: ", bottom + 30);
		ms_xml_str(f, h->losses);
		fputs("</text>\n", f);
	}
	fputs("</svg>\n", f);
	return ferror(f) ? -EIO : 0;
}
