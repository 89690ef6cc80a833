/* ockpt-info FILE: read one file with the reference reader and print its JSON description
 * (the contract in README.md). Exit 0 on success, 1 when the file is refused (the error object
 * is printed), 2 on usage or I/O errors. The tool, unlike the library, allocates: the file
 * buffer and the scratch memory lent to ockpt_read_scratch(). --no-scratch reads with the
 * allocation-free path instead (both must print the same thing). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ockpt.h"

static void print_json_string(const char *s) {
  putchar('"');
  for (; *s != '\0'; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\')
      printf("\\%c", c);
    else if (c < 0x20)
      printf("\\u%04x", c);
    else
      putchar(c);
  }
  putchar('"');
}

static void print_block(const ockpt_file *f, unsigned block) {
  uint32_t i;
  int first = 1;
  putchar('[');
  for (i = 0; i < f->num_entries; i++) {
    uint64_t o = 0, n = 0;
    if (ockpt_entry(f, block, i, &o, &n) != 1) continue;
    printf("%s{\"index\": %lu, \"offset\": %llu, \"nbytes\": %llu, \"crc32\": %lu}",
           first ? "" : ", ", (unsigned long)i, (unsigned long long)o, (unsigned long long)n,
           (unsigned long)ockpt_crc32(0, f->buf + o, (size_t)n));
    first = 0;
  }
  putchar(']');
}

static void print_file(const ockpt_file *f) {
  static const char *const dialects[] = {"null", "\"onert\"", "\"onert-micro\""};
  printf("{\"revision\": \"%s\", \"dialect\": %s, \"file_size\": %llu, \"tensors\": ",
         f->revision == OCKPT_REV_WOF ? "wof" : "v1", dialects[f->dialect],
         (unsigned long long)f->file_size);
  print_block(f, OCKPT_BLOCK_WEIGHTS);
  printf(", \"optimizer\": ");
  if (f->optimizer == OCKPT_OPT_NONE) {
    printf("null");
  } else if (f->optimizer == OCKPT_OPT_SGD) {
    printf("{\"kind\": \"sgd\", \"slots\": {}}");
  } else {
    printf("{\"kind\": \"adam\", \"slots\": {\"m\": ");
    print_block(f, OCKPT_BLOCK_M);
    printf(", \"v\": ");
    print_block(f, OCKPT_BLOCK_V);
    printf("}}");
  }
  if (f->has_footer)
    printf(", \"state\": {\"step\": %lu, \"epoch\": %lu}}\n", (unsigned long)f->step,
           (unsigned long)f->epoch);
  else
    printf(", \"state\": {}}\n");
}

static void print_error(const ockpt_result *r) {
  printf("{\"error\": {\"code\": ");
  print_json_string(ockpt_error_name(r->code));
  printf(", \"field\": ");
  print_json_string(r->field);
  printf(", \"offset\": %llu, \"message\": ", (unsigned long long)r->offset);
  print_json_string(r->message);
  printf("}}\n");
}

/* Whole file into a malloc'd buffer; NULL on I/O error or when memory runs out. */
static unsigned char *slurp(const char *path, size_t *len) {
  FILE *fp = fopen(path, "rb");
  unsigned char *buf = NULL;
  size_t cap = 0, n = 0;
  int failed = 0;
  if (fp == NULL) return NULL;
  for (;;) {
    size_t got;
    if (n == cap) {
      unsigned char *grown;
      size_t want = cap != 0 ? cap * 2 : 65536;
      grown = want > cap ? (unsigned char *)realloc(buf, want) : NULL;
      if (grown == NULL) {
        failed = 1;
        break;
      }
      buf = grown;
      cap = want;
    }
    got = fread(buf + n, 1, cap - n, fp);
    n += got;
    if (got == 0) break;
  }
  if (failed || ferror(fp)) {
    free(buf);
    buf = NULL;
  }
  fclose(fp);
  *len = n;
  return buf;
}

int main(int argc, char **argv) {
  const char *path = NULL;
  int use_scratch = 1, usage = 0, k, rc;
  size_t len = 0, count = 0;
  unsigned char *buf;
  uint64_t *scratch = NULL;
  ockpt_file f;
  ockpt_result r;
  for (k = 1; k < argc; k++) {
    if (strcmp(argv[k], "--no-scratch") == 0)
      use_scratch = 0;
    else if (path == NULL)
      path = argv[k];
    else
      usage = 1;
  }
  if (path == NULL || usage) {
    fprintf(stderr, "usage: ockpt-info [--no-scratch] FILE\n");
    return 2;
  }
  buf = slurp(path, &len);
  if (buf == NULL) {
    fprintf(stderr, "ockpt-info: cannot read %s\n", path);
    return 2;
  }
  if (use_scratch) {
    count = ockpt_scratch_count(buf, len);
    if (count != 0) {
      scratch = (uint64_t *)malloc(count * sizeof *scratch);
      if (scratch == NULL) count = 0; /* the reader falls back to the allocation-free path */
    }
  }
  r = ockpt_read_scratch(buf, len, &f, scratch, count);
  if (r.code == OCKPT_OK) {
    print_file(&f);
    rc = 0;
  } else {
    print_error(&r);
    rc = 1;
  }
  free(scratch);
  free(buf);
  if (fflush(stdout) != 0) return 2;
  return rc;
}
