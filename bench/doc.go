// Package bench measures Herald's delivery scheduler against a loopback
// inbox farm and against the machine's own limits, for `herald bench
// fanout`.
//
// The farm (Farm) is N virtual hosts, h0001.farm.test to hNNNN.farm.test,
// all served by one HTTP server on 127.0.0.1. Nothing resolves those names:
// the delivery client is given Farm.Dial as its DialContext, which maps
// every *.farm.test name to the farm's listener and refuses every other
// address, so a benchmark never sends a byte off the loopback interface.
// Herald's production dialer is unchanged. Each farm request is read in
// full and its HTTP signature parsed and verified with the sender's public
// key (its Ed25519 key for keyids ending in /ed25519-key), as a real
// receiver would; arrivals are counted per (host, activity), and verified
// signatures per kind. Hosts can be made to black-hole requests (read,
// never answer), refuse connections, answer slowly, answer 503 or refuse
// RFC 9421 (cavage-only, as Mastodon before 4.5). Each host's connections
// come from a loopback source address of its own (HostSource), so tens of
// thousands of hosts do not run out of one address's ephemeral ports.
//
// RunScenario drives a real delivery.Runner on a temporary SQLite database
// through one fan-out and reports what it cost; SigningRate measures the
// floor every delivery stands on, the RSA-2048 signing rate of the machine.
// `herald bench fanout` runs the farm in a child process (`herald bench
// farm`, ServeFarmProcess, driven through RemoteFarm over a loopback control
// endpoint), so CPU time and peak RSS are the sender's own; the package's
// tests also run it in-process.
//
// RunIngest is scenario (d), inbox ingest: a `herald serve` child process on
// a real SQLite file, loaded by a generator child process (IngestGenMain)
// that plays 200 remote actors from a loopback origin. The server's CPU and
// RSS are read from /proc, and afterwards the database is checked for every
// request that was answered 202.
package bench
