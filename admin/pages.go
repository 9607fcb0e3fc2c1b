package admin

import (
	"errors"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"herald/host"
	"herald/node"
	"herald/outbox"
	"herald/outbox/delivery"
	"herald/store"
	"herald/web/templates"
)

// overview is the console's front page: the queue now, its history, and
// what is wrong.
func (h *Handler) overview(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	now := h.now()
	counts, err := h.db.DeliveryCounts(ctx)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	lanes, err := h.db.DeliveryCountsByLane(ctx)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	type laneRow struct {
		Lane, State string
		N           int
	}
	var laneRows []laneRow
	for _, l := range lanes {
		name := "normal"
		if l.Lane == store.LaneLow {
			name = "low"
		}
		laneRows = append(laneRows, laneRow{name, l.State, l.N})
	}
	oldest := "nothing due"
	if t, ok, err := h.db.OldestDue(ctx); err != nil {
		h.fail(w, r, err)
		return
	} else if ok && now.After(t) {
		oldest = templates.Duration(now.Sub(t))
	} else if ok {
		oldest = "next in " + templates.Duration(t.Sub(now))
	}
	hosts, err := h.db.HostOverviews(ctx, now)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	var failing, paused, unavailable int
	for _, o := range hosts {
		if o.LastError != "" && o.LastFailureAt.After(o.LastSuccess) {
			failing++
		}
		if o.Paused {
			paused++
		}
		if !o.UnavailableSince.IsZero() {
			unavailable++
		}
	}
	charts, err := h.charts(r, now)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	// On PostgreSQL this page may come from a web node while no worker
	// runs: then nothing is sent, and the page says so.
	noWorker, err := h.db.WorkerMissing(ctx, now.Add(-node.StaleAfter))
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.render(w, r, http.StatusOK, "overview", map[string]any{
		"Refresh": 30, "NoWorker": noWorker, "Queued": counts[store.DeliveryQueued], "InFlight": counts[store.DeliveryLeased], "Failed": counts[store.DeliveryFailed],
		"OldestDue": oldest, "Lanes": laneRows, "Failing": failing, "Paused": paused, "Unavailable": unavailable,
		"Circuits": h.cfg.Node.Runner.OpenCircuits(), "Charts": charts,
		"Uptime": templates.Duration(now.Sub(h.cfg.Started)), "Version": h.cfg.Node.Version,
	})
}

// charts draws the last hour by minute and the last day by 15 minutes:
// deliveries per second, failed attempts, and the queue depth.
func (h *Handler) charts(r *http.Request, now time.Time) ([]any, error) {
	var out []any
	for _, span := range []struct {
		name string
		d    time.Duration
		step time.Duration
	}{{"1 h", time.Hour, time.Minute}, {"24 h", 24 * time.Hour, 15 * time.Minute}} {
		since := now.Add(-span.d)
		buckets, err := h.db.History(r.Context(), since, now, span.step)
		if err != nil {
			return nil, err
		}
		rate, fails, depth := make([]float64, len(buckets)), make([]float64, len(buckets)), make([]float64, len(buckets))
		for i, b := range buckets {
			rate[i] = float64(b.Sent) / span.step.Seconds()
			fails[i] = float64(b.Retry + b.Failed)
			depth[i] = float64(b.Depth)
		}
		out = append(out,
			chart("Deliveries per second, last "+span.name, rate, since, now, perSecond, false),
			chart("Failed attempts, last "+span.name, fails, since, now, count, true),
			chart("Queue depth, last "+span.name, depth, since, now, count, false))
	}
	return out, nil
}

// tag is a label in a host's state column.
type tag struct {
	Text string
	Bad  bool
}

// hostRow is a host with its state tags.
type hostRow struct {
	store.HostOverview
	Tags    []tag
	Circuit bool
}

