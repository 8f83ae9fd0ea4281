package gpusku

import "strings"

// matmulTF32 is each model's dense TF32 tensor-core peak in TFLOP/s, as
// NVIDIA's data sheets give it (without sparsity): what a preflight's
// SGEMM with TF32 math is held against.
var matmulTF32 = map[string]float64{
	"NVIDIA A100-PCIE-40GB":   156,
	"NVIDIA A100-PCIE-80GB":   156,
	"NVIDIA A100-SXM4-40GB":   156,
	"NVIDIA A100-SXM4-80GB":   156,
	"NVIDIA A30-PCIE-24GB":    82,
	"NVIDIA H100 80GB HBM3":   494.7,
	"NVIDIA H100 PCIe":        378,
	"NVIDIA H200 141GB HBM3e": 494.7,
	"NVIDIA B200 180GB HBM3e": 1100,
}

// MatmulTF32 is the dense TF32 peak (TFLOP/s) of the model NVML names
// name, and false for a model the table does not know.
func MatmulTF32(name string) (float64, bool) {
	s, ok := Lookup(name)
	if !ok {
		return 0, false
	}
	v, ok := matmulTF32[strings.TrimSpace(s.Name)]
	return v, ok
}
