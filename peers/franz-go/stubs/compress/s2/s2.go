// Package s2 is stickyproof's inert stand-in for github.com/klauspost/compress/s2 (see ../../README.md).
package s2

import "errors"

// ErrUnavailable is returned by every codec call: the harness build has no snappy.
var ErrUnavailable = errors.New("snappy is not available in the stickyproof harness build")

func MaxEncodedLen(srcLen int) int                { return srcLen }
func EncodeSnappy(dst, src []byte) []byte         { return dst[:0] }
func DecodedLen(src []byte) (int, error)          { return 0, ErrUnavailable }
func Decode(dst, src []byte) ([]byte, error)      { return nil, ErrUnavailable }
