package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"time"
)

// dockerCLI runs the docker command line: the faults are what an operator
// (or the kernel) would do to the containers.
type dockerCLI struct {
	bin string
}

func (d dockerCLI) run(ctx context.Context, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, d.bin, args...)
	var out, errb bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &errb
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("%s %s: %w: %s", d.bin, strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
	}
	return strings.TrimSpace(out.String()), nil
}

// endpoint is a container's attachment to a network, enough to attach it
// again the same way: its fixed address and its DNS aliases.
type endpoint struct {
	IPAMConfig *struct {
		IPv4Address string `json:"IPv4Address"`
	} `json:"IPAMConfig"`
	Aliases   []string `json:"Aliases"`
	IPAddress string   `json:"IPAddress"`
}

// networks lists a container's network attachments by network name.
func (d dockerCLI) networks(ctx context.Context, container string) (map[string]endpoint, error) {
	out, err := d.run(ctx, "inspect", "-f", "{{json .NetworkSettings.Networks}}", container)
	if err != nil {
		return nil, err
	}
	var eps map[string]endpoint
	if err := json.Unmarshal([]byte(out), &eps); err != nil {
		return nil, fmt.Errorf("inspect %s networks: %w", container, err)
	}
	return eps, nil
}

// running reports whether a container is running.
func (d dockerCLI) running(ctx context.Context, container string) (bool, error) {
	out, err := d.run(ctx, "inspect", "-f", "{{.State.Running}}", container)
	if err != nil {
		return false, err
	}
	return out == "true", nil
}

// finishedAt reports whether a container has stopped and, if so, when.
func (d dockerCLI) finishedAt(ctx context.Context, container string) (time.Time, bool, error) {
	out, err := d.run(ctx, "inspect", "-f", "{{.State.Running}} {{.State.FinishedAt}}", container)
	if err != nil {
		return time.Time{}, false, err
	}
	running, at, _ := strings.Cut(out, " ")
	if running == "true" {
		return time.Time{}, false, nil
	}
	t, err := time.Parse(time.RFC3339Nano, at)
	if err != nil {
		return time.Time{}, false, fmt.Errorf("inspect %s: finished at %q: %w", container, at, err)
	}
	return t, true, nil
}

func (d dockerCLI) kill(ctx context.Context, container string) error {
	_, err := d.run(ctx, "kill", container)
	return err
}

func (d dockerCLI) start(ctx context.Context, container string) error {
	_, err := d.run(ctx, "start", container)
	return err
}

func (d dockerCLI) restart(ctx context.Context, container string) error {
	_, err := d.run(ctx, "restart", "-t", "10", container)
	return err
}

func (d dockerCLI) disconnect(ctx context.Context, network, container string) error {
	_, err := d.run(ctx, "network", "disconnect", network, container)
	return err
}

// connect attaches a container to a network again with the address and
// aliases it had: peers resolve it by its alias, and Raft dials the
// address it advertised.
func (d dockerCLI) connect(ctx context.Context, network, container string, ep endpoint) error {
	args := []string{"network", "connect"}
	ip := ep.IPAddress
	if ep.IPAMConfig != nil && ep.IPAMConfig.IPv4Address != "" {
		ip = ep.IPAMConfig.IPv4Address
	}
	if ip != "" {
		args = append(args, "--ip", ip)
	}
	for _, a := range ep.Aliases {
		args = append(args, "--alias", a)
	}
	args = append(args, network, container)
	_, err := d.run(ctx, args...)
	return err
}
