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
#include <string.h>

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

void ms_size_text(uint64_t bytes, char *buf, size_t len)
{
	if (bytes >= 1ULL << 30)
		snprintf(buf, len, "%.1f GiB", (double)bytes / (1ULL << 30));
	else if (bytes >= 1ULL << 20)
		snprintf(buf, len, "%.1f MiB", (double)bytes / (1ULL << 20));
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

/* v in decimal at out: the end. */
static char *svg_put_u(char *out, uint32_t v)
{
	char tmp[10];
	int n = 0;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n)
		*out++ = tmp[--n];
	return out;
}

static char *svg_put_s(char *out, const char *s)
{
	size_t n = strlen(s);

	memcpy(out, s, n);
	return out + n;
}

/*
 * One cell, its line built by hand and written once, not through printf:
 * a band has up to MS_HEATMAP_COLS * MS_HEATMAP_ROWS of them, and printf's
 * parsing was most of their cost. The same bytes as svg_fill() and the
 * "%d" and "%u" it stands for (x, y and lv are never negative).
 */
static void svg_cell(FILE *f, int x, int y, int lv, uint32_t v)
{
	char line[160], *at = line;

	at = svg_put_s(at, "<rect x=\"");
	at = svg_put_u(at, (uint32_t)x);
	at = svg_put_s(at, "\" y=\"");
	at = svg_put_u(at, (uint32_t)y);
	at = svg_put_s(at, "\" width=\"" SVG_STR(SVG_CW) "\" height=\"" SVG_STR(SVG_RH) "\" fill=\"hsl(");
	at = svg_put_u(at, (uint32_t)(240 - lv * 240 / 100));
	at = svg_put_s(at, ",90%,");
	at = svg_put_u(at, (uint32_t)(35 + lv / 5));
	at = svg_put_s(at, "%)\"><title>");
	at = svg_put_u(at, v);
	at = svg_put_s(at, "</title></rect>\n");
	fwrite(line, 1, (size_t)(at - line), f);
}

/* Text from a recording, cut in its middle to fit a label line; all of it in the hover title. */
static void svg_label(FILE *f, int y, const char *s, const char *cls)
{
	char cut[SVG_LABEL_CHARS + 1];
	size_t len = strlen(s), head = (SVG_LABEL_CHARS - 1) / 2;

	fprintf(f, "<text x=\"4\" y=\"%d\"%s%s%s>", y, cls ? " class=\"" : "", cls ? cls : "", cls ? "\"" : "");
	if (len <= SVG_LABEL_CHARS) {
		ms_xml_str(f, s);
	} else {
		memcpy(cut, s, head);
		cut[head] = '\0';
		ms_xml_str(f, cut);
		fputs("\xe2\x80\xa6", f);            /* U+2026, the ellipsis */
		ms_xml_str(f, s + len - (SVG_LABEL_CHARS - 1 - head));
		fputs("<title>", f);
		ms_xml_str(f, s);
		fputs("</title>", f);
	}
	fputs("</text>\n", f);
}

/* One region's band, its top at y: a label that fits its column, the cells, the marks. */
static void svg_band(FILE *f, const struct ms_svg_heatmap *h, const struct ms_heatmap_band *b, int y)
{
	const struct ms_heatmap_cell *cells = h->access ? b->access_cells : b->cells;
	size_t nr = h->access ? b->nr_access_cells : b->nr_cells;
	char size[32], row[32];
	size_t k, rw, col;

	ms_size_text(b->size, size, sizeof(size));
	ms_size_text(b->row_bytes, row, sizeof(row));
	fprintf(f, "<g class=\"band\" data-region=\"%u\" data-pid=\"%u\" data-samples=\"%" PRIu64 "\">\n",
		b->region->id, b->region->pid, b->samples);
	svg_label(f, y + 14, b->region->name[0] ? b->region->name : "[anon]", "name");
	fprintf(f, "<text x=\"4\" y=\"%d\">%s, %s, pid %u</text>\n", y + 28, ms_region_kind_name(b->region->kind),
		size, b->region->pid);
	fprintf(f, "<text x=\"4\" y=\"%d\">%" PRIu64 " samples (%.2f%%)</text>\n", y + 42, b->samples,
		h->total ? 100.0 * (double)b->samples / (double)h->total : 0.0);
	fprintf(f, "<text x=\"4\" y=\"%d\" fill=\"#666\">region %u; a row: %s</text>\n", y + 56, b->region->id, row);
	fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"#111\"/>\n", SVG_LABEL, y,
		MS_HEATMAP_COLS * SVG_CW, SVG_BAND_H);
	for (k = 0; k < nr; k++) {
		rw = cells[k].index / MS_HEATMAP_COLS;
		col = cells[k].index % MS_HEATMAP_COLS;
		svg_cell(f, SVG_LABEL + (int)col * SVG_CW, y + SVG_BAND_H - (int)(rw + 1) * SVG_RH,
			 ms_heat_level(cells[k].value, h->max, 101), cells[k].value);
	}
	for (k = 0; k < b->nr_marks; k++)
		fprintf(f, "<path class=\"mark\" d=\"M%d %d l3 -6 l3 6 z\" fill=\"%s\"><title>%s</title></path>\n",
			SVG_LABEL + (int)b->marks[k].col * SVG_CW, y, b->marks[k].op == MS_OP_UNMAP ? "#e33" :
			b->marks[k].op == MS_OP_MAP ? "#3b3" : "#39f", ms_aspace_op_name(b->marks[k].op));
	fputs("</g>\n", f);
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
	for (i = 0; i < h->n; i++) {
		if (!(b = h->bands ? &h->bands[i] : h->band(h->band_ctx, i)))
			return -ENOMEM;
		svg_band(f, h, b, SVG_TOP + (int)i * step);
	}
	svg_axis(f, h->col_ns, bottom - SVG_GAP + 8, false);
	if (h->losses) {
		fprintf(f, "<text class=\"losses\" x=\"4\" y=\"%d\" fill=\"#c00\">losses: ", bottom + 30);
		ms_xml_str(f, h->losses);
		fputs("</text>\n", f);
	}
	fputs("</svg>\n", f);
	return ferror(f) ? -EIO : 0;
}
