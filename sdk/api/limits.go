package api

// Input bounds. Every string, list and map a worker or a client sends is
// bounded; the coordinator refuses a request that exceeds one with
// 400 invalid_argument and a message naming the field, before anything is
// proposed. The body cap (MaxJSONBody) bounds the whole request; these
// bound each part, so that no one field can fill it.
//
//	what                                   limit
//	worker, group, cluster id              MaxIDBytes (and the id grammar)
//	labels (register, enroll, join token)  MaxLabels entries; key MaxLabelKeyBytes, value MaxLabelValueBytes
//	capabilities                           MaxCapabilities entries of MaxCapabilityBytes
//	executors (register, heartbeat)        MaxExecutors names of MaxExecutorBytes
//	devices (register, heartbeat)          MaxDevices; uuid MaxDeviceUUIDBytes, name MaxDeviceNameBytes, versions MaxDeviceFieldBytes, health_reason MaxDeviceHealthReasonBytes
//	running_task_ids (heartbeat)           MaxRunningTasks ids of MaxTaskIDBytes
//	instance_id                            MaxInstanceIDBytes
//	job name                               MaxJobNameBytes
//	job config                             MaxConfigBytes (JSON, as sent)
//	job affinity                           MaxAffinityBytes
//	exec command / dir                     MaxCommandBytes / MaxPathBytes
//	exec args                              MaxArgs entries of MaxArgBytes
//	exec env                               MaxEnv entries; key MaxEnvKeyBytes, value MaxEnvValueBytes
//	job inputs, task artifacts             MaxDigests digests
//	resources.gpu_model                    MaxDeviceNameBytes
//	resources.compute_capability           MaxDeviceFieldBytes
//	idempotency_key, attempt_id, submission_id  MaxKeyBytes
//	finish output                          MaxOutputBytes
//	fail reason                            MaxReasonBytes
//	log chunk data                         MaxLogChunkBytes
//	token groups                           MaxTokenGroups
//	request line and headers               MaxHeaderBytes (431 invalid_argument, JSON body)
const (
	MaxIDBytes = 64

	MaxLabels          = 64
	MaxLabelKeyBytes   = 128
	MaxLabelValueBytes = 256

	MaxCapabilities    = 64
	MaxCapabilityBytes = 64

	MaxExecutors     = 32
	MaxExecutorBytes = 64

	MaxDevices          = 256
	MaxDeviceUUIDBytes  = 128
	MaxDeviceNameBytes  = 128
	MaxDeviceFieldBytes = 64
	// MaxGCAgeSeconds bounds older_than_seconds of POST /v1/operator/gc
	// (ten years).
	MaxGCAgeSeconds = 10 * 365 * 24 * 3600
	// MaxDeviceHealthReasonBytes bounds a device's health_reason.
	MaxDeviceHealthReasonBytes = 512

	MaxRunningTasks = 4096
	MaxTaskIDBytes  = 128

	MaxInstanceIDBytes = 256

	MaxJobNameBytes  = 256
	MaxConfigBytes   = 1 << 20
	MaxAffinityBytes = 64 << 10
	MaxCommandBytes  = 4096
	MaxPathBytes     = 4096
	MaxArgs          = 1024
	MaxArgBytes      = 32 << 10
	MaxEnv           = 256
	MaxEnvKeyBytes   = 256
	MaxEnvValueBytes = 32 << 10
	MaxDigests       = 256

	MaxKeyBytes      = 128
	MaxOutputBytes   = 1 << 20
	MaxReasonBytes   = 4096
	MaxLogChunkBytes = 1 << 20

	MaxTokenGroups = 64

	// MaxHeaderBytes bounds the request line plus all header lines. A
	// request over it is answered 431 with code invalid_argument and the
	// JSON error body.
	MaxHeaderBytes = 64 << 10

	// MaxLongPollsPerCredential bounds the acquire long polls (and log
	// follow streams of jobs not yet ended) one credential may hold open
	// at once; one more is refused with 429 rate_limited. It leaves room
	// for a script following a sweep's jobs side by side.
	MaxLongPollsPerCredential = 16
)
