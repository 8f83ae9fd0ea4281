// Package metricslint checks a /metrics page as `promtool check metrics`
// does (client_golang's promlint runs the same rules), plus one rule of
// the project's: a family's help text says more than its name. Tests use
// it so that the naming rules hold without promtool installed.
package metricslint

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
	dto "github.com/prometheus/client_model/go"
)

// ErrHelpIsName is the project's rule: help text equal to the family's
// name explains nothing.
var ErrHelpIsName = errors.New("help text only repeats the metric name")

// Lint reads a page in the Prometheus text format and returns every
// problem found, one line each as promtool prints them ("NAME TEXT"),
// sorted; an error when the page does not parse.
func Lint(r io.Reader) ([]string, error) {
	l := promlint.New(r)
	l.AddCustomValidations(helpIsNotName)
	problems, err := l.Lint()
	if err != nil {
		return nil, fmt.Errorf("metricslint: %w", err)
	}
	out := make([]string, len(problems))
	for i, p := range problems {
		out[i] = p.Metric + " " + p.Text
	}
	return out, nil
}

func helpIsNotName(mf *dto.MetricFamily) []error {
	if strings.TrimSpace(mf.GetHelp()) == mf.GetName() {
		return []error{ErrHelpIsName}
	}
	return nil
}
