/*
 * The SVG writer: a band per region with its cells where their row and
 * column say, colours on the log scale, marks on the band's top edge, a
 * name from a recording escaped so the image stays well-formed XML; and
 * the scales the text grid shares.
 */
#include <errno.h>
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
	size_t len;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(ms_svg_heatmap_write(f, b, n, max, col_ns, NULL, NULL), 0);
	fclose(f);
	return buf;
}

static void bands_cells_and_marks(void **state)
{
	static uint32_t cells[2][MS_HEATMAP_ROWS * MS_HEATMAP_COLS];
	struct ms_region r[2] = {
		{ .id = 7, .pid = 42, .kind = MS_KIND_HEAP, .name = "[heap]" },
		{ .id = 9, .pid = 42, .kind = MS_KIND_FILE, .name = "/tmp/a<b>&\"c\"\xe9\x01.bin" },
	};
	struct ms_heatmap_mark marks[2] = { { .col = 5, .op = MS_OP_MAP }, { .col = 100, .op = MS_OP_UNMAP } };
	struct ms_heatmap_band b[2] = {
		{ .region = &r[0], .size = 3 << 20, .samples = 11, .cells = cells[0], .marks = marks, .nr_marks = 2 },
		{ .region = &r[1], .size = 8192, .samples = 1, .cells = cells[1] },
	};
	char *svg;

	(void)state;
	cells[0][0] = 10;                               /* row 0, column 0: the band's bottom left */
	cells[0][(MS_HEATMAP_ROWS - 1) * MS_HEATMAP_COLS + 2] = 1;   /* the top row, column 2 */
	cells[1][3] = 1;
	svg = svg_of(b, 2, 10, 1000000);
	assert_non_null(strstr(svg, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg "));
	assert_non_null(strstr(svg, "</svg>\n"));
	assert_int_equal(count(svg, "<g class=\"band\""), 2);
	assert_non_null(strstr(svg, "data-region=\"7\" data-pid=\"42\" data-samples=\"11\""));
	assert_non_null(strstr(svg, "heap, 3.0 MiB, pid 42: 11 samples"));
	assert_non_null(strstr(svg, "file, 8 KiB, pid 42: 1 samples"));
	/* Three cells in all, each with its count; the busiest red (hue 0), a single sample blue-ish. */
	assert_int_equal(count(svg, "<title>10</title>"), 1);
	assert_int_equal(count(svg, "<title>1</title>"), 2);
	assert_non_null(strstr(svg, "fill=\"hsl(0,90%,55%)\"><title>10</title>"));
	/* Band 0 is 30 px down, 32 rows of 3 px: row 0 is at y 30 + 96 - 3, the top row at y 30. */
	assert_non_null(strstr(svg, "<rect x=\"260\" y=\"123\" width=\"6\" height=\"3\""));
	assert_non_null(strstr(svg, "<rect x=\"272\" y=\"30\" width=\"6\" height=\"3\""));
	/* The marks: map green at column 5, unmap red at column 100, on the top edge. */
	assert_non_null(strstr(svg, "d=\"M290 30 l3 -6 l3 6 z\" fill=\"#3b3\"><title>map</title>"));
	assert_non_null(strstr(svg, "d=\"M860 30 l3 -6 l3 6 z\" fill=\"#e33\"><title>unmap</title>"));
	/* The name escaped; its control and non-ASCII bytes replaced. */
	assert_non_null(strstr(svg, ">/tmp/a&lt;b&gt;&amp;&quot;c&quot;??.bin</text>"));
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
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(bands_cells_and_marks),
		cmocka_unit_test(scales),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
