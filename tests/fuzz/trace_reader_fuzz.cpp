// libFuzzer target: the trace reader and the report formats on arbitrary bytes. Any input must
// give an analysis or a trace_error: a crash, a sanitizer report, a hang or an allocation sized
// from a corrupt length field is a bug. Symbolization is off (no files are opened).
//
// The first byte picks a mode. 0: the rest is the file. 1: a valid file header, then the rest.
// 2 and 3: the rest is a sequence of (stream id, length, payload bytes) that the harness turns
// into blocks, compressing each payload itself, so that mutations reach the record decoder
// instead of failing the zstd checksum: 2 a version 1 file, 3 a version 4 file (5 when bit 2 of
// the first byte is set: its blocks end with a tick section; 6, whose stack ids are the
// process's, when bit 3 is set too) whose blocks after a stream's first are compressed against
// the stream's previous payload (and flagged so). A seed
// corpus of small real traces helps:
//   lowalloc run -o corpus/a.trace -- /bin/true
#include "analyze/analysis.hpp"
#include "report/report.hpp"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>
#include <sstream>
#include <string>

#include <zstd.h>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

void put_u32(std::string& out, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) out += static_cast<char>((v >> (8 * i)) & 0xFF);
}

// Blocks from (stream, length, payload) triples; each payload compressed with a checksum, from
// version 4 against the stream's previous payload.
std::string blocks_from(const std::uint8_t* p, std::size_t n, char version) {
  std::string out("LOWALLOC\x01\x00\x10\x00\x00\x00\x00\x00", 16);
  out[8] = version;
  const bool version4 = version >= 4;
  ZSTD_CCtx* c = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 1);
  std::string frame;
  std::map<std::uint32_t, std::string> previous;
  while (n >= 2) {
    const std::uint32_t stream = 1u + p[0] % 4u;
    const std::size_t len = p[1] < n - 2 ? p[1] : n - 2;
    frame.resize(ZSTD_compressBound(len));
    const auto prev = previous.find(stream);
    const bool prefixed = version4 && prev != previous.end();
    if (prefixed) ZSTD_CCtx_refPrefix(c, prev->second.data(), prev->second.size());
    const std::size_t z = ZSTD_compress2(c, &frame[0], frame.size(), p + 2, len);
    if (ZSTD_isError(z)) break;
    put_u32(out, 0x4B4C424C);
    put_u32(out, static_cast<std::uint32_t>(z));
    put_u32(out, static_cast<std::uint32_t>(len));
    put_u32(out, prefixed ? stream | 0x80000000u : stream);
    out.append(frame.data(), z);
    previous[stream].assign(reinterpret_cast<const char*>(p + 2), len);
    p += 2 + len;
    n -= 2 + len;
  }
  ZSTD_freeCCtx(c);
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  std::string bytes;
  switch (data[0] & 3) {
    case 0:
      bytes.assign(reinterpret_cast<const char*>(data + 1), size - 1);
      break;
    case 1:
      bytes.assign("LOWALLOC\x01\x00\x10\x00\x00\x00\x00\x00", 16);
      bytes.append(reinterpret_cast<const char*>(data + 1), size - 1);
      break;
    default:
      bytes = blocks_from(data + 1, size - 1,
                          (data[0] & 3) == 2     ? '\x01'
                          : (data[0] & 12) == 12 ? '\x06'
                          : (data[0] & 4) != 0   ? '\x05'
                                                 : '\x04');
      break;
  }
  lowalloc::analyze::options opts;
  opts.symbolize = false;
  try {
    const lowalloc::analyze::analysis a =
        lowalloc::analyze::analyze_buffer(bytes.data(), bytes.size(), opts);
    std::ostringstream out;
    lowalloc::report::report_options ro;
    ro.top = 20;
    lowalloc::report::write_text(out, a, ro);
    lowalloc::report::write_json(out, a, ro);
    lowalloc::report::write_folded(out, a, ro);
    lowalloc::report::write_speedscope(out, a, ro);
  } catch (const lowalloc::analyze::trace_error&) {
    // A damaged or foreign file: the expected outcome for most inputs.
  }
  return 0;
}
