/* CRC-32C (Castagnoli) of a byte range, through ISA-L (hardware CRC32 instructions where the CPU has them):
 * the checksum a worker reports for an output it wrote to a sink. */
#include <isa-l/crc.h>
#include "CImageCodecs.h"

uint32_t sw_crc32c(const uint8_t *bytes, size_t count) {
    /* ISA-L's crc32_iscsi takes and returns the register without the final inversion; its length is an int. */
    unsigned int crc = 0xFFFFFFFFu;
    while (count > 0) {
        int chunk = count > (1u << 30) ? (1 << 30) : (int)count;
        crc = crc32_iscsi((unsigned char *)bytes, chunk, crc);
        bytes += chunk;
        count -= (size_t)chunk;
    }
    return ~crc;
}
