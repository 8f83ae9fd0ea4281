package cuda

// Check outcomes, the preflight's words.
const (
	Pass    = "pass"
	Fail    = "fail"
	Skipped = "skipped"
)

// Outcome is one check's result on one GPU, with its figures in Detail.
type Outcome struct {
	Status string
	Detail string
}

// MinMatmulFraction is the share of the model's dense TF32 peak an SGEMM
// must reach to pass. cuBLAS reaches about 60 to 80 % of the data-sheet
// peak on a sound GPU at full clocks; a GPU held at low clocks (thermal
// or power) or with a failing part falls well under half.
const MinMatmulFraction = 0.5
