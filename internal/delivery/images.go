package delivery

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"

	"github.com/boombuler/barcode"
	"github.com/boombuler/barcode/ean"
	"github.com/boombuler/barcode/qr"
)

// boombuler/barcode is used for both symbologies: one small, pure-Go,
// widely used dependency instead of separate QR and 1D libraries.

const (
	qrTargetPx   = 256 // requested size of QRPNG output
	qrQuietZone  = 4   // modules of white border required by ISO/IEC 18004
	eanQuietZone = 11  // modules of white border before/after an EAN-13 (GS1 asks 11 left, 7 right; symmetric is simpler)
)

// QRPNG returns a PNG QR code encoding content (normally the ticket barcode),
// about 256x256 px including the quiet zone.
//
// Error correction level M is a compromise between density and tolerance of
// creased or badly printed paper tickets.
func QRPNG(content string) ([]byte, error) {
	img, err := qrImage(content, qrTargetPx)
	if err != nil {
		return nil, err
	}
	return encodePNG(img)
}

// qrCode encodes content as a QR code, without its quiet zone.
func qrCode(content string) (barcode.Barcode, error) {
	if content == "" {
		return nil, fmt.Errorf("tickets: empty QR content")
	}
	code, err := qr.Encode(content, qr.M, qr.Auto)
	if err != nil {
		return nil, fmt.Errorf("tickets: encode QR: %w", err)
	}
	return code, nil
}

// qrImage renders the QR code scaled by a whole number of pixels per module
// (fractional scaling blurs module edges and hurts scanning) and surrounded
// by the quiet zone, which boombuler does not add itself.
func qrImage(content string, target int) (*image.Gray, error) {
	code, err := qrCode(content)
	if err != nil {
		return nil, err
	}
	modules := code.Bounds().Dx()
	total := modules + 2*qrQuietZone
	scale := max(target/total, 1)
	return withMargin(code, qrQuietZone*scale, qrQuietZone*scale, modules*scale, modules*scale)
}

// eanCode encodes a valid EAN-13: one row of 95 modules.
func eanCode(code string) (barcode.Barcode, error) {
	if !ValidEAN13(code) {
		return nil, fmt.Errorf("tickets: %q is not a valid EAN-13", code)
	}
	bc, err := ean.Encode(code)
	if err != nil {
		return nil, fmt.Errorf("tickets: encode EAN-13: %w", err)
	}
	return bc, nil
}

// run is a horizontal stretch of dark modules in one row, [from, to).
type run struct{ row, from, to int }

// darkRuns lists bc's dark modules as runs, row by row, relative to its
// bounds' origin.
func darkRuns(bc barcode.Barcode) []run {
	b := bc.Bounds()
	dark := func(x, y int) bool {
		r, _, _, _ := bc.At(x, y).RGBA()
		return r < 0x8000
	}
	var out []run
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			if !dark(x, y) {
				continue
			}
			end := x + 1
			for end < b.Max.X && dark(end, y) {
				end++
			}
			out = append(out, run{row: y - b.Min.Y, from: x - b.Min.X, to: end - b.Min.X})
			x = end
		}
	}
	return out
}

// withMargin scales bc to w x h and draws it on a white grayscale canvas
// with the given horizontal and vertical margins. Grayscale keeps PNGs small
// and is a format fpdf embeds without conversion.
func withMargin(bc barcode.Barcode, mx, my, w, h int) (*image.Gray, error) {
	scaled, err := barcode.Scale(bc, w, h)
	if err != nil {
		return nil, fmt.Errorf("tickets: scale %s: %w", bc.Metadata().CodeKind, err)
	}
	canvas := image.NewGray(image.Rect(0, 0, w+2*mx, h+2*my))
	draw.Draw(canvas, canvas.Bounds(), image.NewUniform(color.White), image.Point{}, draw.Src)
	draw.Draw(canvas, image.Rect(mx, my, mx+w, my+h), scaled, scaled.Bounds().Min, draw.Src)
	return canvas, nil
}

func encodePNG(img image.Image) ([]byte, error) {
	var buf bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.BestCompression}
	if err := enc.Encode(&buf, img); err != nil {
		return nil, fmt.Errorf("tickets: encode PNG: %w", err)
	}
	return buf.Bytes(), nil
}
