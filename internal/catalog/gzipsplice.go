package catalog

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"sync"

	"github.com/klauspost/compress/flate"
)

// splicedGzip holds a gzip member's compressed prefix, so a response whose
// only varying part is a short tail (the request id) is compressed once per
// cache entry instead of once per request.
//
// The prefix is deflated and sync-flushed (byte aligned, not final); each
// response appends the tail deflated by a fresh compressor (ending with the
// final block) and the gzip trailer, whose CRC-32 continues from the
// prefix's. The result is one valid gzip member.
type splicedGzip struct {
	prefix []byte // gzip header + deflate blocks of the uncompressed prefix
	crc    uint32 // CRC-32 of the uncompressed prefix
	size   uint32 // length of the uncompressed prefix (mod 2^32)
}

var gzipHeader = []byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff}

// newSplicedGzip compresses the prefix made of parts, one after another.
func newSplicedGzip(parts ...[]byte) (*splicedGzip, error) {
	var buf bytes.Buffer
	buf.Write(gzipHeader)
	w, err := flate.NewWriter(&buf, flate.BestSpeed)
	if err != nil {
		return nil, err
	}
	g := &splicedGzip{}
	for _, p := range parts {
		if _, err := w.Write(p); err != nil {
			return nil, err
		}
		g.crc = crc32.Update(g.crc, crc32.IEEETable, p)
		g.size += uint32(len(p))
	}
	if err := w.Flush(); err != nil {
		return nil, err
	}
	g.prefix = buf.Bytes()
	return g, nil
}

// The tail (the request id) is a few dozen bytes: stored, not compressed,
// which spares building Huffman tables on every request.
var tailWriters = sync.Pool{New: func() any {
	w, _ := flate.NewWriter(nil, flate.NoCompression)
	return w
}}

// Tail returns what follows the shared compressed prefix in the gzip member
// of prefix+tail: the tail's final deflate block and the trailer. Serving
// g.prefix and then this copies nothing per request.
func (g *splicedGzip) Tail(tail []byte) []byte {
	out := bytes.NewBuffer(make([]byte, 0, len(tail)+32))
	w := tailWriters.Get().(*flate.Writer)
	w.Reset(out)
	_, _ = w.Write(tail)
	_ = w.Close() // writes the final block
	tailWriters.Put(w)
	var trailer [8]byte
	binary.LittleEndian.PutUint32(trailer[:4], crc32.Update(g.crc, crc32.IEEETable, tail))
	binary.LittleEndian.PutUint32(trailer[4:], g.size+uint32(len(tail)))
	out.Write(trailer[:])
	return out.Bytes()
}
