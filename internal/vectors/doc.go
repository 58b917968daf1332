// Package vectors locates and loads the shared cryptographic test vectors
// for tests. It is imported only from _test.go files.
//
// The directory is, in order of preference: $WORLDID_VECTORS, the sibling
// checkout ../shared/vectors next to the repository root, and the copy in
// testdata/vectors (see testdata/SOURCES.md). Loaders must be written against
// the file structure, never against entry counts, so other files of the same
// structure can be substituted.
package vectors
