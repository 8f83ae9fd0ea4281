package exec

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"golang.org/x/sys/unix"
)

// buildMounts makes the task's view of the file system, inside the
// sandbox's own mount namespace (nothing of it reaches the host): a /proc
// of the sandbox's PID namespace, an empty tmpfs of its own, of bounded
// size (freshTmpfsOptions), on each existing Fresh directory, an empty
// read-only directory over each existing Hide path (/dev/null on a nodev
// mount over a file, which no one can open), and each Keep path
// reachable again where one of those covered it. Hide and Keep paths are
// looked up on the host before anything is covered.
//
// A hidden directory is covered by a tmpfs of mode 0000 (0711 when a
// Keep path lies below it: the task may pass through, not list), so a
// task user that reaches for what was there is refused (EACCES), the
// same wherever it was; a hidden path under a Fresh directory is made
// again, empty, to the same effect.
func buildMounts(p sandboxPlan) error {
	// Nothing mounted here may propagate back to the host.
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make / private: %w", err)
	}
	fresh := existingPaths(p.Fresh, true)
	hide := existingPaths(p.Hide, false)
	keep, fds, err := openKeeps(p.Keep)
	defer func() {
		for _, fd := range fds {
			_ = unix.Close(fd)
		}
	}()
	if err != nil {
		return err
	}
	if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("mount /proc: %w", err)
	}
	var covered []string // what the task no longer sees of the host
	for _, d := range fresh {
		if err := mountPoint(d.path, true, covered); err != nil {
			return err
		}
		if err := unix.Mount("tmpfs", d.path, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, freshTmpfsOptions(p.FreshBytes)); err != nil {
			return fmt.Errorf("mount %s: %w", d.path, err)
		}
		covered = append(covered, d.path)
	}
	// A hidden path below a kept one is covered once the kept one is
	// bound back (which would show it again); the others before, so that
	// what is kept below them is bound back over their cover.
	var readOnly []hidden
	var inKept []hidden
	for _, h := range hide {
		if under(h.path, keep) && !slices.Contains(keep, h.path) {
			inKept = append(inKept, h)
			continue
		}
		if err := hidePath(h, keep, &covered, &readOnly); err != nil {
			return err
		}
	}
	for i, k := range keep {
		if !under(k, covered) {
			continue // never covered: the host's own, reachable as it was
		}
		if err := os.MkdirAll(k, 0o711); err != nil {
			return fmt.Errorf("keep %s: %w", k, err)
		}
		src := "/proc/self/fd/" + strconv.Itoa(fds[i])
		if err := unix.Mount(src, k, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return fmt.Errorf("keep %s: bind: %w", k, err)
		}
	}
	for _, h := range inKept {
		if err := hidePath(h, nil, &covered, &readOnly); err != nil {
			return err
		}
	}
	for _, h := range readOnly {
		flags := uintptr(unix.MS_REMOUNT | unix.MS_RDONLY | unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC)
		if !h.dir {
			flags |= unix.MS_BIND
		}
		if err := unix.Mount("", h.path, "", flags, ""); err != nil {
			return fmt.Errorf("hide %s: read-only: %w", h.path, err)
		}
	}
	return nil
}

// hidePath covers h (unless a hidden path above it covers it already),
// and adds it to what is covered and to what is made read-only.
func hidePath(h hidden, keep []string, covered *[]string, readOnly *[]hidden) error {
	if under(h.path, readOnlyPaths(*readOnly)) {
		return nil // hidden with its parent already
	}
	if err := mountPoint(h.path, h.dir, *covered); err != nil {
		return err
	}
	if err := coverPath(h, keep); err != nil {
		return err
	}
	*covered = append(*covered, h.path)
	*readOnly = append(*readOnly, h)
	return nil
}

