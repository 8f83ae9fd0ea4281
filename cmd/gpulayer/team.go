package main

import (
	"context"
	"fmt"
	"io"
	"strconv"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/gpulayer/gpulayer/sdk/api"
	"github.com/gpulayer/gpulayer/sdk/client"
)

func teamCmd() *cobra.Command {
	return group("team", "manage teams: who owns jobs, tokens, quota and usage",
		"  gpulayer team create vision --quota 8 --weight 2\n  gpulayer team list\n  gpulayer token create --name alice --roles submit --team vision",
		teamCreateCmd(), teamUpdateCmd(), teamDeleteCmd(), teamListCmd())
}

// teamSettingFlags are the settings create and update take; a flag not
// given is not sent.
type teamSettingFlags struct {
	weight, quota, borrow float64
	artifactBytes         int64
	unlimited             bool
	noArtifactQuota       bool
}

func (f *teamSettingFlags) register(fs *pflag.FlagSet) {
	fs.Float64Var(&f.weight, "weight", 1, "share in fair share among teams that want more than their quota")
	fs.Float64Var(&f.quota, "quota", 0, "GPUs guaranteed to the team (GPU units: a MIG slice or a share counts its fraction)")
	fs.Float64Var(&f.borrow, "borrow-limit", 0, "GPUs the team may borrow past its quota (absent: without bound)")
	fs.Int64Var(&f.artifactBytes, "artifact-quota-bytes", 0, "bytes of artifacts the team's tokens and its jobs' tasks may keep, checkpoints included (absent: no team bound)")
}

func (f *teamSettingFlags) set(fs *pflag.FlagSet) (weight *float64, quota *api.TeamQuotaRequest, borrow *api.GPUAmount) {
	if fs.Changed("weight") {
		weight = &f.weight
	}
	if fs.Changed("quota") {
		quota = api.QuotaGPUs(f.quota)
	}
	if fs.Changed("artifact-quota-bytes") {
		if quota == nil {
			quota = &api.TeamQuotaRequest{}
		}
		quota.ArtifactBytes = &f.artifactBytes
	}
	if fs.Changed("borrow-limit") {
		borrow = &api.GPUAmount{GPUs: f.borrow}
	}
	return weight, quota, borrow
}

func printTeam(t api.Team, asJSON bool) error {
	if asJSON {
		return printJSON(t)
	}
	fmt.Fprintf(humanOut, "team %s  weight=%s  quota=%s  borrow_limit=%s  in_use=%s  running=%d  pending=%d  artifact_bytes=%d  artifact_quota=%s\n",
		t.Name, gpuFigure(t.Weight), gpuFigure(t.Quota.GPUs), borrowFigure(t.BorrowLimit), gpuFigure(t.Usage.GPUsInUse), t.Usage.RunningTasks, t.Usage.PendingTasks,
		t.Usage.ArtifactBytes, bytesQuotaFigure(t.Quota.ArtifactBytes))
	return nil
}

func gpuFigure(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

func bytesQuotaFigure(n *int64) string {
	if n == nil {
		return "none"
	}
	return strconv.FormatInt(*n, 10)
}

func borrowFigure(a *api.GPUAmount) string {
	if a == nil {
		return "none"
	}
	return gpuFigure(a.GPUs)
}

func teamCreateCmd() *cobra.Command {
	var f teamSettingFlags
	cmd := clientLeaf(&cobra.Command{
		Use:     "create [flags] TEAM",
		Short:   "create a team (admin)",
		Example: "  gpulayer team create vision --quota 8 --borrow-limit 4 --weight 2",
		Args:    exactArgs(1, "team name"),
	}, jsonOnly(), func(cmd *cobra.Command, c *client.Client, args []string, out *outputFlags) error {
		req := api.CreateTeamRequest{Name: args[0]}
		req.Weight, req.Quota, req.BorrowLimit = f.set(cmd.Flags())
		t, err := c.CreateTeam(cmd.Context(), req)
		if err != nil {
			return err
		}
		return printTeam(t, out.json)
	})
	f.register(cmd.Flags())
	return cmd
}

func teamUpdateCmd() *cobra.Command {
	var f teamSettingFlags
	cmd := clientLeaf(&cobra.Command{
		Use:     "update [flags] TEAM",
		Short:   "change a team's weight, quota or borrow limit (admin)",
		Example: "  gpulayer team update vision --quota 12\n  gpulayer team update vision --no-borrow-limit",
		Args:    exactArgs(1, "team name"),
	}, jsonOnly(), func(cmd *cobra.Command, c *client.Client, args []string, out *outputFlags) error {
		var req api.UpdateTeamRequest
		req.Weight, req.Quota, req.BorrowLimit = f.set(cmd.Flags())
		req.ClearBorrowLimit = f.unlimited
		req.ClearArtifactQuota = f.noArtifactQuota
		t, err := c.UpdateTeam(cmd.Context(), args[0], req)
		if err != nil {
			return err
		}
		return printTeam(t, out.json)
	})
	f.register(cmd.Flags())
	cmd.Flags().BoolVar(&f.unlimited, "no-borrow-limit", false, "lift the borrow limit")
	cmd.Flags().BoolVar(&f.noArtifactQuota, "no-artifact-quota", false, "lift the team's artifact byte quota")
	return cmd
}

func teamDeleteCmd() *cobra.Command {
	return clientLeaf(&cobra.Command{
		Use:     "delete [flags] TEAM",
		Short:   "delete a team with no unfinished job; its client tokens are revoked (admin)",
		Example: "  gpulayer team delete vision",
		Args:    exactArgs(1, "team name"),
	}, jsonOnly(), func(cmd *cobra.Command, c *client.Client, args []string, out *outputFlags) error {
		t, err := c.DeleteTeam(cmd.Context(), args[0])
		if err != nil {
			return err
		}
		if out.json {
			return printJSON(t)
		}
		fmt.Fprintf(humanOut, "team %s deleted\n", t.Name)
		return nil
	})
}

func teamListCmd() *cobra.Command {
	return readCmd(&cobra.Command{
		Use:     "list [flags] [TEAM]",
		Short:   "list teams with their quota and live use (an admin sees every team, others their own)",
		Example: "  gpulayer team list\n  gpulayer team list vision -o json",
		Args:    maxArgs(1, "team name"),
	}, false, func(ctx context.Context, c *client.Client, args []string) ([]api.Team, error) {
		if len(args) == 0 {
			return c.Teams(ctx)
		}
		t, err := c.Team(ctx, args[0])
		return []api.Team{t}, err
	}, func(w io.Writer, teams []api.Team, wide bool) {
		row(w, "TEAM", "WEIGHT", "QUOTA", "BORROW LIMIT", "GPUS IN USE", "RUNNING", "PENDING", "ARTIFACT BYTES", "ARTIFACT QUOTA", "UPDATED")
		for _, t := range teams {
			row(w, t.Name, gpuFigure(t.Weight), gpuFigure(t.Quota.GPUs), borrowFigure(t.BorrowLimit), gpuFigure(t.Usage.GPUsInUse),
				strconv.Itoa(t.Usage.RunningTasks), strconv.Itoa(t.Usage.PendingTasks),
				strconv.FormatInt(t.Usage.ArtifactBytes, 10), bytesQuotaFigure(t.Quota.ArtifactBytes), when(t.UpdatedAt, wide))
		}
	})
}
