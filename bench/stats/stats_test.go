package stats

import (
	"testing"
	"time"
)

func TestSummary(t *testing.T) {
	var r Recorder
	for i := 1; i <= 100; i++ {
		r.Add(time.Duration(i) * time.Millisecond)
	}
	r.Error()
	s := r.Summary()
	if s.N != 100 || s.Errors != 1 || s.P50MS != 50 || s.P99MS != 99 || s.MaxMS != 100 || s.MeanMS != 50.5 {
		t.Errorf("summary %+v", s)
	}
	r.Reset()
	if s := r.Summary(); s.N != 0 || s.Errors != 0 {
		t.Errorf("after reset %+v", s)
	}
	if Percentile(nil, 50) != 0 {
		t.Error("percentile of nothing")
	}
}