// freshTmpfsOptions are the mount options of a fresh tmpfs of size bytes
// (none: the kernel's default, half the host's RAM): sticky and
// writable by all, and bounded in bytes and in inodes (one per 4 KiB,
// at least minFreshInodes), since an inode is memory too, which size
// does not count.
func freshTmpfsOptions(size int64) string {
	if size <= 0 {
		return "mode=1777"
	}
	return fmt.Sprintf("mode=1777,size=%d,nr_inodes=%d", size, max(size/4096, minFreshInodes))
}

// minFreshInodes is the least number of files a fresh tmpfs holds.
const minFreshInodes = 4096

// hidden is a Hide path as found on the host.
type hidden struct {
	path string
	dir  bool
}

func readOnlyPaths(hs []hidden) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = h.path
	}
	return out
}

// coverPath covers a hidden path: a directory with an empty tmpfs, a file
// with /dev/null, which the nodev remount (buildMounts) then makes
// impossible to open: the task is refused it (EACCES) as it is a hidden
// directory.
func coverPath(h hidden, keep []string) error {
	if !h.dir {
		if err := unix.Mount("/dev/null", h.path, "", unix.MS_BIND, ""); err != nil {
			return fmt.Errorf("hide %s: %w", h.path, err)
		}
		return nil
	}
	mode := "mode=0000"
	for _, k := range keep {
		if under(k, []string{h.path}) {
			mode = "mode=0711"
		}
	}
	if err := unix.Mount("tmpfs", h.path, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, mode+",size=1m"); err != nil {
		return fmt.Errorf("hide %s: %w", h.path, err)
	}
	return nil
}

// mountPoint makes sure path exists to mount on: a path under one that
// is covered already is made again in what covers it (directories 0711
// on the way), as a directory or as an empty file.
func mountPoint(path string, dir bool, covered []string) error {
	if !under(path, covered) {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o711); err != nil {
		return fmt.Errorf("mount point %s: %w", path, err)
	}
	var err error
	if dir {
		err = os.Mkdir(path, 0o711)
	} else {
		var f *os.File
		if f, err = os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0); err == nil {
			err = f.Close()
		}
	}
	if err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("mount point %s: %w", path, err)
	}
	return nil
}

// existingPaths resolves the symbolic links of paths and keeps those
// that exist (only directories when dirsOnly), shortest first, without
// duplicates: what is not there has nothing to hide.
func existingPaths(paths []string, dirsOnly bool) []hidden {
	var out []hidden
	for _, p := range paths {
		real, err := filepath.EvalSymlinks(p)
		if err != nil {
			continue
		}
		fi, err := os.Stat(real)
		if err != nil || (dirsOnly && !fi.IsDir()) || real == "/" {
			continue
		}
		if !slices.ContainsFunc(out, func(h hidden) bool { return h.path == real }) {
			out = append(out, hidden{path: real, dir: fi.IsDir()})
		}
	}
	slices.SortStableFunc(out, func(a, b hidden) int { return len(a.path) - len(b.path) })
	return out
}

// openKeeps resolves each Keep path and opens it (O_PATH), so that it can
// be bound back once what covers it is mounted. Every Keep path must
// exist.
func openKeeps(paths []string) (keep []string, fds []int, err error) {
	for _, p := range paths {
		real, err := filepath.EvalSymlinks(p)
		if err != nil {
			return keep, fds, fmt.Errorf("keep %s: %w", p, unwrapPath(err))
		}
		if slices.Contains(keep, real) {
			continue
		}
		fd, err := unix.Open(real, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			return keep, fds, fmt.Errorf("keep %s: %w", p, err)
		}
		keep, fds = append(keep, real), append(fds, fd)
	}
	return keep, fds, nil
}

// unwrapPath drops the path an fs.PathError repeats.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// under reports whether path is one of dirs or lies below one.
func under(path string, dirs []string) bool {
	for _, d := range dirs {
		if rel, err := filepath.Rel(d, path); err == nil && filepath.IsLocal(rel) {
			return true
		}
	}
	return false
}
