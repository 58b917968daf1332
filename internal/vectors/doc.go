// Package vectors locates and loads the cryptographic test vectors for
// tests. It is imported only from _test.go files.
//
// The directory is $WORLDID_VECTORS when set (acceptance runs substitute
// their own files there), else the pinned copy in testdata/vectors, whose
// files and SHA-256 digests testdata/SOURCES.md lists (sources_test.go
// checks the digests).
//
// Loaders are written against the file structure, never against entry
// counts, so other files of the same structure can be substituted, and any
// list in a file may be empty: what must not be empty is a file. Counters
// are therefore kept per file for the whole test binary, and Main (called
// from each package's TestMain) fails the run if a file that was loaded
// yielded no vector at all ("zero vectors is a failure").
package vectors
