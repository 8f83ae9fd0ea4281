// Command probe is the static program in the container executor's test
// image (FROM scratch): each argument word makes it report one fact of
// the container it runs in, on stdout, one line each.
package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"
)

func main() {
	args := os.Args[1:]
	for i := 0; i < len(args); i++ {
		switch args[i] {
		case "id":
			fmt.Printf("uid=%d gid=%d groups=%v\n", os.Getuid(), os.Getgid(), groups())
		case "caps":
			fmt.Println(statusLine("CapEff"))
			fmt.Println(statusLine("NoNewPrivs"))
		case "rootwrite":
			err := os.WriteFile("/probe-was-here", []byte("x"), 0o644)
			fmt.Printf("rootwrite: %v\n", err)
		case "memlimit":
			b, err := os.ReadFile("/sys/fs/cgroup/memory/memory.limit_in_bytes")
			if err != nil {
				b, err = os.ReadFile("/sys/fs/cgroup/memory.max")
			}
			fmt.Printf("memlimit: %s %v\n", strings.TrimSpace(string(b)), err)
		case "env":
			i++
			fmt.Printf("env %s=%s\n", args[i], os.Getenv(args[i]))
		case "stat":
			i++
			var st syscall.Stat_t
			err := syscall.Stat(args[i], &st)
			fmt.Printf("stat %s: char=%v rdev=%d:%d %v\n", args[i], st.Mode&syscall.S_IFMT == syscall.S_IFCHR, st.Rdev>>8&0xfff, st.Rdev&0xff, err)
		case "write":
			i++
			err := os.WriteFile(args[i], []byte("from the container\n"), 0o644)
			fmt.Printf("write %s: %v\n", args[i], err)
		case "echo":
			i++
			fmt.Println(args[i])
		case "getenv":
			i++
			fmt.Println(os.Getenv(args[i]))
		case "stderr":
			fmt.Fprintln(os.Stderr, "to stderr")
		case "sleep":
			time.Sleep(time.Hour)
		case "cat":
			_, _ = io.Copy(os.Stdout, os.Stdin)
		case "ttyloop":
			// The terminal's size, again after each line of stdin, until
			// a line "q".
			in := bufio.NewScanner(os.Stdin)
			fmt.Println(ttySize())
			for in.Scan() && in.Text() != "q" {
				fmt.Println(ttySize())
			}
		case "exit":
			i++
			n, _ := strconv.Atoi(args[i])
			os.Exit(n)
		default:
			fmt.Printf("unknown word %q\n", args[i])
		}
	}
}

// ttySize is stdin's terminal size as "size ROWS COLS".
func ttySize() string {
	var ws struct{ Row, Col, X, Y uint16 }
	if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, 0, syscall.TIOCGWINSZ, uintptr(unsafe.Pointer(&ws))); errno != 0 {
		return "size: " + errno.Error()
	}
	return fmt.Sprintf("size %d %d", ws.Row, ws.Col)
}

func groups() []int {
	g, _ := syscall.Getgroups()
	return g
}

func statusLine(key string) string {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return key + ": " + err.Error()
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), key+":") {
			return strings.Join(strings.Fields(sc.Text()), " ")
		}
	}
	return key + ": absent"
}
