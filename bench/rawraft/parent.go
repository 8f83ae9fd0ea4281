package rawraft

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/gpulayer/gpulayer/bench/proc"
)

// Config describes one R1 measurement.
type Config struct {
	// Exe and Args start a process that calls ChildMain with the flags
	// Run appends.
	Exe  string
	Args []string
	// Dir is where the three data dirs go.
	Dir         string
	Store       string
	EntrySize   int
	Concurrency []int
	Duration    time.Duration
	Warmup      time.Duration
	// Stderr receives the nodes' logs.
	Stderr io.Writer
}

// Measure starts three node processes, lets the leader run the load, and
// returns what it measured.
func Measure(ctx context.Context, cfg Config) (Result, error) {
	peers := make([]Peer, 3)
	for i := range peers {
		addr, err := proc.FreeAddr()
		if err != nil {
			return Result{}, err
		}
		peers[i] = Peer{ID: fmt.Sprintf("r%d", i+1), Addr: addr}
	}
	var list []string
	for _, p := range peers {
		list = append(list, p.ID+"="+p.Addr)
	}
	var concs []string
	for _, c := range cfg.Concurrency {
		concs = append(concs, fmt.Sprint(c))
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	children := make([]*proc.Child, len(peers))
	outs := make([]*bytes.Buffer, len(peers))
	defer func() {
		for _, c := range children {
			if c != nil {
				c.CloseStdin()
				c.Stop(5 * time.Second)
			}
		}
	}()
	exited := make(chan int, len(peers))
	for i, p := range peers {
		args := append(append([]string(nil), cfg.Args...),
			"-self", fmt.Sprint(i), "-peers", strings.Join(list, ","),
			"-dir", filepath.Join(cfg.Dir, p.ID), "-store", cfg.Store,
			"-entry-size", fmt.Sprint(cfg.EntrySize), "-conc", strings.Join(concs, ","),
			"-duration", cfg.Duration.String(), "-warmup", cfg.Warmup.String())
		outs[i] = &bytes.Buffer{}
		c, err := proc.Start(ctx, proc.Spec{Name: "raft-" + p.ID, Exe: cfg.Exe, Args: args, Stdout: outs[i], Stderr: cfg.Stderr, Stdin: true})
		if err != nil {
			return Result{}, err
		}
		children[i] = c
		go func() {
			<-c.Done()
			exited <- i
		}()
	}
	for {
		select {
		case <-ctx.Done():
			return Result{}, ctx.Err()
		case i := <-exited:
			if err := children[i].Err(); err != nil {
				return Result{}, fmt.Errorf("raw raft node %s: %w", peers[i].ID, err)
			}
			if outs[i].Len() == 0 {
				continue // a follower that exited early; wait for the leader
			}
			var res Result
			if err := json.Unmarshal(outs[i].Bytes(), &res); err != nil {
				return Result{}, fmt.Errorf("raw raft result: %w", err)
			}
			if len(res.Runs) == 0 {
				return Result{}, errors.New("raw raft leader measured nothing")
			}
			return res, nil
		}
	}
}
