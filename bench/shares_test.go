package bench

import (
	"bytes"
	"context"
	"math"
	"os"
	"testing"
	"time"

	"github.com/google/pprof/profile"
)

// TestProfileShares: each sample counts once, for the first share whose
// function is on its stack (signing, then GC, then allocation).
func TestProfileShares(t *testing.T) {
	fn := map[string]*profile.Function{}
	loc := func(names ...string) []*profile.Location {
		var out []*profile.Location
		for _, n := range names {
			if fn[n] == nil {
				fn[n] = &profile.Function{ID: uint64(len(fn) + 1), Name: n}
			}
			out = append(out, &profile.Location{ID: uint64(len(fn)*100 + len(out) + 1), Line: []profile.Line{{Function: fn[n]}}})
		}
		return out
	}
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
		PeriodType: &profile.ValueType{Type: "cpu", Unit: "nanoseconds"}, Period: 10_000_000,
	}
	add := func(ns int64, stack ...string) {
		p.Sample = append(p.Sample, &profile.Sample{Value: []int64{1, ns}, Location: loc(stack...)})
	}
	add(60, "crypto/internal/fips140/bigmod.addMulVVW1024", "crypto/rsa.SignPKCS1v15", "herald/federation/signature.Sign")
	add(5, "runtime.mallocgc", "crypto/rsa.SignPKCS1v15")        // signing's own allocation is signing
	add(10, "runtime.scanstack", "runtime.gcBgMarkWorker")       // background marking
	add(5, "runtime.gcAssistAlloc1", "runtime.mallocgc", "main") // an assist is GC, not allocation
	add(5, "runtime.mallocgcSmallNoscan", "runtime.mallocgc", "net/http.(*Transport).roundTrip")
	add(15, "syscall.Syscall6", "net.(*conn).Write")
	// The rsaz build: its kernels and helpers are signing wherever the
	// profile's stack starts (an assembly frame alone, an inlined helper).
	add(7, "herald/internal/rsaz.amm52x20x2", "herald/internal/rsaz.expPair", "herald/internal/rsaz.(*Key).SignPKCS1v15SHA256")
	add(3, "herald/internal/rsaz.selectEntry")
	add(10, "herald/internal/rsazother.F") // only the package itself counts
	// Locations must be unique per profile: renumber them.
	id := uint64(1)
	for _, s := range p.Sample {
		for _, l := range s.Location {
			l.ID = id
			p.Location = append(p.Location, l)
			id++
		}
	}
	for _, f := range fn {
		p.Function = append(p.Function, f)
	}
	var buf bytes.Buffer
	if err := p.Write(&buf); err != nil {
		t.Fatal(err)
	}
	sh, err := ProfileShares(&buf)
	if err != nil {
		t.Fatal(err)
	}
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	if sh.Samples != 120 || !near(sh.Sign, 75.0/120) || !near(sh.GC, 15.0/120) || !near(sh.Malloc, 5.0/120) {
		t.Errorf("shares %+v, want 120 ns: signing 75/120, GC 15/120, allocation 5/120", sh)
	}
}

// TestFanoutFollowerShape is scenario (f), small: after the warm-up the
// measured activity goes out over the warm-up's connections (the farm
// accepts none), signed draft-cavage for Mastodon-style hosts, and the
// window's CPU profile is read.
func TestFanoutFollowerShape(t *testing.T) {
	t.Setenv("BENCH_FARM_CHILD", "1")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := RunScenario(ctx, Scenario{Name: "f", Hosts: 20, Followers: 40, CavageOnly: 1, Warmup: 1, Shares: true,
		Dir: t.TempDir(), Timeout: 10 * time.Second, FarmCmd: []string{os.Args[0]}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Delivered != 20 || res.BadSignatures != 0 || res.Knocks.Cavage != 20 {
		t.Fatalf("delivered %d, bad signatures %d, draft-cavage %d: want 20, 0, 20", res.Delivered, res.BadSignatures, res.Knocks.Cavage)
	}
	if res.NewConns != 0 {
		t.Errorf("the farm accepted %d new connections in the window, want 0: the warm-up's are still open", res.NewConns)
	}
	if res.Shares == nil {
		t.Error("no shares read from the window's CPU profile")
	}
}
