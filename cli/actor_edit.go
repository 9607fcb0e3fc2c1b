package cli

import (
	"context"
	"flag"
	"fmt"
	"strings"

	"herald/jobs"
	"herald/store"
)

// actorEdit changes what an actor shows and sends the Update of it to its
// followers: herald actor edit NAME [--name TEXT] [--summary TEXT]
// [--field NAME=VALUE]... [--clear-fields] [--avatar URL] [--header URL]
// [--memorial] [--manual-approval]. Flags not given keep their value.
func (c *cli) actorEdit(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("actor edit", flag.ContinueOnError)
	display := fs.String("name", "", "display name")
	summary := fs.String("summary", "", "profile text (plain text)")
	var fields []store.ProfileField
	fs.Func("field", "a profile field NAME=VALUE (repeat for up to 4; replaces the fields)", func(v string) error {
		name, value, ok := strings.Cut(v, "=")
		f := store.ProfileField{Name: strings.TrimSpace(name), Value: strings.TrimSpace(value)}
		if !ok || f.Name == "" {
			return fmt.Errorf("want NAME=VALUE")
		}
		if err := jobs.CheckField(f); err != nil {
			return err
		}
		fields = append(fields, f)
		return nil
	})
	clearFields := fs.Bool("clear-fields", false, "remove every profile field")
	avatar := fs.String("avatar", "", "URL of the avatar image (empty to remove)")
	header := fs.String("header", "", "URL of the header image (empty to remove)")
	memorial := fs.Bool("memorial", false, "mark the account as kept in memory of someone")
	manual := fs.Bool("manual-approval", false, "approve followers by hand")
	usage := "usage: herald actor edit NAME [--name TEXT] [--summary TEXT] [--field NAME=VALUE]... [--clear-fields] [--avatar URL] [--header URL] [--memorial] [--manual-approval]"
	return c.withDB(ctx, fs, args, 1, usage, func(db *store.DB, pos []string) error {
		given := map[string]bool{}
		fs.Visit(func(f *flag.Flag) {
			if f.Name != "db" { // where the database is, not a change to the profile
				given[f.Name] = true
			}
		})
		if len(given) == 0 {
			return usageError{usage}
		}
		if len(fields) > jobs.MaxFields {
			return usageError{fmt.Sprintf("at most %d --field", jobs.MaxFields)}
		}
		if *clearFields && len(fields) > 0 {
			return usageError{"--clear-fields and --field disagree"}
		}
		for name, u := range map[string]string{"avatar": *avatar, "header": *header} {
			if err := jobs.CheckImageURL(u); given[name] && err != nil {
				return usageError{fmt.Sprintf("invalid --%s %q: %v", name, u, err)}
			}
		}
		a, err := asActor(ctx, db, pos[0])
		if err != nil {
			return err
		}
		set := map[string]func(){
			"name":            func() { a.DisplayName = *display },
			"summary":         func() { a.Summary = *summary },
			"field":           func() { a.Fields = fields },
			"clear-fields":    func() { a.Fields = nil },
			"avatar":          func() { a.AvatarURL = *avatar },
			"header":          func() { a.HeaderURL = *header },
			"memorial":        func() { a.Memorial = *memorial },
			"manual-approval": func() { a.ManualApproval = *manual },
		}
		for name := range given {
			set[name]()
		}
		if err := db.SetActorProfile(ctx, a); err != nil {
			return err
		}
		return c.runJob(ctx, db, jobs.KindUpdateActor, a, jobs.Args{}, func(res sent) {
			fmt.Fprintf(c.stdout, "updated %s; %s %s\n", a.Name, res.Type, res.Activity)
			c.printQueued(res)
		})
	})
}
