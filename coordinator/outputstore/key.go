package outputstore

import (
	"bytes"
	"encoding/binary"
	"errors"
)

// A record's key is its task id, escaped and ended (taskPrefix), then its
// index, 8 bytes big-endian. Keys sort as (task id, index) do, tasks in
// byte order of id whatever bytes an id holds: the escape maps 0x00 to
// 0x01 0x01 and 0x01 to 0x01 0x02 and keeps every other byte, which keeps
// the order of ids and leaves 0x00 to end one, below any byte an escaped
// id continues with. An id is never a prefix of another's key either, so
// a task's records are exactly the keys behind its prefix.

const (
	idEnd    = 0x00
	idEscape = 0x01
	indexLen = 8
)

// taskPrefix is the part of the keys of task's records before the index.
func taskPrefix(task string) []byte {
	return appendTaskPrefix(make([]byte, 0, len(task)+1+indexLen), task)
}

func appendTaskPrefix(dst []byte, task string) []byte {
	for i := 0; i < len(task); i++ {
		switch c := task[i]; c {
		case idEnd, idEscape:
			dst = append(dst, idEscape, c+1)
		default:
			dst = append(dst, c)
		}
	}
	return append(dst, idEnd)
}

// recordKey is the key of task's record i.
func recordKey(task string, i uint64) []byte {
	return binary.BigEndian.AppendUint64(taskPrefix(task), i)
}

// appendIndex is prefix (a taskPrefix) with index i behind it.
func appendIndex(prefix []byte, i uint64) []byte {
	return binary.BigEndian.AppendUint64(prefix, i)
}

// errKey is a key no record of this package has.
var errKey = errors.New("outputstore: malformed record key")

// keyPrefix splits a record's key: its task's prefix (taskPrefix) and its
// index.
func keyPrefix(k []byte) ([]byte, uint64, error) {
	if len(k) < 1+indexLen || k[len(k)-indexLen-1] != idEnd {
		return nil, 0, errKey
	}
	cut := len(k) - indexLen
	return k[:cut], binary.BigEndian.Uint64(k[cut:]), nil
}

// prefixTask is the task id a taskPrefix names.
func prefixTask(p []byte) (string, error) {
	body := p[:len(p)-1] // the end marker
	if bytes.IndexByte(body, idEscape) < 0 {
		if bytes.IndexByte(body, idEnd) >= 0 {
			return "", errKey
		}
		return string(body), nil
	}
	id := make([]byte, 0, len(body))
	for i := 0; i < len(body); i++ {
		switch c := body[i]; c {
		case idEnd:
			return "", errKey
		case idEscape:
			if i++; i == len(body) || (body[i] != idEnd+1 && body[i] != idEscape+1) {
				return "", errKey
			}
			id = append(id, body[i]-1)
		default:
			id = append(id, c)
		}
	}
	return string(id), nil
}
