/*
 * The SVG writer: a band per region with its cells where their row and
 * column say, colours on the log scale, marks on the band's top edge, a
 * name from a recording escaped so the image stays well-formed XML, a
 * long one cut to fit its label; the colour legend and the time axis in
 * round seconds; and the scales the text grid shares.
 */
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "output/svg.h"

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;

	for (; (hay = strstr(hay, needle)); hay++)
		n++;
	return n;
}

static char *svg_of(const struct ms_heatmap_band *b, size_t n, uint32_t max, uint64_t col_ns)
{
	char *buf = NULL;
	size_t len, i;
	FILE *f = open_memstream(&buf, &len);
	struct ms_svg_heatmap h = { .bands = b, .n = n, .max = max, .col_ns = col_ns };

	for (i = 0; i < n; i++)
		h.total += b[i].samples;
	assert_non_null(f);
	assert_int_equal(ms_svg_heatmap_write(f, &h), 0);
	fclose(f);
	return buf;
}

static void bands_cells_and_marks(void **state)
{
	/* Row 0, column 0 (the band's bottom left), the top row's column 2; band 1's column 3. */
	static const struct ms_heatmap_cell cells0[] = { { 0, 10 }, { (MS_HEATMAP_ROWS - 1) * MS_HEATMAP_COLS + 2, 1 } };
	static const struct ms_heatmap_cell cells1[] = { { 3, 1 } };
	struct ms_region r[3] = {
		{ .id = 7, .pid = 42, .kind = MS_KIND_HEAP, .name = "[heap]" },
		{ .id = 9, .pid = 42, .kind = MS_KIND_FILE, .name = "/tmp/a<b>&\"c\"\xe9\x01.bin" },
		{ .id = 11, .pid = 42, .kind = MS_KIND_FILE,
		  .name = "/usr/lib/x86_64-linux-gnu/a-very-long-directory/and-a-long-library-name.so.6" },
	};
	struct ms_heatmap_mark marks[2] = { { .col = 5, .op = MS_OP_MAP }, { .col = 100, .op = MS_OP_UNMAP } };
	struct ms_heatmap_band b[3] = {
		{ .region = &r[0], .size = 3 << 20, .row_bytes = 4096, .samples = 11, .cells = cells0, .nr_cells = 2,
		  .marks = marks, .nr_marks = 2 },
		{ .region = &r[1], .size = 8192, .row_bytes = 4096, .samples = 1, .cells = cells1, .nr_cells = 1 },
		{ .region = &r[2], .size = 8192, .row_bytes = 4096, .samples = 0 },
	};
	char *svg;

	(void)state;
	svg = svg_of(b, 3, 10, 1000000);
	assert_non_null(strstr(svg, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg "));
	assert_non_null(strstr(svg, "</svg>\n"));
	assert_int_equal(count(svg, "<g class=\"band\""), 3);
	assert_non_null(strstr(svg, "data-region=\"7\" data-pid=\"42\" data-samples=\"11\""));
	/* Each label line short enough for its column: kind, size, pid; then samples and share. */
	assert_non_null(strstr(svg, ">heap, 3.0 MiB, pid 42</text>"));
	assert_non_null(strstr(svg, ">11 samples (91.67%)</text>"));
	assert_non_null(strstr(svg, ">file, 8 KiB, pid 42</text>"));
	/* Three cells in all, each with its count; the busiest red (hue 0), a single sample blue-ish. */
	assert_int_equal(count(svg, "\"><title>10</title></rect>"), 1);
	assert_int_equal(count(svg, "\"><title>1</title></rect>"), 2);
	assert_non_null(strstr(svg, "fill=\"hsl(0,90%,55%)\"><title>10</title>"));
	/* Band 0 is 84 px down (title, legend, axis), 32 rows of 3 px: row 0 at y 84 + 96 - 3, the top row at 84. */
	assert_non_null(strstr(svg, "<rect x=\"260\" y=\"177\" width=\"6\" height=\"3\""));
	assert_non_null(strstr(svg, "<rect x=\"272\" y=\"84\" width=\"6\" height=\"3\""));
	/* The marks: map green at column 5, unmap red at column 100, on the top edge. */
	assert_non_null(strstr(svg, "d=\"M290 84 l3 -6 l3 6 z\" fill=\"#3b3\"><title>map</title>"));
	assert_non_null(strstr(svg, "d=\"M860 84 l3 -6 l3 6 z\" fill=\"#e33\"><title>unmap</title>"));
	/* The name escaped; its control and non-ASCII bytes replaced. */
	assert_non_null(strstr(svg, ">/tmp/a&lt;b&gt;&amp;&quot;c&quot;??.bin</text>"));
	/* A long name cut in its middle to 37 characters, all of it in its title. */
	assert_non_null(strstr(svg, ">/usr/lib/x86_64-li\xe2\x80\xa6" "-library-name.so.6<title>"
			       "/usr/lib/x86_64-linux-gnu/a-very-long-directory/and-a-long-library-name.so.6</title>"));
	free(svg);
}

/*
 * Bands' shares of the samples, 300 bands of 1 to 600 samples (so some
 * sample counts recur, some share a memo slot, 256 apart): each as "%.2f"
 * of its own share, and every band's lines in one image, in order.
 */
static void many_bands_each_with_its_share(void **state)
{
	enum { N = 300 };
	static struct ms_region r[N];
	static struct ms_heatmap_band b[N];
	char *svg, *at, want[128], share[32];
	uint64_t total = 0;
	size_t i;

	(void)state;
	for (i = 0; i < N; i++) {
		r[i] = (struct ms_region){ .id = (uint32_t)i, .pid = 1, .kind = MS_KIND_ANON, .name = "" };
		b[i] = (struct ms_heatmap_band){ .region = &r[i], .size = 4096, .row_bytes = 4096,
						 .samples = i % 3 ? i * 2 + 1 : (i + 256) % 600 + 1 };
		total += b[i].samples;
	}
	svg = svg_of(b, N, 1, 1000000);
	assert_int_equal(count(svg, "<g class=\"band\""), N);
	for (i = 0, at = svg; i < N; i++) {
		snprintf(share, sizeof(share), "%.2f", 100.0 * (double)b[i].samples / (double)total);
		snprintf(want, sizeof(want), ">%" PRIu64 " samples (%s%%)</text>", b[i].samples, share);
		assert_non_null(at = strstr(at, want));
	}
	free(svg);
}

/* The legend: 11 swatches from 1 to the top; the axis: 0.128 s in ticks of 0.02 s, above and below. */
static void legend_and_axis(void **state)
{
	static const struct ms_heatmap_cell cells[] = { { 0, 1000 } };
	struct ms_region r = { .id = 1, .pid = 1, .kind = MS_KIND_ANON, .name = "" };
	struct ms_heatmap_band b = { .region = &r, .size = 4096, .row_bytes = 4096, .samples = 1000, .cells = cells,
				     .nr_cells = 1 };
	char *svg = svg_of(&b, 1, 1000, 1000000), *legend;

	(void)state;
	assert_non_null(legend = strstr(svg, "<g class=\"legend\">"));
	assert_non_null(strstr(legend, "heat: samples per cell (log scale):"));
	assert_int_equal(count(legend, "height=\"10\" fill=\"hsl("), 11);
	assert_non_null(strstr(legend, "<title>from 1</title>"));
	assert_int_equal(count(legend, "<title>from ") + count(legend, "<title>no cell</title>"), 11);
	assert_non_null(strstr(legend, "text-anchor=\"end\">1000</text>"));
	assert_int_equal(count(svg, "<g class=\"axis\">"), 2);
	assert_int_equal(count(svg, ">0.00</text>"), 2);
	assert_int_equal(count(svg, ">0.12</text>"), 2);
	assert_int_equal(count(svg, ">0.14</text>"), 0);            /* past the axis's end */
	assert_int_equal(count(svg, ">seconds from the start</text>"), 2);
	free(svg);
}

static void scales(void **state)
{
	char buf[32];

	(void)state;
	assert_int_equal(ms_heat_level(0, 100, 101), 0);
	assert_int_equal(ms_heat_level(1, 100, 101), 1);       /* log 1 = 0: the ramp's first colour */
	assert_int_equal(ms_heat_level(10, 100, 101), 51);     /* half way on a log scale */
	assert_int_equal(ms_heat_level(100, 100, 101), 100);
	assert_int_equal(ms_heat_level(1000, 100, 101), 100);  /* never past the end */
	assert_int_equal(ms_heat_level(5, 1, 9), 8);
	ms_size_text(4096, buf, sizeof(buf));
	assert_string_equal(buf, "4 KiB");
	ms_size_text(3ULL << 20, buf, sizeof(buf));
	assert_string_equal(buf, "3.0 MiB");
	ms_size_text(3ULL << 29, buf, sizeof(buf));
	assert_string_equal(buf, "1.5 GiB");
	/* Tenths as printf's "%.1f" rounds the exact quotient: a tie to even, else to the nearest. */
	ms_size_text(5ULL << 18, buf, sizeof(buf));              /* 1.25 MiB */
	assert_string_equal(buf, "1.2 MiB");
	ms_size_text(7ULL << 18, buf, sizeof(buf));              /* 1.75 MiB */
	assert_string_equal(buf, "1.8 MiB");
	ms_size_text((5ULL << 18) + 1, buf, sizeof(buf));        /* a byte past the tie */
	assert_string_equal(buf, "1.3 MiB");
	ms_size_text((1ULL << 20) - 1, buf, sizeof(buf));        /* under a MiB: KiB, cut */
	assert_string_equal(buf, "1023 KiB");
	ms_size_text((1ULL << 30) - 1, buf, sizeof(buf));        /* 1023.999... MiB */
	assert_string_equal(buf, "1024.0 MiB");
	ms_size_text(9ULL << 28, buf, sizeof(buf));              /* 2.25 GiB */
	assert_string_equal(buf, "2.2 GiB");
	ms_size_text(1ULL << 60, buf, sizeof(buf));              /* past 2^53 bytes, printf's own */
	assert_string_equal(buf, "1073741824.0 GiB");
	/* The least value of each level: the inverse of ms_heat_level. */
	assert_int_equal(ms_heat_level_min(1, 100, 101), 1);
	assert_int_equal(ms_heat_level(ms_heat_level_min(100, 100, 101), 100, 101), 100);
	assert_int_equal(ms_heat_level(ms_heat_level_min(100, 100, 101) - 1, 100, 101), 99);
	assert_int_equal(ms_heat_level_min(0, 100, 101), 0);
	assert_int_equal(ms_heat_level_min(5, 1, 10), 0);        /* max 1: only the top level is reached */
	assert_int_equal(ms_heat_level_min(9, 1, 10), 1);
	/* Round time steps: at most that many parts of the span. */
	assert_int_equal(ms_time_step(128000000, 8), 20000000);
	assert_int_equal(ms_time_step(1000000000, 10), 100000000);
	assert_int_equal(ms_time_step(7, 8), 1);
	assert_int_equal(ms_time_decimals(20000000), 2);
	assert_int_equal(ms_time_decimals(1000000000), 0);
	assert_int_equal(ms_time_decimals(1), 9);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(bands_cells_and_marks),
		cmocka_unit_test(legend_and_axis),
		cmocka_unit_test(many_bands_each_with_its_share),
		cmocka_unit_test(scales),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
