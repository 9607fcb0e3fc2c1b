// Package timeline makes what people read in Mastodon apps out of what
// federation applies: the statuses (local and remote posts and boosts,
// with their counts, edits and deletions), the home feeds they fan out to
// on arrival, the notifications, the favourites, reactions and votes, the
// direct conversations, and the events the streaming API tells apps of.
//
// It is called from the two places where activities take effect, in
// their transactions, so that what an app sees is committed with what
// federation did, or not at all:
//
//   - the inbox's dispatch calls Received for every verified activity
//     (and Followed and Unfollowed from its follow handling);
//   - the outbox's commit calls Published for every local activity,
//     whatever made it (the client API, the ActivityPub outbox, the
//     operator's commands).
//
// Both hand it the activity as they parsed it, the typed document of
// federation/as (*as.Object), and it reads that: the properties Herald
// types as fields, the few others (sensitive, endTime, votersCount) with
// Get and Decode. Documents it fetches itself come typed too
// (Fetcher.GetObject).
//
// Both end in the same few operations (status.go, boosts.go,
// reactions.go): a status stored once by its id, fanned out to the home
// feeds of the local actors who follow its author (fanout.go, with
// Mastodon's home filters), notifications written with Mastodon's group
// keys (notify.go), and an event recorded for every local actor and
// public stream the change concerns (events.go, the table api_events).
// The streaming API of issue 28 part 3 reads those events; mastoapi
// renders their statuses and notifications with the same code as the
// REST answers.
//
// The package does no network I/O inside a transaction: an Announce of a
// status Herald does not have is kept as a boost whose status is fetched
// later (Resolve, fetch.go, which the client API calls with its guarded
// fetcher when a timeline shows the boost). A quote is kept the same way
// (quotes.go): verified in the transaction when the quoted post is
// Herald's own or the author's, else pending until ResolveQuote
// (quote_fetch.go) fetches its stamp.
package timeline
