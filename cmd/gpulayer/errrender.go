package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/gpulayer/gpulayer/sdk/client"
)

// printError writes a command's error to stderr: one line, "gpulayer: "
// and the error; an error that says no coordinator could serve the call
// (client.NoQuorumError) ends its line with a colon and is followed by
// one indented line per address tried, with what that address said.
func printError(w io.Writer, err error) {
	var nq *client.NoQuorumError
	if !errors.As(err, &nq) || len(nq.Tries) == 0 {
		fmt.Fprintln(w, "gpulayer:", err)
		return
	}
	// Keep what the command said around the client's error; the
	// addresses go on lines of their own.
	msg := strings.Replace(err.Error(), nq.Error(), nq.Headline(), 1)
	fmt.Fprintf(w, "gpulayer: %s:\n", msg)
	for _, t := range nq.Tries {
		fmt.Fprintf(w, "  %s: %s\n", t.Addr, t.Said())
	}
}
