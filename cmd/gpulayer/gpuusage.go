package main

import (
	"encoding/csv"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpulayer/gpulayer/sdk/api"
	"github.com/gpulayer/gpulayer/sdk/client"
)

func usageCmd() *cobra.Command {
	var from, to, groupBy string
	out := &outputFlags{}
	cmd := clientLeaf(&cobra.Command{
		Use:   "usage [flags]",
		Short: "GPU time by team and one dimension over a range (GPU-seconds; -o table|json|csv)",
		Long: `usage prints the GPU time of ended attempts, in GPU-seconds (a MIG
instance or a memory share counts its fraction of its GPU), by team and
--group-by team, gpu_model, user or job. A client token sees its team's,
an admin every team's. Times are RFC 3339 or a duration meaning that long
ago; the range defaults to the last 30 days. Buckets are hours for the
last week and days before it.`,
		Example: "  gpulayer usage\n  gpulayer usage --group-by user --from 168h\n  gpulayer usage --group-by gpu_model --from 2026-11-01T00:00:00Z --to 2026-12-01T00:00:00Z -o csv",
		Args:    noArgs,
	}, out, func(cmd *cobra.Command, c *client.Client, _ []string, out *outputFlags) error {
		now := time.Now()
		q := client.UsageQuery{GroupBy: groupBy}
		var err error
		if q.From, err = parseWhen("from", from, now); err != nil {
			return err
		}
		if q.To, err = parseWhen("to", to, now); err != nil {
			return err
		}
		u, err := c.Usage(cmd.Context(), q)
		if err != nil {
			return err
		}
		if out.is(formatCSV) {
			return usageCSV(os.Stdout, u)
		}
		return out.print(u, func(w io.Writer, wide bool) { usageTable(w, u) })
	})
	fs := cmd.Flags()
	fs.StringVar(&from, "from", "", "start of the range: RFC 3339, or a duration ago (default: 30 days before --to)")
	fs.StringVar(&to, "to", "", "end of the range: RFC 3339, or a duration ago (default: now)")
	fs.StringVar(&groupBy, "group-by", api.UsageByTeam, "team, gpu_model, user or job")
	return cmd
}

// usageColumn is a column a grouping shows beside the team's: its
// table heading and its CSV name (the API's field).
type usageColumn struct{ heading, field string }

func usageColumns(groupBy string) []usageColumn {
	switch groupBy {
	case api.UsageByGPUModel:
		return []usageColumn{{"GPU MODEL", "gpu_model"}}
	case api.UsageByUser:
		return []usageColumn{{"USER", "user"}}
	case api.UsageByJob:
		return []usageColumn{{"USER", "user"}, {"JOB", "job_id"}}
	}
	return nil
}

func headings(cols []usageColumn, field bool) []string {
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i] = c.heading
		if field {
			out[i] = c.field
		}
	}
	return out
}

func usageCells(groupBy string, r api.UsageRow) []string {
	switch groupBy {
	case api.UsageByGPUModel:
		return []string{dash(r.GPUModel)}
	case api.UsageByUser:
		return []string{r.User}
	case api.UsageByJob:
		return []string{r.User, r.JobID}
	}
	return nil
}

func usageTable(w io.Writer, u api.UsageResponse) {
	row(w, append(append([]string{"TEAM"}, headings(usageColumns(u.GroupBy), false)...), "GPU-HOURS", "PREEMPTED GPU-HOURS", "TASKS")...)
	for _, r := range u.Rows {
		row(w, append(append([]string{r.Team}, usageCells(u.GroupBy, r)...),
			strconv.FormatFloat(r.GPUSeconds/3600, 'f', 2, 64), strconv.FormatFloat(r.PreemptedGPUSeconds/3600, 'f', 2, 64), strconv.Itoa(r.Tasks))...)
	}
}

// usageCSV writes the rows with a header, GPU time in GPU-seconds as the
// API answers it.
func usageCSV(w io.Writer, u api.UsageResponse) error {
	cw := csv.NewWriter(w)
	head := append(append([]string{"team"}, headings(usageColumns(u.GroupBy), true)...), "gpu_seconds", "preempted_gpu_seconds", "tasks")
	if err := cw.Write(head); err != nil {
		return err
	}
	for _, r := range u.Rows {
		rec := append(append([]string{r.Team}, usageCells(u.GroupBy, r)...),
			strconv.FormatFloat(r.GPUSeconds, 'f', -1, 64), strconv.FormatFloat(r.PreemptedGPUSeconds, 'f', -1, 64), strconv.Itoa(r.Tasks))
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}
