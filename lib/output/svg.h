/*
 * Internal: the SVG writer (heatmap --format svg) and the scales the
 * heatmap's text grid shares with it. Text from a recording goes through
 * ms_xml_str(), so that the image is well-formed XML whatever the bytes.
 */
#ifndef MS_OUTPUT_SVG_H
#define MS_OUTPUT_SVG_H

#include <stdbool.h>
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

/* The least v whose ms_heat_level() is level (0: no value has that level). */
uint32_t ms_heat_level_min(int level, uint32_t max, int levels);
/* A round step (1, 2 or 5 times a power of ten, in ns) that cuts span_ns into at most most parts. */
uint64_t ms_time_step(uint64_t span_ns, unsigned int most);
/* The decimals that show multiples of step_ns in seconds exactly. */
int ms_time_decimals(uint64_t step_ns);

struct ms_svg_heatmap {
	const struct ms_heatmap_band *bands;   /* drawn top to bottom */
	size_t n;
	/* Where bands is NULL: band i, made as it is drawn (NULL: no memory), so that many cost one. */
	const struct ms_heatmap_band *(*band)(void *ctx, size_t i);
	void *band_ctx;
	uint32_t max;                          /* the largest cell: the colour scale's top */
	uint64_t col_ns;                       /* a column's width in time */
	uint64_t total;                        /* the samples shares are of (0: none) */
	const char *order;                     /* how the bands are ordered, in words; NULL: the busiest first */
	size_t hidden;                         /* bands left out, and why (NULL: "the threshold") */
	const char *hidden_why;
	const char *heat;                      /* what the cells' heat is, or NULL for the samples */
	bool access;                           /* draw the bands' access_cells, not their cells */
	const char *losses;                    /* what the recording lost, or NULL */
};

/*
 * The heatmap as an SVG image: a title, a colour legend, a time axis in
 * seconds from the recording's start above and below, and one band each of
 * h->bands, labelled to fit. 0, or -EIO when f reports an error, or
 * -ENOMEM when h->band() made no band (the image is then cut short).
 */
int ms_svg_heatmap_write(FILE *f, const struct ms_svg_heatmap *h);

#endif
