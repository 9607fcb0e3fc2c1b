// Command herald is a single-binary ActivityPub server: actors that Mastodon
// users can find and follow, a signed inbox, and an outbox that delivers every
// activity to every follower's server.
//
// The commands are package cli's: `herald help` lists them, cli/doc.go has
// their usage lines, and each lives in a file of cli/ named after it.
package main

import (
	"os"

	"herald/cli"
)

func main() {
	os.Exit(cli.Main())
}
