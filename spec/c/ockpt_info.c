/* ockpt-info FILE: read one file with the reference reader and print its JSON description
 * (the contract in README.md). Exit 0 on success, 1 when the file is refused (the error object
 * is printed), 2 on usage or I/O errors. The tool, unlike the library, allocates: the file
 * buffer and the scratch memory lent to ockpt_read_scratch(). --no-scratch reads with the
 * allocation-free path instead (both must print the same thing). --stream reads the file
 * through ockpt_read_stream() and a read-at-offset callback (fseek/fread) instead of a buffer:
 * the same output again (tests/ckit/test_c_stream.py). --stream-size=N streams and tells the reader
 * the file has N bytes (to test a read callback that fails). --deferred streams with
 * ockpt_read_stream_deferred() and then runs the deferred checks (ockpt_verify_deferred()) before
 * it prints: the same output again. */
#include <float.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ockpt.h"

/* A UTF-8 string (already validated by the reader) as Python's json.dumps(ensure_ascii=True)
 * writes it: \" \\ \b \f \n \r \t, every other byte outside ' '..'~' as \uxxxx
 * (lower-case hex), code points above U+FFFF as a surrogate pair. */
static void print_utf8(const uint8_t *p, uint64_t n) {
  uint64_t k = 0;
  putchar('"');
  while (k < n) {
    unsigned long cp = p[k];
    unsigned more = 0, m;
    if (cp >= 0xF0) {
      cp &= 0x07;
      more = 3;
    } else if (cp >= 0xE0) {
      cp &= 0x0F;
      more = 2;
    } else if (cp >= 0xC0) {
      cp &= 0x1F;
      more = 1;
    }
    for (m = 1; m <= more && k + m < n; m++) cp = (cp << 6) | (p[k + m] & 0x3Fu);
    k += more + 1;
    switch (cp) {
    case '"': printf("\\\""); break;
    case '\\': printf("\\\\"); break;
    case '\b': printf("\\b"); break;
    case '\f': printf("\\f"); break;
    case '\n': printf("\\n"); break;
    case '\r': printf("\\r"); break;
    case '\t': printf("\\t"); break;
    default:
      if (cp >= 0x20 && cp <= 0x7E) {
        putchar((int)cp);
      } else if (cp < 0x10000) {
        printf("\\u%04lx", cp);
      } else {
        cp -= 0x10000;
        printf("\\u%04lx\\u%04lx", 0xD800 + (cp >> 10), 0xDC00 + (cp & 0x3FF));
      }
    }
  }
  putchar('"');
}

/* A double as Python's repr() (and so json.dumps) writes it: the shortest digits that read back
 * to the same value, in fixed notation when the decimal exponent is in -4 .. 15 (with ".0" when
 * integral), else d.ddde+XX. Non-finite values as TOOLKIT.md section 1 says: {"float": "nan"},
 * {"float": "inf"}, {"float": "-inf"}. */
static void print_float(double x) {
  char buf[40], digits[20];
  int p, nd = 0, exp10, decpt, k;
  const char *q;
  if (x != x) { /* TOOLKIT.md section 1: JSON has no number for it */
    printf("{\"float\": \"nan\"}");
    return;
  }
  if (x > DBL_MAX || x < -DBL_MAX) {
    printf(x > 0 ? "{\"float\": \"inf\"}" : "{\"float\": \"-inf\"}");
    return;
  }
  for (p = 1; p <= 17; p++) {
    snprintf(buf, sizeof buf, "%.*e", p - 1, x);
    if (strtod(buf, NULL) == x) break;
  }
  q = buf;
  if (*q == '-') {
    putchar('-');
    q++;
  }
  for (; *q != 'e'; q++)
    if (*q >= '0' && *q <= '9') digits[nd++] = *q;
  exp10 = atoi(q + 1);
  while (nd > 1 && digits[nd - 1] == '0') nd--;
  digits[nd] = '\0';
  decpt = exp10 + 1;
  if (decpt <= -4 || decpt > 16) {
    putchar(digits[0]);
    if (nd > 1) printf(".%s", digits + 1);
    printf("e%c%02d", exp10 < 0 ? '-' : '+', exp10 < 0 ? -exp10 : exp10);
  } else if (decpt <= 0) {
    printf("0.");
    for (k = 0; k < -decpt; k++) putchar('0');
    printf("%s", digits);
  } else if (decpt >= nd) {
    printf("%s", digits);
    for (k = nd; k < decpt; k++) putchar('0');
    printf(".0");
  } else {
    for (k = 0; k < decpt; k++) putchar(digits[k]);
    printf(".%s", digits + decpt);
  }
}

