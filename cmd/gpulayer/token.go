package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpulayer/gpulayer/sdk/api"
	"github.com/gpulayer/gpulayer/sdk/client"
)

// labelFlags collects repeated --label k=v.
type labelFlags map[string]string

func (l labelFlags) String() string { return "" }
func (l labelFlags) Type() string   { return "KEY=VALUE" }

func (l labelFlags) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok || k == "" {
		return fmt.Errorf("label %q: want KEY=VALUE", s)
	}
	l[k] = v
	return nil
}

func tokenCmd() *cobra.Command {
	return group("token", "client, join and instance tokens (admin)",
		"  gpulayer token create --kind client --name ci --roles submit\n  gpulayer token list",
		tokenCreateCmd(), tokenListCmd(), tokenRevokeCmd())
}

// tokenCreateCmd mints a client, join or instance token and prints it
// once on standard output (and nothing else there), so it can be piped.
func tokenCreateCmd() *cobra.Command {
	var cf clientFlags
	var kind, name, roles, groups, instanceID, team string
	var expires time.Duration
	var maxUses int
	var approval, asJSON bool
	var gpuModels []string
	labels := labelFlags{}
	cmd := &cobra.Command{
		Use:   "create [flags]",
		Short: "mint a token, printed once: --kind client|join|instance",
		Long: `create mints a token and prints it on stdout, alone, once: the
coordinators keep only its hash.`,
		Example: `  gpulayer token create --kind client --name ci --roles submit
  gpulayer token create --kind client --name vision-ci --roles submit --team vision
  gpulayer token create --kind join --name rack-4 --max-uses 1 --requires-approval --label zone=a
  gpulayer token create --kind join --name h100-pool --gpu-model "NVIDIA H100 80GB HBM3"
  gpulayer token create --kind instance --instance-id i-0abc --expires-in 1h`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := cf.client(cmd.Flags())
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			secs := int64(expires.Round(time.Second) / time.Second)
			var out api.CreateTokenResponse
			switch kind {
			case api.TokenKindInstance:
				out, err = c.CreateInstanceToken(ctx, api.CreateInstanceTokenRequest{InstanceID: instanceID, Name: name, ExpiresInSeconds: secs})
			case api.TokenKindClient, api.TokenKindJoin:
				req := api.CreateTokenRequest{Kind: kind, Name: name, ExpiresInSeconds: secs}
				if kind == api.TokenKindClient {
					req.Roles, req.Team = splitList(roles), team
				} else {
					req.MaxUses, req.RequiresApproval, req.Groups, req.GPUModels = maxUses, approval, splitList(groups), gpuModels
					if len(labels) > 0 {
						req.Labels = labels
					}
				}
				out, err = c.CreateToken(ctx, req)
			default:
				return usagef("--kind must be client, join or instance")
			}
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(out)
			}
			fmt.Fprintf(humanErr, "%s token %s (%s) created; it is shown only now:\n", out.Kind, out.ID, out.Name)
			fmt.Fprintln(humanOut, out.Token)
			return nil
		},
	}
	fs := cmd.Flags()
	cf.register(fs)
	fs.StringVar(&kind, "kind", "client", "client, join or instance")
	fs.StringVar(&name, "name", "", "token name, used for attribution (required for client and join tokens)")
	fs.StringVar(&roles, "roles", "read", "client roles, comma separated: read, submit, admin")
	fs.StringVar(&team, "team", "", "client token: the team it acts within (default: default)")
	fs.DurationVar(&expires, "expires-in", 0, "lifetime (0: none; instance tokens default to 24h)")
	fs.IntVar(&maxUses, "max-uses", 0, "join token: registrations allowed (0: unlimited; 1: a one-time join code)")
	fs.BoolVar(&approval, "requires-approval", false, "join token: workers wait as pending until `gpulayer worker approve`")
	fs.StringVar(&groups, "groups", "", "join token: groups its workers join, comma separated")
	fs.Var(labels, "label", "join token: KEY=VALUE given to its workers (repeatable)")
	fs.StringArrayVar(&gpuModels, "gpu-model", nil, "join token: the only GPU model its workers may have, as NVML names it (\"NVIDIA H100 80GB HBM3\"; repeatable)")
	fs.StringVar(&instanceID, "instance-id", "", "instance token: the instance it is bound to")
	fs.BoolVar(&asJSON, "json", false, "print the whole answer as JSON")
	return cmd
}

func tokenListCmd() *cobra.Command {
	var all bool
	cmd := readCmd(&cobra.Command{
		Use:     "list [flags]",
		Short:   "list tokens (never their secrets)",
		Example: "  gpulayer token list\n  gpulayer token list --all -o wide",
		Args:    noArgs,
	}, false, func(ctx context.Context, c *client.Client, _ []string) ([]api.TokenInfo, error) {
		toks, err := c.Tokens(ctx)
		if err != nil || all {
			return toks, err
		}
		live := toks[:0]
		for _, t := range toks {
			if !t.Revoked {
				live = append(live, t)
			}
		}
		return live, nil
	}, tokenTable)
	cmd.Flags().BoolVar(&all, "all", false, "include revoked tokens")
	return cmd
}

func tokenTable(w io.Writer, toks []api.TokenInfo, wide bool) {
	head := []string{"ID", "KIND", "NAME", "ROLES", "USES", "EXPIRES", "STATE", "CREATED BY"}
	if wide {
		head = append(head, "CREATED", "LAST USED", "GROUPS", "LABELS", "INSTANCE")
	}
	row(w, head...)
	for _, t := range toks {
		uses := fmt.Sprint(t.Uses)
		if t.MaxUses > 0 {
			uses += "/" + fmt.Sprint(t.MaxUses)
		}
		cells := []string{t.ID, t.Kind, t.Name, commaList(t.Roles), uses, ago(t.ExpiresAt), tokenState(t, time.Now()), dash(t.CreatedBy)}
		if wide {
			cells = append(cells, ago(t.CreatedAt), ago(t.LastUsedAt), commaList(t.Groups), labelList(t.Labels), dash(t.InstanceID))
		}
		row(w, cells...)
	}
}

func tokenRevokeCmd() *cobra.Command {
	return clientLeaf(&cobra.Command{
		Use:     "revoke [flags] TOKEN_ID",
		Short:   "revoke a token by id",
		Example: "  gpulayer token revoke 3f2a9c",
		Args:    exactArgs(1, "token id"),
	}, nil, func(cmd *cobra.Command, c *client.Client, args []string, _ *outputFlags) error {
		t, err := c.RevokeToken(cmd.Context(), args[0])
		if err != nil {
			return err
		}
		fmt.Fprintf(humanOut, "%s token %s (%s) revoked\n", t.Kind, t.ID, t.Name)
		return nil
	})
}

// tokenState says whether a token still works: revoked, expired, used up
// (a join or instance token with no registration left), or live.
func tokenState(t api.TokenInfo, now time.Time) string {
	switch {
	case t.Revoked:
		return "revoked"
	case t.ExpiresAt != "":
		if at, err := api.ParseTime(t.ExpiresAt); err == nil && !now.Before(at) {
			return "expired"
		}
	}
	if t.MaxUses > 0 && t.Uses >= t.MaxUses {
		return "used up"
	}
	return "live"
}
