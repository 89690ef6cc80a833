/* libFuzzer harness: clang -fsanitize=fuzzer,address,undefined (see Makefile, `make fuzz`).
 *
 * Besides "no crash, no sanitizer report", it checks properties the spec implies, so a logic
 * slip aborts too:
 *   - the allocation-free path and the scratch path give the same result and the same entries;
 *   - the single-revision readers agree with the dispatcher;
 *   - every present entry lies inside the file and inside its block's data area, and the sizes
 *     of a block's present entries add up to its data area exactly (rule 9: no hole, no overlap);
 *   - an error's field is a non-empty string and its offset is inside the file (or 0).
 */
#include <stdlib.h>
#include <string.h>

#include "ockpt.h"

#define SCRATCH_MAX (1u << 16)
static uint64_t scratch[SCRATCH_MAX];

static void check(int ok) {
  if (!ok) abort();
}

static void same_result(const ockpt_result *a, const ockpt_result *b) {
  check(a->code == b->code);
  check(a->offset == b->offset);
  check(strcmp(a->field, b->field) == 0);
}

static volatile uint32_t sink;

static void walk(const ockpt_file *f, const ockpt_file *g) {
  unsigned b;
  check(f->revision == g->revision && f->dialect == g->dialect && f->num_blocks == g->num_blocks);
  for (b = 0; b < f->num_blocks; b++) {
    const ockpt_block *bl = &f->blocks[b];
    uint64_t total = 0;
    uint32_t i;
    check(bl->data_start <= bl->end && bl->end <= f->file_size);
    for (i = 0; i < f->num_entries; i++) {
      uint64_t o = 0, n = 0, o2 = 0, n2 = 0;
      int p = ockpt_entry(f, b, i, &o, &n);
      check(p == ockpt_entry(g, b, i, &o2, &n2));
      if (p != 1) continue;
      check(o == o2 && n == n2);
      check(o >= bl->data_start && n <= bl->end - o);
      total += n;
      sink ^= ockpt_crc32(0, f->buf + o, (size_t)n);
    }
    check(total == bl->end - bl->data_start);
    check(ockpt_entry(f, b, f->num_entries, NULL, NULL) == -1);
  }
  check(ockpt_entry(f, f->num_blocks, 0, NULL, NULL) == -1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  ockpt_file f, g, h;
  ockpt_result r = ockpt_read(data, size, &f);
  size_t need = ockpt_scratch_count(data, size);
  ockpt_result rs = ockpt_read_scratch(data, size, &g, scratch, need <= SCRATCH_MAX ? need : 0);
  same_result(&r, &rs);
  if (r.code != OCKPT_OK) {
    check(r.field[0] != '\0' && r.offset <= size && r.message != NULL);
    check(f.revision == OCKPT_REV_NONE);
    return 0;
  }
  walk(&f, &g);
  if (f.revision == OCKPT_REV_V1) {
    check(ockpt_read_v1(data, size, &h).code == OCKPT_OK);
  } else {
    check(ockpt_read_v1(data, size, &h).code != OCKPT_OK);
    check(ockpt_read_wof(data, size, &h).code == OCKPT_OK);
  }
  return 0;
}