/* zlib's CRC-32 of a range the read checked (0 where it cannot be read: a failed stream) */
static unsigned long crc32_of(const ockpt_file *f, uint64_t o, uint64_t n) {
  uint32_t crc = 0;
  return ockpt_file_crc32(f, o, n, &crc) == 0 ? (unsigned long)crc : 0ul;
}

static void print_entry(uint32_t index, const ockpt_file *f, uint64_t o, uint64_t n) {
  printf("{\"index\": %lu, \"offset\": %llu, \"nbytes\": %llu, \"crc32\": %lu", (unsigned long)index,
         (unsigned long long)o, (unsigned long long)n, crc32_of(f, o, n));
}

/* A name, key or value: the reader's pointer into the buffer, or (read through a stream) a copy
 * made through the stream into one static buffer (values have at most 1 MiB). */
static const uint8_t *bytes_at(const ockpt_file *f, const uint8_t *p, uint64_t offset,
                               uint64_t len) {
  static uint8_t copy[OCKPT_CONTAINER_MAX_VALUE_LEN];
  if (p != NULL || len == 0) return p != NULL ? p : copy;
  if (len > sizeof copy || ockpt_file_copy(f, offset, copy, (size_t)len) != 0) {
    fprintf(stderr, "ockpt-info: cannot read %llu bytes at %llu\n", (unsigned long long)len,
            (unsigned long long)offset);
    exit(2);
  }
  return copy;
}

/* Schemas 2 and 3 (TOOLKIT.md section 1: the same object, "revision" aside). Schema 3 is read in
 * record order through a cursor (ockpt.h), O(1) per record and range. */
