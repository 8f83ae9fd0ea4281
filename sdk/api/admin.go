package api

// WorkerResponse wraps a worker in answers to GET /v1/workers/{id} and
// POST /v1/workers/{id}/revoke.
type WorkerResponse struct {
	Worker Worker `json:"worker"`
}

// WorkerList answers GET /v1/workers.
type WorkerList struct {
	Workers []Worker `json:"workers"`
}

// ReissueResponse answers POST /v1/workers/{id}/reissue: the worker's new
// credential, shown this once. The previous credential is dead.
type ReissueResponse struct {
	WorkerID    string  `json:"worker_id"`
	WorkerToken string  `json:"worker_token"`
	Status      string  `json:"status"`
	Worker      *Worker `json:"worker,omitempty"`
}
