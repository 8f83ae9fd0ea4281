package plugininit

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
)

// checkoutRequires lists the requirements ("path version") of the
// checkout's go.mod. A new project starts with them, so that the module
// graph go mod tidy walks holds the versions the checkout builds with and
// needs nothing from the network; tidy drops those the plugin does not
// use.
func checkoutRequires(dir string) ([]string, error) {
	f, err := os.Open(filepath.Join(dir, "go.mod"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var reqs []string
	inBlock := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line, _, _ := strings.Cut(sc.Text(), "//")
		fields := strings.Fields(line)
		switch {
		case inBlock && len(fields) == 1 && fields[0] == ")":
			inBlock = false
		case inBlock && len(fields) == 2:
			reqs = append(reqs, fields[0]+" "+fields[1])
		case len(fields) == 2 && fields[0] == "require" && fields[1] == "(":
			inBlock = true
		case len(fields) == 3 && fields[0] == "require":
			reqs = append(reqs, fields[1]+" "+fields[2])
		}
	}
	return reqs, sc.Err()
}
