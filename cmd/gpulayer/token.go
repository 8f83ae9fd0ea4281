package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/gpulayer/gpulayer/sdk/api"
)

// labelFlags collects repeated --label k=v.
type labelFlags map[string]string

func (l labelFlags) String() string { return "" }

func (l labelFlags) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok || k == "" {
		return fmt.Errorf("label %q: want KEY=VALUE", s)
	}
	l[k] = v
	return nil
}

// tokenCreate mints a client, join or instance token and prints it once
// on standard output (and nothing else there), so it can be piped.
func tokenCreate(ctx context.Context, args []string) error {
	fs := newClientCmd("token create")
	kind := fs.String("kind", "client", "client, join or instance")
	name := fs.String("name", "", "token name, used for attribution (required for client and join tokens)")
	roles := fs.String("roles", "read", "client roles, comma separated: read, submit, admin")
	expires := fs.Duration("expires-in", 0, "lifetime (0: none; instance tokens default to 24h)")
	maxUses := fs.Int("max-uses", 0, "join token: registrations allowed (0: unlimited; 1: a one-time join code)")
	approval := fs.Bool("requires-approval", false, "join token: workers wait as pending until `gpulayer worker approve`")
	groups := fs.String("groups", "", "join token: groups its workers join, comma separated")
	labels := labelFlags{}
	fs.Var(labels, "label", "join token: KEY=VALUE given to its workers (repeatable)")
	instanceID := fs.String("instance-id", "", "instance token: the instance it is bound to")
	asJSON := fs.Bool("json", false, "print the whole answer as JSON")
	c, _, err := fs.connect(args, -1, "")
	if err != nil {
		return err
	}
	secs := int64(expires.Round(time.Second) / time.Second)
	var out api.CreateTokenResponse
	switch *kind {
	case api.TokenKindInstance:
		out, err = c.CreateInstanceToken(ctx, api.CreateInstanceTokenRequest{InstanceID: *instanceID, Name: *name, ExpiresInSeconds: secs})
	case api.TokenKindClient, api.TokenKindJoin:
		req := api.CreateTokenRequest{Kind: *kind, Name: *name, ExpiresInSeconds: secs}
		if *kind == api.TokenKindClient {
			req.Roles = splitList(*roles)
		} else {
			req.MaxUses, req.RequiresApproval, req.Groups = *maxUses, *approval, splitList(*groups)
			if len(labels) > 0 {
				req.Labels = labels
			}
		}
		out, err = c.CreateToken(ctx, req)
	default:
		return fmt.Errorf("--kind must be client, join or instance")
	}
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(out)
	}
	fmt.Fprintf(os.Stderr, "%s token %s (%s) created; it is shown only now:\n", out.Kind, out.ID, out.Name)
	fmt.Println(out.Token)
	return nil
}

func tokenList(ctx context.Context, args []string) error {
	fs := newClientCmd("token list")
	asJSON := fs.Bool("json", false, "print JSON")
	all := fs.Bool("all", false, "include revoked tokens")
	c, _, err := fs.connect(args, -1, "")
	if err != nil {
		return err
	}
	toks, err := c.Tokens(ctx)
	if err != nil {
		return err
	}
	if !*all {
		live := toks[:0]
		for _, t := range toks {
			if !t.Revoked {
				live = append(live, t)
			}
		}
		toks = live
	}
	if *asJSON {
		return printJSON(toks)
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tKIND\tNAME\tROLES\tUSES\tEXPIRES\tSTATE\tCREATED BY")
	for _, t := range toks {
		uses := fmt.Sprint(t.Uses)
		if t.MaxUses > 0 {
			uses += "/" + fmt.Sprint(t.MaxUses)
		}
		state := "live"
		if t.Revoked {
			state = "revoked"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", t.ID, t.Kind, t.Name, dash(strings.Join(t.Roles, ",")), uses, dash(t.ExpiresAt), state, dash(t.CreatedBy))
	}
	return tw.Flush()
}

func tokenRevoke(ctx context.Context, args []string) error {
	fs := newClientCmd("token revoke")
	c, pos, err := fs.connect(args, 1, "token id")
	if err != nil {
		return err
	}
	id := pos[0]
	t, err := c.RevokeToken(ctx, id)
	if err != nil {
		return err
	}
	fmt.Printf("%s token %s (%s) revoked\n", t.Kind, t.ID, t.Name)
	return nil
}
