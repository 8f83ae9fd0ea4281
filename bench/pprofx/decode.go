package pprofx

import "google.golang.org/protobuf/encoding/protowire"

// Field numbers of profile.proto (github.com/google/pprof/proto).
const (
	profSampleType  = 1
	profSample      = 2
	profLocation    = 4
	profFunction    = 5
	profStringTable = 6

	valueTypeType = 1

	sampleLocation = 1
	sampleValue    = 2

	locID   = 1
	locLine = 4

	lineFunction = 1

	funcID   = 1
	funcName = 2
)

func (rp *rawProfile) decode(b []byte) error {
	return fields(b, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
		switch num {
		case profSampleType:
			return fields(v, func(n protowire.Number, _ protowire.Type, _ []byte, x uint64) error {
				if n == valueTypeType {
					rp.sampleTypes = append(rp.sampleTypes, int64(x))
				}
				return nil
			})
		case profSample:
			return rp.decodeSample(v)
		case profLocation:
			return rp.decodeLocation(v)
		case profFunction:
			return rp.decodeFunction(v)
		case profStringTable:
			if typ == protowire.BytesType {
				rp.strs = append(rp.strs, string(v))
			}
		}
		return nil
	})
}

func (rp *rawProfile) decodeSample(b []byte) error {
	var s rawSample
	err := fields(b, func(num protowire.Number, typ protowire.Type, v []byte, x uint64) error {
		switch num {
		case sampleLocation:
			u, err := uints(typ, v, x)
			s.locs = append(s.locs, u...)
			return err
		case sampleValue:
			u, err := uints(typ, v, x)
			for _, n := range u {
				s.values = append(s.values, int64(n))
			}
			return err
		}
		return nil
	})
	rp.samples = append(rp.samples, s)
	return err
}

func (rp *rawProfile) decodeLocation(b []byte) error {
	var id uint64
	var funcs []uint64
	err := fields(b, func(num protowire.Number, _ protowire.Type, v []byte, x uint64) error {
		switch num {
		case locID:
			id = x
		case locLine:
			return fields(v, func(n protowire.Number, _ protowire.Type, _ []byte, fx uint64) error {
				if n == lineFunction {
					funcs = append(funcs, fx)
				}
				return nil
			})
		}
		return nil
	})
	rp.locs[id] = funcs
	return err
}

func (rp *rawProfile) decodeFunction(b []byte) error {
	var id uint64
	var name int64
	err := fields(b, func(num protowire.Number, _ protowire.Type, _ []byte, x uint64) error {
		switch num {
		case funcID:
			id = x
		case funcName:
			name = int64(x)
		}
		return nil
	})
	rp.funcs[id] = name
	return err
}
