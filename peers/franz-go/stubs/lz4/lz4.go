// Package lz4 is stickyproof's inert stand-in for github.com/pierrec/lz4/v4 (see README.md).
package lz4

import (
	"errors"
	"io"
)

// ErrUnavailable is returned by every codec call: the harness build has no lz4.
var ErrUnavailable = errors.New("lz4 is not available in the stickyproof harness build")

type applier interface{ apply() }

// Option configures a Writer.
type Option func(applier) error

// CompressionLevel is a compression level.
type CompressionLevel uint32

func CompressionLevelOption(CompressionLevel) Option { return func(applier) error { return ErrUnavailable } }

// Writer compresses nothing.
type Writer struct{}

func NewWriter(io.Writer) *Writer             { return &Writer{} }
func (*Writer) Apply(...Option) error         { return ErrUnavailable }
func (*Writer) Reset(io.Writer)               {}
func (*Writer) Write(p []byte) (int, error)   { return 0, ErrUnavailable }
func (*Writer) Close() error                  { return nil }

// Reader decompresses nothing.
type Reader struct{}

func NewReader(io.Reader) *Reader             { return &Reader{} }
func (*Reader) Reset(io.Reader)               {}
func (*Reader) Read(p []byte) (int, error)    { return 0, ErrUnavailable }
