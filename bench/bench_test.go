package bench

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"syscall"
	"testing"
	"time"
)

// TestMain lets the test binary serve as the farm process of
// TestFanoutFarmProcess: started with BENCH_FARM_CHILD=1, it is
// `herald bench farm`.
func TestMain(m *testing.M) {
	if os.Getenv("BENCH_FARM_CHILD") == "1" {
		if err := FarmMain(context.Background(), os.Args[1:], os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestFanoutFarmProcess runs a small (c)-like scenario against a farm in a
// child process: deliveries are verified there, refusals happen in this
// process's dialer, and the counts come back over the control endpoint.
func TestFanoutFarmProcess(t *testing.T) {
	t.Setenv("BENCH_FARM_CHILD", "1")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := RunScenario(ctx, Scenario{Name: "proc", Hosts: 20, Followers: 40, Refuse: 0.2, Dir: t.TempDir(),
		Timeout: 10 * time.Second, FarmCmd: []string{os.Args[0]}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Healthy != 16 || res.Delivered != 16 || res.Duplicates != 0 || res.BadSignatures != 0 {
		t.Errorf("healthy %d, delivered %d (duplicates %d, bad signatures %d), want 16 verified once each",
			res.Healthy, res.Delivered, res.Duplicates, res.BadSignatures)
	}
	if res.Refusals < 4 || !res.FarmProcess || res.FarmCPU <= 0 {
		t.Errorf("refusals %d (want >= 4), farm process %v, farm CPU %s", res.Refusals, res.FarmProcess, res.FarmCPU)
	}
	if res.LastFirst < res.HealthyDone {
		t.Errorf("last first attempt %s before the last delivery %s", res.LastFirst, res.HealthyDone)
	}
}

// TestFanoutSmall runs the whole harness on a 30-host farm: every host must
// get exactly one delivery whose signature the farm verified.
func TestFanoutSmall(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := RunScenario(ctx, Scenario{Name: "test", Hosts: 30, Followers: 75, Dir: t.TempDir(), Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if res.EnqueueRows != 30 {
		t.Errorf("enqueue queued %d rows, want 30 (one per shared inbox)", res.EnqueueRows)
	}
	if res.Delivered != 30 || res.Duplicates != 0 || res.Expected != 30 {
		t.Errorf("delivered %d (duplicates %d), want exactly one per host (30)", res.Delivered, res.Duplicates)
	}
	if res.BadSignatures != 0 {
		t.Errorf("%d requests failed signature verification", res.BadSignatures)
	}
	if res.RowsDone != 30 {
		t.Errorf("%d rows done in the database after the run, want 30", res.RowsDone)
	}
	if res.P50 <= 0 || res.P99 < res.P50 || res.HealthyDone < res.P99 {
		t.Errorf("inconsistent latencies: p50 %s p99 %s done %s", res.P50, res.P99, res.HealthyDone)
	}
}

// TestFarmDial checks the farm's dialer: farm names reach the farm,
// refusing hosts refuse, and nothing else is ever dialled.
func TestFarmDial(t *testing.T) {
	f, err := NewFarm(FarmOptions{Hosts: 10, Refuse: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ctx := context.Background()
	refused := 0
	for i := range 10 {
		c, err := f.Dial(ctx, "tcp", HostName(i)+":80")
		switch {
		case f.Behaviour(i) == Refuse:
			if !errors.Is(err, syscall.ECONNREFUSED) {
				t.Errorf("%s: got %v, want connection refused", HostName(i), err)
			}
			refused++
		case err != nil:
			t.Errorf("%s: %v", HostName(i), err)
		default:
			if c.RemoteAddr().String() != f.Addr() {
				t.Errorf("%s dialled %s, want the farm %s", HostName(i), c.RemoteAddr(), f.Addr())
			}
			c.Close()
		}
	}
	if refused != 5 {
		t.Errorf("%d refusing hosts, want 5", refused)
	}
	for _, addr := range []string{"example.com:443", "127.0.0.1:80", "h0011.farm.test:80", "h0001.farm.test.evil:80", "x.farm.test:80"} {
		if c, err := f.Dial(ctx, "tcp", addr); err == nil {
			c.Close()
			t.Errorf("%s was dialled", addr)
		} else if _, ok := err.(*net.OpError); !ok {
			t.Errorf("%s: error %T, want *net.OpError", addr, err)
		}
	}
}

// TestLoopbackURL: the ingest generator sends to 127.0.0.0/8 and nowhere
// else.
func TestLoopbackURL(t *testing.T) {
	for _, ok := range []string{"http://127.0.0.1:8080/inbox", "http://127.0.9.3:1/inbox"} {
		if err := loopbackURL(ok); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	for _, bad := range []string{"http://example.com:80/inbox", "http://10.0.0.1:80/inbox", "https://127.0.0.1:443/inbox", "http://[::1]:80/inbox", "http://localhost:80/inbox"} {
		if err := loopbackURL(bad); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}

// TestFanoutEd25519 runs scenario (e) small, the farm in a child process:
// after the warm-ups, the measured activity reaches the Fedify-style hosts
// signed with Ed25519 and the cavage-only ones with draft-cavage, and no
// cavage-only host is ever sent an Ed25519 signature.
func TestFanoutEd25519(t *testing.T) {
	t.Setenv("BENCH_FARM_CHILD", "1")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := RunScenario(ctx, Scenario{Name: "e", Hosts: 20, Followers: 40, CavageOnly: 0.25, Warmup: 1, Dir: t.TempDir(),
		Timeout: 10 * time.Second, FarmCmd: []string{os.Args[0]}})
	if err != nil {
		t.Fatal(err)
	}
	k := res.Knocks
	if res.CavageOnly != 5 || res.Delivered != 20 || res.BadSignatures != 0 {
		t.Fatalf("cavage-only %d, delivered %d, bad signatures %d", res.CavageOnly, res.Delivered, res.BadSignatures)
	}
	if k.Ed25519 != 15 || k.Cavage != 5 || k.RFC9421RSA != 0 || k.Refused9421 != 0 || k.Ed25519ToCavageOnly != 0 {
		t.Errorf("measured activity's signatures %+v: want 15 Ed25519, 5 draft-cavage, nothing refused", k)
	}
}
