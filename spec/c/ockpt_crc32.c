/* zlib-compatible CRC-32: reflected polynomial 0xEDB88320, initial value and final xor
 * 0xFFFFFFFF. Half-byte table (16 entries): small enough for a microcontroller, and each entry
 * is the polynomial division of one nibble, so the table can be checked by hand. */
#include "ockpt.h"

static const uint32_t crc_nibble[16] = {
    0x00000000u, 0x1DB71064u, 0x3B6E20C8u, 0x26D930ACu, 0x76DC4190u, 0x6B6B51F4u,
    0x4DB26158u, 0x5005713Cu, 0xEDB88320u, 0xF00F9344u, 0xD6D6A3E8u, 0xCB61B38Cu,
    0x9B64C2B0u, 0x86D3D2D4u, 0xA00AE278u, 0xBDBDF21Cu};

/* Both CRCs of the format family are reflected, with initial value and final xor 0xFFFFFFFF:
 * they differ only in the table. */
static uint32_t crc_reflected(const uint32_t table[16], uint32_t crc, const void *data,
                              size_t len) {
  const uint8_t *p = (const uint8_t *)data;
  size_t k;
  crc = ~crc;
  for (k = 0; k < len; k++) {
    crc ^= p[k];
    crc = (crc >> 4) ^ table[crc & 15u];
    crc = (crc >> 4) ^ table[crc & 15u];
  }
  return ~crc;
}

uint32_t ockpt_crc32(uint32_t crc, const void *data, size_t len) {
  return crc_reflected(crc_nibble, crc, data, len);
}

/* CRC-32C (Castagnoli): reflected polynomial 0x82F63B78, initial value and final xor
 * 0xFFFFFFFF; crc32c("123456789") = 0xE3069283. Same half-byte table scheme as above; entry k
 * is the division of nibble k by the reflected polynomial (entry 8 is the polynomial itself). */
static const uint32_t crc32c_nibble[16] = {
    0x00000000u, 0x105EC76Fu, 0x20BD8EDEu, 0x30E349B1u, 0x417B1DBCu, 0x5125DAD3u,
    0x61C69362u, 0x7198540Du, 0x82F63B78u, 0x92A8FC17u, 0xA24BB5A6u, 0xB21572C9u,
    0xC38D26C4u, 0xD3D3E1ABu, 0xE330A81Au, 0xF36E6F75u};

uint32_t ockpt_crc32c(uint32_t crc, const void *data, size_t len) {
  return crc_reflected(crc32c_nibble, crc, data, len);
}