static void print_v2(const ockpt_file *f) {
  uint32_t k, j;
  int v3 = f->revision == OCKPT_REV_V3;
  ockpt_v3_cursor cur;
  ockpt_v3_cursor_init(f, &cur);
  printf("{\"revision\": \"%s\", \"dialect\": null, \"file_size\": %llu, \"tensors\": [",
         v3 ? "v3" : "v2", (unsigned long long)f->file_size);
  for (k = 0; k < f->container.num_tensors; k++) {
    ockpt_tensor_info t;
    if (v3)
      ockpt_v3_next_tensor(f, &cur, &t);
    else
      ockpt_sec_tensor(f, k, &t);
    if (k > 0) printf(", ");
    print_entry(t.index, f, t.offset, t.nbytes);
    /* TOOLKIT.md section 1: "name", "dtype", "shape" and "model_index" when the record has any
     * of them, each null when its flag is clear */
    if (t.flags & (OCKPT_V2_HAS_NAME | OCKPT_V2_HAS_DTYPE | OCKPT_V2_HAS_SHAPE |
                   OCKPT_V2_HAS_MODEL_INDEX)) {
      printf(", \"name\": ");
      if (t.flags & OCKPT_V2_HAS_NAME)
        print_utf8(bytes_at(f, t.name, t.name_offset, t.name_len), t.name_len);
      else
        printf("null");
      printf(", \"dtype\": ");
      if (t.flags & OCKPT_V2_HAS_DTYPE)
        printf("\"%s\"", ockpt_dtype_name(t.dtype));
      else
        printf("null");
      printf(", \"shape\": ");
      if (t.flags & OCKPT_V2_HAS_SHAPE) {
        putchar('[');
        for (j = 0; j < t.rank; j++) printf("%s%lu", j ? ", " : "", (unsigned long)t.dims[j]);
        putchar(']');
      } else {
        printf("null");
      }
      if (t.flags & OCKPT_V2_HAS_MODEL_INDEX)
        printf(", \"model_index\": %lu", (unsigned long)t.model_index);
      else
        printf(", \"model_index\": null");
    }
    putchar('}');
  }
  printf("], \"optimizer\": ");
  if (!f->container.optimizer.present) {
    printf("null");
  } else {
    static const char *const kinds[] = {"sgd", "sgd_momentum", "adam"};
    if (f->container.optimizer_kind <= 2)
      printf("{\"kind\": \"%s\", \"slots\": {", kinds[f->container.optimizer_kind]);
    else
      printf("{\"kind\": \"optimizer_%lu\", \"slots\": {",
             (unsigned long)f->container.optimizer_kind);
    for (j = 0; j < f->container.num_slots; j++) {
      const uint8_t *name;
      uint64_t at;
      uint32_t len;
      int first = 1;
      ockpt_sec_slot(f, j, &name, &len);
      ockpt_sec_slot_at(f, j, &at, &len);
      if (j > 0) printf(", ");
      print_utf8(bytes_at(f, name, at, len), len);
      printf(": [");
      for (k = 0; k < f->container.num_tensors; k++) {
        uint64_t o, n;
        uint32_t index;
        ockpt_tensor_info t;
        if (v3) {
          if (ockpt_v3_slot_entry(f, &cur, j, k, &index, &o, &n) != 1) continue;
        } else {
          if (ockpt_sec_slot_entry(f, j, k, &o, &n) != 1) continue;
          ockpt_sec_tensor(f, k, &t);
          index = t.index;
        }
        if (!first) printf(", ");
        print_entry(index, f, o, n);
        putchar('}');
        first = 0;
      }
      putchar(']');
    }
    printf("}}");
  }
  printf(", \"state\": {");
  for (k = 0; k < f->container.num_state; k++) {
    ockpt_state_info e;
    const uint8_t *value;
    uint64_t b;
    ockpt_sec_state(f, k, &e);
    if (k > 0) printf(", ");
    print_utf8(bytes_at(f, e.key, e.key_offset, e.key_len), e.key_len);
    printf(": ");
    switch (e.type) {
    case OCKPT_CONTAINER_VALUE_INT: printf("%lld", (long long)e.i); break;
    case OCKPT_CONTAINER_VALUE_FLOAT: print_float(e.f); break;
    case OCKPT_CONTAINER_VALUE_STRING:
      print_utf8(bytes_at(f, e.value, e.value_offset, e.len), e.len);
      break;
    default:
      value = bytes_at(f, e.value, e.value_offset, e.len);
      printf("{\"bytes\": \"");
      for (b = 0; b < e.len; b++) printf("%02x", value[b]);
      printf("\"}");
    }
  }
  printf("}, \"origin\": ");
  if (!f->container.origin.present) {
    printf("null");
  } else { /* TOOLKIT.md section 1 and SPEC.md 6.9 */
    static const char *const revisions[] = {"", "\"v1\"", "\"wof\""};
    static const char *const dialects[] = {"null", "\"onert\"", "\"onert-micro\""};
    printf("{\"revision\": %s, \"dialect\": %s, \"num_entries\": %llu, \"footerless\": %s}",
           revisions[f->container.origin_revision], dialects[f->container.origin_dialect],
           (unsigned long long)f->container.origin_num_entries,
           (f->container.origin_flags & OCKPT_CONTAINER_ORIGIN_FOOTERLESS) ? "true" : "false");
  }
  printf("}\n");
}

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
           crc32_of(f, o, n));
    first = 0;
  }
  putchar(']');
}

