/* zlib-compatible CRC-32: reflected polynomial 0xEDB88320, initial value and final xor
 * 0xFFFFFFFF. Half-byte table (16 entries): small enough for a microcontroller, and each entry
 * is the polynomial division of one nibble, so the table can be checked by hand. */
#include "ockpt.h"

static const uint32_t crc_nibble[16] = {
    0x00000000u, 0x1DB71064u, 0x3B6E20C8u, 0x26D930ACu, 0x76DC4190u, 0x6B6B51F4u,
    0x4DB26158u, 0x5005713Cu, 0xEDB88320u, 0xF00F9344u, 0xD6D6A3E8u, 0xCB61B38Cu,
    0x9B64C2B0u, 0x86D3D2D4u, 0xA00AE278u, 0xBDBDF21Cu};

uint32_t ockpt_crc32(uint32_t crc, const void *data, size_t len) {
  const uint8_t *p = (const uint8_t *)data;
  size_t k;
  crc = ~crc;
  for (k = 0; k < len; k++) {
    crc ^= p[k];
    crc = (crc >> 4) ^ crc_nibble[crc & 15u];
    crc = (crc >> 4) ^ crc_nibble[crc & 15u];
  }
  return ~crc;
}
