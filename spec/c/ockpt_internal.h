/* Private to the library: what ockpt.c (the dispatcher) needs from ockpt_v2.c. */
#ifndef OCKPT_INTERNAL_H
#define OCKPT_INTERNAL_H

#include "ockpt.h"

/* Schema 2, SPEC.md section 6, after the dispatcher checked magic and version. `f` is filled
 * (and left zeroed by the caller on failure). `scratch` may be NULL. */
ockpt_result ockpt_v2_validate(const uint8_t *buf, uint64_t S, ockpt_file *f, uint64_t *scratch,
                               size_t scratch_count);

/* How many uint64_t of scratch ockpt_v2_validate() can use for a file of S bytes. */
uint64_t ockpt_v2_scratch_count(uint64_t S);

#endif /* OCKPT_INTERNAL_H */
