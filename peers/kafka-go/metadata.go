package main

// kafka-go reads a member's subscription with groupMetadata.readFrom (joingroup.go) and the
// readers of read.go and discard.go, all unexported. This file reproduces them for the one
// structure the leader reads, keeping their checks and their order: the size budget `sz` counted
// down from the byte count of the member's metadata, errShortRead when a length runs past it, a
// negative array count read as no elements, a negative string or bytes length read as empty,
// and, in makeMemberProtocolMetadata, a read that fails or leaves bytes over failing the
// rebalance with kafka-go's own message.

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	kafka "github.com/segmentio/kafka-go"
)

var errShortRead = errors.New("not enough bytes available to load the response")

// groupMetadata is kafka-go's: what a member sends as its protocol metadata.
type groupMetadata struct {
	Version  int16
	Topics   []string
	UserData []byte
}

// makeMemberProtocolMetadata is ConsumerGroup.makeMemberProtocolMetadata (consumergroup.go).
func makeMemberProtocolMetadata(in []joinedMember) ([]kafka.GroupMember, error) {
	members := make([]kafka.GroupMember, 0, len(in))
	for _, item := range in {
		metadata := groupMetadata{}
		reader := bufio.NewReader(bytes.NewReader(item.MemberMetadata))
		if remain, err := (&metadata).readFrom(reader, len(item.MemberMetadata)); err != nil || remain != 0 {
			return nil, fmt.Errorf("unable to read metadata for member, %v: %w", item.MemberID, err)
		}
		members = append(members, kafka.GroupMember{
			ID:       item.MemberID,
			Topics:   metadata.Topics,
			UserData: metadata.UserData,
		})
	}
	return members, nil
}

func (t *groupMetadata) readFrom(r *bufio.Reader, size int) (remain int, err error) {
	if remain, err = readInt16(r, size, &t.Version); err != nil {
		return
	}
	if remain, err = readStringArray(r, remain, &t.Topics); err != nil {
		return
	}
	if remain, err = readBytes(r, remain, &t.UserData); err != nil {
		return
	}
	return
}

// encodeGroupMetadata is groupMetadata.writeTo: int16 version, int32-counted int16-length
// strings, int32-length bytes (kafka-go writes nil user data as length 0).
func encodeGroupMetadata(version int16, topics []string, userData []byte) []byte {
	var b bytes.Buffer
	binary.Write(&b, binary.BigEndian, version)
	binary.Write(&b, binary.BigEndian, int32(len(topics)))
	for _, topic := range topics {
		binary.Write(&b, binary.BigEndian, int16(len(topic)))
		b.WriteString(topic)
	}
	binary.Write(&b, binary.BigEndian, int32(len(userData)))
	b.Write(userData)
	return b.Bytes()
}

func peekRead(r *bufio.Reader, sz int, n int, f func([]byte)) (int, error) {
	if n > sz {
		return sz, errShortRead
	}
	b, err := r.Peek(n)
	if err != nil {
		return sz, err
	}
	f(b)
	return discardN(r, sz, n)
}

func discardN(r *bufio.Reader, sz int, n int) (int, error) {
	var err error
	if n <= sz {
		n, err = r.Discard(n)
	} else {
		n, err = r.Discard(sz)
		if err == nil {
			err = errShortRead
		}
	}
	return sz - n, err
}

func readInt16(r *bufio.Reader, sz int, v *int16) (int, error) {
	return peekRead(r, sz, 2, func(b []byte) { *v = int16(binary.BigEndian.Uint16(b)) })
}

func readInt32(r *bufio.Reader, sz int, v *int32) (int, error) {
	return peekRead(r, sz, 4, func(b []byte) { *v = int32(binary.BigEndian.Uint32(b)) })
}

func readString(r *bufio.Reader, sz int, v *string) (int, error) {
	return readStringWith(r, sz, func(r *bufio.Reader, sz int, n int) (remain int, err error) {
		*v, remain, err = readNewString(r, sz, n)
		return
	})
}

func readStringWith(r *bufio.Reader, sz int, cb func(*bufio.Reader, int, int) (int, error)) (int, error) {
	var err error
	var len int16
	if sz, err = readInt16(r, sz, &len); err != nil {
		return sz, err
	}
	n := int(len)
	if n > sz {
		return sz, errShortRead
	}
	return cb(r, sz, n)
}

func readNewString(r *bufio.Reader, sz int, n int) (string, int, error) {
	b, sz, err := readNewBytes(r, sz, n)
	return string(b), sz, err
}

func readBytes(r *bufio.Reader, sz int, v *[]byte) (int, error) {
	return readBytesWith(r, sz, func(r *bufio.Reader, sz int, n int) (remain int, err error) {
		*v, remain, err = readNewBytes(r, sz, n)
		return
	})
}

func readBytesWith(r *bufio.Reader, sz int, cb func(*bufio.Reader, int, int) (int, error)) (int, error) {
	var err error
	var n int
	if sz, err = readArrayLen(r, sz, &n); err != nil {
		return sz, err
	}
	if n > sz {
		return sz, errShortRead
	}
	return cb(r, sz, n)
}

func readNewBytes(r *bufio.Reader, sz int, n int) ([]byte, int, error) {
	var err error
	var b []byte
	var shortRead bool
	if n > 0 {
		if sz < n {
			n = sz
			shortRead = true
		}
		b = make([]byte, n)
		n, err = io.ReadFull(r, b)
		b = b[:n]
		sz -= n
		if err == nil && shortRead {
			err = errShortRead
		}
	}
	return b, sz, err
}

func readArrayLen(r *bufio.Reader, sz int, n *int) (int, error) {
	var err error
	var len int32
	if sz, err = readInt32(r, sz, &len); err != nil {
		return sz, err
	}
	*n = int(len)
	return sz, nil
}

func readArrayWith(r *bufio.Reader, sz int, cb func(*bufio.Reader, int) (int, error)) (int, error) {
	var err error
	var len int32
	if sz, err = readInt32(r, sz, &len); err != nil {
		return sz, err
	}
	for n := int(len); n > 0; n-- {
		if sz, err = cb(r, sz); err != nil {
			break
		}
	}
	return sz, err
}

func readStringArray(r *bufio.Reader, sz int, v *[]string) (remain int, err error) {
	var content []string
	fn := func(r *bufio.Reader, size int) (fnRemain int, fnErr error) {
		var value string
		if fnRemain, fnErr = readString(r, size, &value); fnErr != nil {
			return
		}
		content = append(content, value)
		return
	}
	if remain, err = readArrayWith(r, sz, fn); err != nil {
		return
	}
	*v = content
	return
}
