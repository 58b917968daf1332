// Package qr is a QR code encoder (ISO/IEC 18004:2015) for short links
// shown on a web page: byte mode (§7.4.5, 8-bit count indicator up to
// version 9, 16-bit from version 10, Table 3), error correction level M
// (15 % of the symbol recoverable; EC codewords and blocks per version from
// Table 9), versions 1 to 40 (the smallest that holds the data), the eight
// data masks of §7.8.2 with the lowest penalty score of §7.8.3, format
// information BCH(15,5) with mask 0x5412 (§7.9.1) and version information
// BCH(18,6) from version 7 (§7.10). Reed-Solomon codewords are computed
// over GF(2⁸) with the polynomial x⁸+x⁴+x³+x²+1 (0x11d, §7.5.2).
//
// The penalty rules are evaluated on the rows and columns of each masked
// candidate as 192-bit words (shifts, ANDs and popcounts), against a
// module-by-module reading of §7.8.3 in the tests.
//
// Encode returns the symbol; Code.SVG draws it with its 4-module quiet
// zone (§6.3.8) as one inline SVG path of unit squares with presentation
// attributes only, so a page can show it under a Content-Security-Policy
// without 'unsafe-inline', a script or an image load.
//
// The module matrices are checked against libqrencode 4.1.1
// (testdata/qr, testdata/SOURCES.md) and decoded with zbarimg when it is
// installed.
//
// Not done: numeric, alphanumeric, kanji and ECI modes, structured append,
// levels L, Q and H, Micro QR, raster output. The package knows nothing
// of what the link means: it imports only the standard library.
package qr