static void print_file(const ockpt_file *f) {
  static const char *const dialects[] = {"null", "\"onert\"", "\"onert-micro\""};
  printf("{\"revision\": \"%s\", \"dialect\": %s, \"file_size\": %llu, \"tensors\": ",
         f->format == OCKPT_FORMAT_WOF ? "wof" : "v1", dialects[f->dialect],
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
    printf(", \"state\": {\"step\": %lu, \"epoch\": %lu}", (unsigned long)f->step,
           (unsigned long)f->epoch);
  else
    printf(", \"state\": {}");
  printf(", \"origin\": null}\n"); /* only schema 2 has an origin section */
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

/* --stream: the file is read through ockpt_read_stream() with this read-at-offset callback. */
static int read_at(void *ctx, uint64_t offset, void *dst, size_t len) {
  FILE *fp = (FILE *)ctx;
  if (offset > (uint64_t)LONG_MAX || fseek(fp, (long)offset, SEEK_SET) != 0) return -1;
  return fread(dst, 1, len, fp) == len ? 0 : -1;
}

/* Print the description of a file read (or its error); 0 when it was valid, 1 otherwise. */
static int report(const ockpt_file *f, const ockpt_result *r) {
  if (r->code != OCKPT_OK) {
    print_error(r);
    return 1;
  }
  if (f->revision == OCKPT_REV_V2 || f->revision == OCKPT_REV_V3)
    print_v2(f);
  else
    print_file(f);
  return 0;
}

static int stream_main(const char *path, int use_scratch, long claimed, int deferred) {
  static ockpt_stream stream;
  FILE *fp = fopen(path, "rb");
  long size;
  size_t count = 0;
  uint64_t *scratch = NULL;
  ockpt_file f;
  ockpt_result r;
  int rc;
  if (fp == NULL || fseek(fp, 0, SEEK_END) != 0 || (size = ftell(fp)) < 0) {
    fprintf(stderr, "ockpt-info: cannot read %s\n", path);
    if (fp != NULL) fclose(fp);
    return 2;
  }
  if (claimed >= 0) size = claimed; /* --stream-size: a file that is shorter than claimed */
  ockpt_stream_init(&stream, read_at, fp, (uint64_t)size);
  if (use_scratch) {
    count = ockpt_stream_scratch_count(&stream);
    if (count != 0) {
      scratch = (uint64_t *)malloc(count * sizeof *scratch);
      if (scratch == NULL) count = 0;
    }
  }
  if (deferred) {
    r = ockpt_read_stream_deferred(&stream, &f, scratch, count);
    if (r.code == OCKPT_DEFERRED) r = ockpt_verify_deferred(&f);
  } else {
    r = ockpt_read_stream(&stream, &f, scratch, count);
  }
  rc = report(&f, &r);
  if (r.code == OCKPT_OK && ockpt_stream_failed(&stream)) { /* while printing */
    fprintf(stderr, "ockpt-info: a read failed\n");
    rc = 2;
  }
  free(scratch);
  fclose(fp);
  if (fflush(stdout) != 0) return 2;
  return rc;
}

int main(int argc, char **argv) {
  const char *path = NULL;
  int use_scratch = 1, use_stream = 0, deferred = 0, usage = 0, k, rc;
  long claimed = -1;
  size_t len = 0, count = 0;
  unsigned char *buf;
  uint64_t *scratch = NULL;
  ockpt_file f;
  ockpt_result r;
  for (k = 1; k < argc; k++) {
    if (strcmp(argv[k], "--no-scratch") == 0)
      use_scratch = 0;
    else if (strcmp(argv[k], "--stream") == 0)
      use_stream = 1;
    else if (strcmp(argv[k], "--deferred") == 0)
      use_stream = 1, deferred = 1;
    else if (strncmp(argv[k], "--stream-size=", 14) == 0)
      use_stream = 1, claimed = strtol(argv[k] + 14, NULL, 10);
    else if (path == NULL)
      path = argv[k];
    else
      usage = 1;
  }
  if (path == NULL || usage) {
    fprintf(stderr, "usage: ockpt-info [--no-scratch] [--stream | --stream-size=N] [--deferred] FILE\n");
    return 2;
  }
  if (use_stream) return stream_main(path, use_scratch, claimed, deferred);
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
  rc = report(&f, &r);
  free(scratch);
  free(buf);
  if (fflush(stdout) != 0) return 2;
  return rc;
}
