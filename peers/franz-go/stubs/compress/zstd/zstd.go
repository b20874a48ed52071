// Package zstd is stickyproof's inert stand-in for github.com/klauspost/compress/zstd (see ../../README.md).
package zstd

import (
	"errors"
	"io"
)

// ErrUnavailable is returned by every codec call: the harness build has no zstd.
var ErrUnavailable = errors.New("zstd is not available in the stickyproof harness build")

type encoderOptions struct{}
type decoderOptions struct{}

// EOption configures an Encoder.
type EOption func(*encoderOptions) error

// DOption configures a Decoder.
type DOption func(*decoderOptions) error

// EncoderLevel is a compression level.
type EncoderLevel int

func option(*encoderOptions) error  { return nil }
func doption(*decoderOptions) error { return nil }

func WithWindowSize(int) EOption             { return option }
func WithEncoderConcurrency(int) EOption     { return option }
func WithZeroFrames(bool) EOption            { return option }
func WithEncoderLevel(EncoderLevel) EOption  { return option }
func WithDecoderLowmem(bool) DOption         { return doption }
func WithDecoderConcurrency(int) DOption     { return doption }
func WithDecoderMaxMemory(uint64) DOption    { return doption }

// Encoder compresses nothing.
type Encoder struct{}

func NewWriter(io.Writer, ...EOption) (*Encoder, error) { return &Encoder{}, ErrUnavailable }
func (*Encoder) Close() error                            { return nil }
func (*Encoder) MaxEncodedSize(size int) int             { return size }
func (*Encoder) EncodeAll(src, dst []byte) []byte        { return dst }

// Decoder decompresses nothing.
type Decoder struct{}

func NewReader(io.Reader, ...DOption) (*Decoder, error)       { return &Decoder{}, ErrUnavailable }
func (*Decoder) Close()                                       {}
func (*Decoder) DecodeAll(input, dst []byte) ([]byte, error) { return nil, ErrUnavailable }
