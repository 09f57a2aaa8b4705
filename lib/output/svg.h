/*
 * Internal: the SVG writer (heatmap --format svg) and the scales the
 * heatmap's text grid shares with it. Text from a recording goes through
 * ms_xml_str(), so that the image is well-formed XML whatever the bytes.
 */
#ifndef MS_OUTPUT_SVG_H
#define MS_OUTPUT_SVG_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <mapscope/heatmap.h>

/* 0 for an empty cell, else 1..levels-1 on a log scale of the largest, max. */
int ms_heat_level(uint32_t v, uint32_t max, int levels);
/* "12 KiB", "3.5 MiB", "1.2 GiB". */
void ms_size_text(uint64_t bytes, char *buf, size_t len);
/* s as XML character data or an attribute's value: & < > " escaped; control and non-ASCII bytes become '?'. */
void ms_xml_str(FILE *f, const char *s);

/*
 * The heatmap as an SVG image: one band each of b[0, n) (max: the largest
 * cell, col_ns: a column's width in time; heat: what the cells' heat is,
 * said in the title, or NULL for the samples; losses: what the recording
 * lost, a line drawn under the bands, or NULL). 0, or -EIO when f reports
 * an error.
 */
int ms_svg_heatmap_write(FILE *f, const struct ms_heatmap_band *b, size_t n, uint32_t max, uint64_t col_ns,
			 const char *heat, const char *losses);

#endif
