package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

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
			return nil, usageError{err}
		}
		out = append(out, m)
	}
	return out, nil
}

func groupCmd() *cobra.Command {
	return group("group", "manage worker groups (admin)",
		"  gpulayer group create gpus worker:node-1 worker:node-2\n  gpulayer group list",
		groupCreateCmd(), groupMembersCmd("add", "add members"), groupMembersCmd("remove", "remove members"), groupDeleteCmd(), groupListCmd())
}

func printGroup(g api.Group, asJSON bool) error {
	if asJSON {
		return printJSON(g)
	}
	fmt.Fprintf(humanOut, "group %s  members=[%s]  workers=[%s]\n", g.GroupID, strings.Join(memberList(g), " "), strings.Join(g.Workers, " "))
	return nil
}

func memberList(g api.Group) []string {
	members := make([]string, len(g.Members))
	for i, m := range g.Members {
		members[i] = m.String()
	}
	return members
}

func groupCreateCmd() *cobra.Command {
	return clientLeaf(&cobra.Command{
		Use:     "create [flags] GROUP [worker:ID|group:ID]...",
		Short:   "create a group",
		Example: "  gpulayer group create gpus worker:node-1 group:rack-4",
		Args:    minArgs(1, "GROUP [worker:ID|group:ID]..."),
	}, jsonOnly(), func(cmd *cobra.Command, c *client.Client, args []string, out *outputFlags) error {
		members, err := parseRefs("member", args[1:])
		if err != nil {
			return err
		}
		g, err := c.CreateGroup(cmd.Context(), api.CreateGroupRequest{GroupID: args[0], Members: members})
		if err != nil {
			return err
		}
		return printGroup(g, out.json)
	})
}

// groupMembersCmd applies one membership change per member argument, in
// order, and prints the group as the last change left it.
func groupMembersCmd(name, short string) *cobra.Command {
	return clientLeaf(&cobra.Command{
		Use:     name + " [flags] GROUP worker:ID|group:ID...",
		Short:   short,
		Example: "  gpulayer group " + name + " gpus worker:node-3",
		Args:    minArgs(2, "GROUP worker:ID|group:ID..."),
	}, jsonOnly(), func(cmd *cobra.Command, c *client.Client, args []string, out *outputFlags) error {
		members, err := parseRefs("member", args[1:])
		if err != nil {
			return err
		}
		change := c.AddGroupMember
		if name == "remove" {
			change = c.RemoveGroupMember
		}
		var g api.Group
		for _, m := range members {
			if g, err = change(cmd.Context(), args[0], m); err != nil {
				return err
			}
		}
		return printGroup(g, out.json)
	})
}

func groupDeleteCmd() *cobra.Command {
	return clientLeaf(&cobra.Command{
		Use:     "delete [flags] GROUP",
		Short:   "delete a group",
		Example: "  gpulayer group delete gpus",
		Args:    exactArgs(1, "group id"),
	}, jsonOnly(), func(cmd *cobra.Command, c *client.Client, args []string, out *outputFlags) error {
		g, err := c.DeleteGroup(cmd.Context(), args[0])
		if err != nil {
			return err
		}
		if out.json {
			return printJSON(g)
		}
		fmt.Fprintf(humanOut, "group %s deleted\n", g.GroupID)
		return nil
	})
}

func groupListCmd() *cobra.Command {
	return readCmd(&cobra.Command{
		Use:     "list [flags] [GROUP]",
		Short:   "list groups (or show one)",
		Example: "  gpulayer group list\n  gpulayer group list gpus -o json",
		Args:    maxArgs(1, "group id"),
	}, false, func(ctx context.Context, c *client.Client, args []string) ([]api.Group, error) {
		if len(args) == 0 {
			return c.Groups(ctx)
		}
		g, err := c.Group(ctx, args[0])
		return []api.Group{g}, err
	}, func(w io.Writer, groups []api.Group, wide bool) {
		row(w, "GROUP", "MEMBERS", "WORKERS", "UPDATED")
		for _, g := range groups {
			row(w, g.GroupID, commaList(memberList(g)), commaList(g.Workers), when(g.UpdatedAt, wide))
		}
	})
}
