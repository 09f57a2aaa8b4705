/*
 * The heatmap as SVG: one band per region, a cell's colour on a log scale
 * of the busiest cell's samples, the changes marked on the band's top edge.
 * The scales are shared with the heatmap's text grid.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>

#include "output/svg.h"

/* Pixels: a cell's width and height, the label column, the title, a band and the gap below it. */
#define SVG_CW 6
#define SVG_RH 3
#define SVG_LABEL 260
#define SVG_TOP 30
#define SVG_BAND_H (MS_HEATMAP_ROWS * SVG_RH)
#define SVG_GAP 26

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

/* One region's band, its top at y: a label, the cells, the marks. */
static void svg_band(FILE *f, const struct ms_heatmap_band *b, int y, uint32_t max)
{
	char size[32];
	size_t k, row, col;
	uint32_t v;
	int lv, hue;

	ms_size_text(b->size, size, sizeof(size));
	fprintf(f, "<g class=\"band\" data-region=\"%u\" data-pid=\"%u\" data-samples=\"%" PRIu64 "\">\n",
		b->region->id, b->region->pid, b->samples);
	fprintf(f, "<text x=\"4\" y=\"%d\">", y + 14);
	ms_xml_str(f, b->region->name[0] ? b->region->name : "[anon]");
	fprintf(f, "</text>\n<text x=\"4\" y=\"%d\">%s, %s, pid %u: %" PRIu64 " samples</text>\n", y + 28,
		ms_region_kind_name(b->region->kind), size, b->region->pid, b->samples);
	fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"#111\"/>\n", SVG_LABEL, y,
		MS_HEATMAP_COLS * SVG_CW, SVG_BAND_H);
	for (row = 0; row < MS_HEATMAP_ROWS; row++)
		for (col = 0; col < MS_HEATMAP_COLS; col++) {
			if (!(v = b->cells[row * MS_HEATMAP_COLS + col]))
				continue;
			lv = ms_heat_level(v, max, 101);
			hue = 240 - lv * 240 / 100;   /* blue (few) to red (most) */
			fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"hsl(%d,90%%,%d%%)\">"
				"<title>%u</title></rect>\n", SVG_LABEL + (int)col * SVG_CW,
				y + SVG_BAND_H - (int)(row + 1) * SVG_RH, SVG_CW, SVG_RH, hue, 35 + lv / 5, v);
		}
	for (k = 0; k < b->nr_marks; k++)
		fprintf(f, "<path class=\"mark\" d=\"M%d %d l3 -6 l3 6 z\" fill=\"%s\"><title>%s</title></path>\n",
			SVG_LABEL + (int)b->marks[k].col * SVG_CW, y, b->marks[k].op == MS_OP_UNMAP ? "#e33" :
			b->marks[k].op == MS_OP_MAP ? "#3b3" : "#39f", ms_aspace_op_name(b->marks[k].op));
	fputs("</g>\n", f);
}

int ms_svg_heatmap_write(FILE *f, const struct ms_heatmap_band *b, size_t n, uint32_t max, uint64_t col_ns,
			 const char *heat, const char *losses)
{
	const int width = SVG_LABEL + MS_HEATMAP_COLS * SVG_CW + 20, step = SVG_BAND_H + SVG_GAP;
	size_t i;

	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-family=\"monospace\" "
		"font-size=\"11\">\n", width, SVG_TOP + (int)n * step + 30);
	fprintf(f, "<text x=\"4\" y=\"16\">mapscope heatmap: time along x (a column: %.6f s), offsets in "
		"each region along y; %zu regions", (double)col_ns / 1e9, n);
	if (heat) {
		fputs("; heat: ", f);
		ms_xml_str(f, heat);
	}
	fputs("</text>\n", f);
	for (i = 0; i < n; i++)
		svg_band(f, &b[i], SVG_TOP + (int)i * step, max);
	fprintf(f, "<text x=\"%d\" y=\"%d\">0 s</text><text x=\"%d\" y=\"%d\" text-anchor=\"end\">%.6f s</text>\n",
		SVG_LABEL, SVG_TOP + (int)n * step + 10, SVG_LABEL + MS_HEATMAP_COLS * SVG_CW,
		SVG_TOP + (int)n * step + 10, (double)(col_ns * MS_HEATMAP_COLS) / 1e9);
	if (losses) {
		fprintf(f, "<text class=\"losses\" x=\"4\" y=\"%d\" fill=\"#c00\">losses: ", SVG_TOP + (int)n * step + 26);
		ms_xml_str(f, losses);
		fputs("</text>\n", f);
	}
	fputs("</svg>\n", f);
	return ferror(f) ? -EIO : 0;
}
