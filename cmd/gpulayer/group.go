package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/gpulayer/gpulayer/sdk/api"
	"github.com/gpulayer/gpulayer/sdk/client"
)

// parseRef parses "worker:ID" or "group:ID", the form members and targets
// take on the command line.
func parseRef(what, s string) (api.GroupMember, error) {
	kind, id, ok := strings.Cut(s, ":")
	if !ok || id == "" || (kind != api.MemberWorker && kind != api.MemberGroup) {
		return api.GroupMember{}, fmt.Errorf("%s %q: want worker:ID or group:ID", what, s)
	}
	return api.GroupMember{Kind: kind, ID: id}, nil
}

func parseRefs(what string, args []string) ([]api.GroupMember, error) {
	out := make([]api.GroupMember, 0, len(args))
	for _, a := range args {
		m, err := parseRef(what, a)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

// groupCommand parses the flags every group command takes and its
// positional arguments, at least min of them.
func groupCommand(name string, args []string, min int, usage string) (*client.Client, []string, bool, error) {
	fs := flag.NewFlagSet("group "+name, flag.ContinueOnError)
	var cf clientFlags
	cf.register(fs)
	asJSON := fs.Bool("json", false, "print JSON")
	if err := fs.Parse(args); err != nil {
		return nil, nil, false, err
	}
	if fs.NArg() < min {
		return nil, nil, false, fmt.Errorf("usage: gpulayer group %s %s", name, usage)
	}
	c, err := cf.client()
	if err != nil {
		return nil, nil, false, err
	}
	return c, fs.Args(), *asJSON, nil
}

func printGroup(g api.Group, asJSON bool) error {
	if asJSON {
		return printJSON(g)
	}
	members := make([]string, len(g.Members))
	for i, m := range g.Members {
		members[i] = m.String()
	}
	fmt.Printf("group %s  members=[%s]  workers=[%s]\n", g.GroupID, strings.Join(members, " "), strings.Join(g.Workers, " "))
	return nil
}

func groupCreate(ctx context.Context, args []string) error {
	c, rest, asJSON, err := groupCommand("create", args, 1, "[flags] GROUP [worker:ID|group:ID]...")
	if err != nil {
		return err
	}
	members, err := parseRefs("member", rest[1:])
	if err != nil {
		return err
	}
	g, err := c.CreateGroup(ctx, api.CreateGroupRequest{GroupID: rest[0], Members: members})
	if err != nil {
		return err
	}
	return printGroup(g, asJSON)
}

func groupAdd(ctx context.Context, args []string) error {
	return groupMembers(ctx, "add", args, func(c *client.Client, id string, m api.GroupMember) (api.Group, error) {
		return c.AddGroupMember(ctx, id, m)
	})
}

func groupRemove(ctx context.Context, args []string) error {
	return groupMembers(ctx, "remove", args, func(c *client.Client, id string, m api.GroupMember) (api.Group, error) {
		return c.RemoveGroupMember(ctx, id, m)
	})
}

// groupMembers applies one membership change per member argument, in
// order, and prints the group as the last change left it.
func groupMembers(ctx context.Context, name string, args []string, change func(*client.Client, string, api.GroupMember) (api.Group, error)) error {
	c, rest, asJSON, err := groupCommand(name, args, 2, "[flags] GROUP worker:ID|group:ID...")
	if err != nil {
		return err
	}
	members, err := parseRefs("member", rest[1:])
	if err != nil {
		return err
	}
	var g api.Group
	for _, m := range members {
		if g, err = change(c, rest[0], m); err != nil {
			return err
		}
	}
	return printGroup(g, asJSON)
}

func groupDelete(ctx context.Context, args []string) error {
	c, rest, asJSON, err := groupCommand("delete", args, 1, "[flags] GROUP")
	if err != nil {
		return err
	}
	if len(rest) != 1 {
		return fmt.Errorf("give exactly one group id")
	}
	g, err := c.DeleteGroup(ctx, rest[0])
	if err != nil {
		return err
	}
	if asJSON {
		return printJSON(g)
	}
	fmt.Printf("group %s deleted\n", g.GroupID)
	return nil
}

func groupList(ctx context.Context, args []string) error {
	c, rest, asJSON, err := groupCommand("list", args, 0, "[flags] [GROUP]")
	if err != nil {
		return err
	}
	var groups []api.Group
	if len(rest) > 0 {
		g, err := c.Group(ctx, rest[0])
		if err != nil {
			return err
		}
		groups = []api.Group{g}
	} else if groups, err = c.Groups(ctx); err != nil {
		return err
	}
	if asJSON {
		return printJSON(groups)
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "GROUP\tMEMBERS\tWORKERS\tUPDATED")
	for _, g := range groups {
		members := make([]string, len(g.Members))
		for i, m := range g.Members {
			members[i] = m.String()
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", g.GroupID, dash(strings.Join(members, ",")), dash(strings.Join(g.Workers, ",")), g.UpdatedAt)
	}
	return tw.Flush()
}
