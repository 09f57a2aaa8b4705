/* Internal: perf.data on-disk structures (tools/perf/Documentation/perf.data-file-format.txt). */
#ifndef MS_PERFDATA_FORMAT_H
#define MS_PERFDATA_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#include <linux/perf_event.h>

#define PERF_MAGIC2 0x32454c4946524550ULL    /* "PERFILE2" */
#define PERF_MAGIC1 0x454c494646524550ULL    /* "PERFFILE": perf's first layout, before 2.6.37 */
#ifndef PERF_RECORD_MISC_BUILD_ID_SIZE
#define PERF_RECORD_MISC_BUILD_ID_SIZE (1 << 15)
#endif

struct perf_file_section {
	uint64_t offset;
	uint64_t size;
};

struct perf_file_header {
	uint64_t magic;
	uint64_t size;                   /* of this header */
	uint64_t attr_size;              /* of one entry in the attrs section */
	struct perf_file_section attrs;
	struct perf_file_section data;
	struct perf_file_section event_types;
	uint64_t adds_features[4];
};

struct perf_pipe_file_header {
	uint64_t magic;
	uint64_t size;
};

/*
 * Kernel records as types (libperf's perf/event.h): code names a record's
 * fields here, never by offset. Each struct ends where the record's
 * variable part begins; the sample_id_all trailer, where the event has
 * one, follows that part at the record's end (ms_sample_id's layout for
 * the records mapscope synthesises).
 */
struct perf_record_mmap2 {
	struct perf_event_header header;
	uint32_t pid, tid;
	uint64_t start, len, pgoff;
	union {
		struct {
			uint32_t maj, min;
			uint64_t ino, ino_generation;
		};
		struct {                 /* with PERF_RECORD_MISC_MMAP_BUILD_ID */
			uint8_t build_id_size;
			uint8_t reserved1;
			uint16_t reserved2;
			uint8_t build_id[20];
		};
	};
	uint32_t prot, flags;
	char filename[];
};

struct perf_record_comm {
	struct perf_event_header header;
	uint32_t pid, tid;
	char comm[];
};

/* PERF_RECORD_FORK and PERF_RECORD_EXIT. */
struct perf_record_fork {
	struct perf_event_header header;
	uint32_t pid, ppid;
	uint32_t tid, ptid;
	uint64_t time;
};

/*
 * The head of every sample mapscope record's events write: IDENTIFIER
 * first (as perf needs among several events), then IP and TID.
 */
struct perf_record_sample_head {
	struct perf_event_header header;
	uint64_t identifier;
	uint64_t ip;
	uint32_t pid, tid;
};

/* The bytes of a record's variable part: from field to the end of the record. */
#define perf_record_rest(rec, field) \
	((size_t)(rec)->header.size > offsetof(__typeof__(*(rec)), field) ? \
	 (size_t)(rec)->header.size - offsetof(__typeof__(*(rec)), field) : 0)

/* Whether the record holds every byte of field (libperf's event_contains). */
#define perf_record_contains(rec, field) \
	((size_t)(rec)->header.size >= offsetof(__typeof__(*(rec)), field) + sizeof((rec)->field))

/* Where TIME lies in a sample's body (after its header), for a sample_type t that has TIME. */
static inline unsigned int ms_sample_time_off(uint64_t t)
{
	return 8 * (!!(t & PERF_SAMPLE_IDENTIFIER) + !!(t & PERF_SAMPLE_IP) + !!(t & PERF_SAMPLE_TID));
}

/* Where TIME lies from the end of a record other than a sample (sample_id_all, TIME in t). */
static inline unsigned int ms_trailer_time_from_end(uint64_t t)
{
	/* TID TIME [ID] [STREAM_ID] [CPU] [IDENTIFIER] */
	return 8 * (1 + !!(t & PERF_SAMPLE_ID) + !!(t & PERF_SAMPLE_STREAM_ID) + !!(t & PERF_SAMPLE_CPU) +
		    !!(t & PERF_SAMPLE_IDENTIFIER));
}

/* User record types perf adds after the kernel's. */
enum {
	PERF_RECORD_HEADER_ATTR = 64,
	PERF_RECORD_HEADER_TRACING_DATA = 66,
	PERF_RECORD_HEADER_BUILD_ID = 67,
	PERF_RECORD_FINISHED_ROUND = 68,
	PERF_RECORD_AUXTRACE = 71,       /* followed by its AUX data, outside header.size */
	PERF_RECORD_EVENT_UPDATE = 78,   /* u64 type, u64 id, then what type says */
	PERF_RECORD_HEADER_FEATURE = 80,
	PERF_RECORD_COMPRESSED = 81,     /* zstd; header.size need not be a multiple of 8 */
	PERF_RECORD_COMPRESSED2 = 83,    /* zstd, u64 data_size first, padded to 8 */
};

/* EVENT_UPDATE types. */
enum { PERF_EVENT_UPDATE_NAME = 2 };

/* Feature bits. */
/*
 * How mapscope's VERSION text ends in a file whose records all lie in time
 * order: its writer saw every record so and says it when it closes the
 * file. A reader needs no sort queue for it; perf reads the text as any
 * version's. (A new feature bit would not do: perf inject 6.1 crashes on
 * one it does not know.)
 */
#define MS_VERSION_IN_ORDER ", records in time order"

enum {
	HEADER_TRACING_DATA = 1,
	HEADER_BUILD_ID = 2,
	HEADER_HOSTNAME = 3,
	HEADER_OSRELEASE = 4,
	HEADER_VERSION = 5,
	HEADER_ARCH = 6,
	HEADER_NRCPUS = 7,
	HEADER_CPUDESC = 8,
	HEADER_CPUID = 9,
	HEADER_TOTAL_MEM = 10,
	HEADER_CMDLINE = 11,
	HEADER_EVENT_DESC = 12,
	HEADER_CPU_TOPOLOGY = 13,
	HEADER_NUMA_TOPOLOGY = 14,
	HEADER_PMU_MAPPINGS = 16,
	HEADER_CACHE = 20,
	HEADER_SAMPLE_TIME = 21,
	HEADER_MEM_TOPOLOGY = 22,
	HEADER_BPF_PROG_INFO = 25,
	HEADER_BPF_BTF = 26,
	HEADER_PMU_CAPS = 31,
	HEADER_CLOCKID = 23,
	HEADER_COMPRESSED = 27,
	HEADER_CLOCK_DATA = 29,
	HEADER_FEAT_BITS = 256,
};

#endif