func (h *Handler) hostRows(r *http.Request) ([]hostRow, error) {
	list, err := h.db.HostOverviews(r.Context(), h.now())
	if err != nil {
		return nil, err
	}
	circuits := map[string]delivery.OpenCircuit{}
	for _, c := range h.cfg.Node.Runner.OpenCircuits() {
		circuits[c.Host] = c
	}
	rows := make([]hostRow, 0, len(list))
	for _, o := range list {
		row := hostRow{HostOverview: o}
		if c, ok := circuits[o.Host]; ok {
			row.Circuit = true
			text := "circuit open until " + c.OpenUntil.UTC().Format("15:04:05")
			if c.Probing {
				text = "circuit half-open"
			}
			row.Tags = append(row.Tags, tag{text, true})
		}
		switch {
		case o.Paused && o.PausedUntil.IsZero():
			row.Tags = append(row.Tags, tag{"paused", true})
		case o.Paused:
			row.Tags = append(row.Tags, tag{"paused until " + o.PausedUntil.UTC().Format("2006-01-02 15:04"), true})
		}
		switch {
		case !o.UnavailableSince.IsZero() && o.Probation:
			row.Tags = append(row.Tags, tag{"probation", true})
		case !o.UnavailableSince.IsZero():
			row.Tags = append(row.Tags, tag{"unavailable since " + o.UnavailableSince.Format("2006-01-02"), true})
		}
		if o.Blocked {
			row.Tags = append(row.Tags, tag{"blocked", true})
		}
		if failingNow(o) {
			row.Tags = append(row.Tags, tag{"failing", true})
		}
		if len(row.Tags) == 0 {
			row.Tags = append(row.Tags, tag{"ok", false})
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// failingNow: the host's last news is a failure.
func failingNow(o store.HostOverview) bool {
	return o.LastError != "" && o.LastFailureAt.After(o.LastSuccess) || o.Failed > 0 && o.LastSuccess.IsZero()
}

// Host filters and sort orders.
var (
	hostStates = []string{"all", "failing", "paused", "circuit", "unavailable", "blocked"}
	hostSorts  = []string{"host", "followers", "queued", "failed", "last error"}
)

// hosts lists one row per remote host, filtered and sorted as asked.
func (h *Handler) hosts(w http.ResponseWriter, r *http.Request) {
	rows, err := h.hostRows(r)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	q := strings.ToLower(strings.TrimSpace(r.URL.Query().Get("q")))
	state := pick(r.URL.Query().Get("state"), hostStates)
	sortBy := pick(r.URL.Query().Get("sort"), hostSorts)
	var shown []hostRow
	for _, row := range rows {
		keep := map[string]bool{
			"all": true, "failing": failingNow(row.HostOverview), "paused": row.Paused, "circuit": row.Circuit,
			"unavailable": !row.UnavailableSince.IsZero(), "blocked": row.Blocked,
		}[state]
		if keep && strings.Contains(row.Host, q) {
			shown = append(shown, row)
		}
	}
	sort.SliceStable(shown, func(i, j int) bool {
		a, b := shown[i], shown[j]
		switch sortBy {
		case "followers":
			return a.Followers > b.Followers
		case "queued":
			return a.Queued+a.InFlight > b.Queued+b.InFlight
		case "failed":
			return a.Failed > b.Failed
		case "last error":
			return a.LastFailureAt.After(b.LastFailureAt)
		}
		return a.Host < b.Host
	})
	h.render(w, r, http.StatusOK, "hosts", map[string]any{
		"Refresh": 30, "Hosts": shown, "Total": len(rows), "Q": q, "State": state, "Sort": sortBy, "States": hostStates, "Sorts": hostSorts,
	})
}

// pick returns v if it is one of choices, else the first choice.
func pick(v string, choices []string) string {
	for _, c := range choices {
		if v == c {
			return v
		}
	}
	return choices[0]
}

// host shows one host: its state, its deliveries and what can be done.
func (h *Handler) host(w http.ResponseWriter, r *http.Request) {
	name := chi.URLParam(r, "host")
	rows, err := h.hostRows(r)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	i := sort.Search(len(rows), func(i int) bool { return rows[i].Host >= name })
	if i == len(rows) || rows[i].Host != name {
		h.pageError(w, r, http.StatusNotFound, "Herald knows no host "+name+".")
		return
	}
	list, err := h.db.HostDeliveries(r.Context(), name, 100)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	sigs, err := h.signaturesOf(r.Context(), name)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.render(w, r, http.StatusOK, "host", map[string]any{
		"Host": rows[i], "Tags": rows[i].Tags, "Deliveries": list, "Base": hostURL(name), "Signatures": sigs,
		"BlockDomain": blockDomainOf(name),
	})
}

// posts lists the latest activities, or with ?activity= shows where one
// went, inbox by inbox.
func (h *Handler) posts(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	if iri := r.URL.Query().Get("activity"); iri != "" {
		a, err := h.db.ActivityByIRI(ctx, iri)
		if errors.Is(err, store.ErrNotFound) {
			h.pageError(w, r, http.StatusNotFound, "No activity "+iri+" was sent from here.")
			return
		}
		var rows []store.DeliveryView
		if err == nil {
			rows, err = h.db.ActivityDeliveries(ctx, a.ID)
		}
		if err != nil {
			h.fail(w, r, err)
			return
		}
		rep := outbox.NewReport(a.IRI, rows)
		type target struct {
			outbox.TargetState
			Host string
		}
		targets := make([]target, len(rep.Targets))
		for i, t := range rep.Targets {
			targets[i] = target{t, rows[i].Host}
		}
		h.render(w, r, http.StatusOK, "post", map[string]any{"Report": rep, "Targets": targets, "Post": h.describe(ctx, a, map[int64]string{}, false), "At": a.CreatedAt, "Type": a.Type})
		return
	}
	list, err := h.db.RecentActivities(ctx, 30)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	type post struct {
		IRI, Type, Summary string
		Public             bool
		At                 time.Time
		postView
	}
	var posts []post
	names := map[int64]string{}
	for _, a := range list {
		rows, err := h.db.ActivityDeliveries(ctx, a.ID)
		if err != nil {
			h.fail(w, r, err)
			return
		}
		posts = append(posts, post{a.IRI, a.Type, outbox.NewReport(a.IRI, rows).Summary, a.Public, a.CreatedAt, h.describe(ctx, &a, names, true)})
	}
	h.render(w, r, http.StatusOK, "posts", map[string]any{"Posts": posts})
}

// blocks lists the blocklist with the forms to change it.
func (h *Handler) blocks(w http.ResponseWriter, r *http.Request) {
	list, err := h.db.BlockedDomains(r.Context())
	if err != nil {
		h.fail(w, r, err)
		return
	}
	allowed, err := h.db.AllowedDomains(r.Context())
	if err != nil {
		h.fail(w, r, err)
		return
	}
	mode, err := h.db.FederationMode(r.Context())
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.render(w, r, http.StatusOK, "blocks", map[string]any{"Blocks": list, "Public": h.cfg.PublicBlocklist, "Allowed": allowed, "Mode": mode})
}

// inboxPage shows the latest refusals and drops.
func (h *Handler) inboxPage(w http.ResponseWriter, r *http.Request) {
	h.render(w, r, http.StatusOK, "inbox", map[string]any{
		"Refresh": 30, "Refusals": h.cfg.Inbox.RecentRefusals(), "Drops": h.cfg.Inbox.RecentDrops(), "Unverified": h.cfg.Inbox.UnverifiedDrops(),
	})
}

// actorRow is an actor with its pending follow requests.
type actorRow struct {
	store.ActorSummary
	URL     string
	Pending []store.Follower
	// DeletionDue is when a suspended actor is deleted for good; zero
	// when it is not suspended.
	DeletionDue time.Time
}

// actors lists the actors and the follow requests waiting for them.
func (h *Handler) actors(w http.ResponseWriter, r *http.Request) {
	h.renderActors(w, r, http.StatusOK, nil)
}

func (h *Handler) renderActors(w http.ResponseWriter, r *http.Request, status int, extra map[string]any) {
	ctx := r.Context()
	list, err := h.db.ListActors(ctx)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	suspensions, err := h.db.ActorSuspensions(ctx)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	due := map[int64]time.Time{}
	for _, s := range suspensions {
		if s.DeletedAt.IsZero() {
			due[s.ActorID] = s.DeletionDue()
		}
	}
	type request struct {
		Actor, Follower string
		Since           time.Time
	}
	var rows []actorRow
	var requests []request
	for _, a := range list {
		pending, err := h.db.Followers(ctx, a.ID, store.StatePending)
		if err != nil {
			h.fail(w, r, err)
			return
		}
		rows = append(rows, actorRow{a, h.inst.ProfileURL(a.Name), pending, due[a.ID]})
		for _, f := range pending {
			requests = append(requests, request{a.Name, f.Follower, f.CreatedAt})
		}
	}
	data := map[string]any{"Actors": rows, "Requests": requests}
	for k, v := range extra {
		data[k] = v
	}
	h.render(w, r, status, "actors", data)
}

// blockDomainOf is the domain the console's block button of a host's page
// blocks: the host without its port.
func blockDomainOf(authority string) string {
	a, err := host.ParseAuthority(authority)
	if err != nil {
		return ""
	}
	return a.Name.String()
}
