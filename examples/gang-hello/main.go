// Command gang-hello is the smallest gang task: run as a gang job
// (gpulayer job submit --gang --count N -- gang-hello), every rank
// connects to the master that rendezvous named (MASTER_ADDR,
// MASTER_PORT), tells it its rank, and the master answers each with the
// world it saw, so that all ranks agree on it before they go on, the way
// torch.distributed's env:// initialisation does.
//
// It prints "rank R of W agreed: ..." and exits 0 once the world is whole.
// With GANG_HELLO_HOLD set to a file name it then waits until that file
// exists (a test's way to keep a gang running).
package main

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "gang-hello:", err)
		os.Exit(1)
	}
}

func run() error {
	rank, err := envInt("RANK")
	if err != nil {
		return err
	}
	size, err := envInt("WORLD_SIZE")
	if err != nil {
		return err
	}
	master := net.JoinHostPort(os.Getenv("MASTER_ADDR"), os.Getenv("MASTER_PORT"))
	me := fmt.Sprintf("%d@%s/local%s", rank, os.Getenv("NODE_RANK"), os.Getenv("LOCAL_RANK"))
	var world string
	if rank == 0 {
		world, err = serve(master, me, size)
	} else {
		world, err = join(master, me)
	}
	if err != nil {
		return err
	}
	fmt.Printf("rank %d of %d agreed: %s\n", rank, size, world)
	if hold := os.Getenv("GANG_HELLO_HOLD"); hold != "" {
		for {
			if _, err := os.Stat(hold); err == nil {
				return nil
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	return nil
}

func envInt(name string) (int, error) {
	v, err := strconv.Atoi(os.Getenv(name))
	if err != nil {
		return 0, fmt.Errorf("%s=%q: not a gang member? (%v)", name, os.Getenv(name), err)
	}
	return v, nil
}

// serve is rank 0: it listens on the master's address, takes one line
// from each other rank, and answers every one with the whole world.
func serve(addr, me string, size int) (string, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return "", err
	}
	defer l.Close()
	members := []string{me}
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for len(members) < size {
		c, err := l.Accept()
		if err != nil {
			return "", err
		}
		conns = append(conns, c)
		line, err := bufio.NewReader(c).ReadString('\n')
		if err != nil {
			return "", fmt.Errorf("reading a member: %w", err)
		}
		members = append(members, strings.TrimSpace(line))
	}
	slices.Sort(members)
	world := strings.Join(members, " ")
	for _, c := range conns {
		if _, err := fmt.Fprintln(c, world); err != nil {
			return "", err
		}
	}
	return world, nil
}

// join is every other rank: it connects to the master (which may not
// listen yet), says who it is, and reads the world back.
func join(addr, me string) (string, error) {
	deadline := time.Now().Add(60 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, 2*time.Second)
		if err != nil {
			if time.Now().After(deadline) {
				return "", fmt.Errorf("master %s: %w", addr, err)
			}
			time.Sleep(100 * time.Millisecond)
			continue
		}
		defer c.Close()
		if _, err := fmt.Fprintln(c, me); err != nil {
			return "", err
		}
		world, err := bufio.NewReader(c).ReadString('\n')
		if err != nil {
			return "", errors.Join(errors.New("the master hung up before the world was whole"), err)
		}
		return strings.TrimSpace(world), nil
	}
}
