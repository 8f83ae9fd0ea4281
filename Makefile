GO ?= go
export PATH := $(shell $(GO) env GOPATH)/bin:$(PATH)

.PHONY: build test
build:
	$(GO) build -o bin/gpulayer ./cmd/gpulayer

test:
	$(GO) test -race -count=1 ./...
