package command

// Preflight is how an attempt's preflight went, as its agent reported it
// with the attempt's start or fail (api.PreflightReport; validated by the
// route, kept on the attempt).
type Preflight struct {
	Outcome    string `json:"outcome"`
	DurationMS int64  `json:"duration_ms"`
	BoundMS    int64  `json:"bound_ms,omitempty"`
	Checks     int    `json:"checks"`
	Skipped    int    `json:"skipped,omitempty"`
	Failed     string `json:"failed,omitempty"`
}
