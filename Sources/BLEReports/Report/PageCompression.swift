import CDeflate

/// gzip (RFC 1952) of a whole buffer, for the page's embedded timeline: libdeflate at level 6, which gives zlib's
/// level 6 size (660,581 against 660,861 bytes for the 1 M-record benchmark's 4.79 MB of rows) in about a third of
/// its time (docs/performance.md#page-compression). Only the compressed bytes differ from zlib's; the page's script
/// inflates either with the browser's `DecompressionStream`.
func gzipCompress(_ input: [UInt8]) -> [UInt8] {
    guard let compressor = libdeflate_alloc_compressor(6) else { return [] }
    defer { libdeflate_free_compressor(compressor) }
    let bound = libdeflate_gzip_compress_bound(compressor, input.count)
    return input.withUnsafeBytes { source in
        [UInt8](unsafeUninitializedCapacity: bound) { out, count in
            count = libdeflate_gzip_compress(compressor, source.baseAddress, source.count, out.baseAddress, out.count)
        }
    }
}
