//go:build !unix

package main

import "github.com/gpulayer/gpulayer/sdk/client"

// watchWindow: without SIGWINCH the size stays the first one.
func watchWindow(int) (<-chan client.TermSize, func()) { return nil, func() {} }
