package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
)

// TestFrigate runs flycl frigate against a real mosquitto and a fake
// Frigate HTTP API (snapshots of drawn pictures, sub_label POSTs
// recorded), publishes a new → update → end sequence shaped as Frigate's
// MQTT documentation shows (docs.frigate.video/integrations/mqtt/), and
// checks that exactly the expected objects get a sub-label whose name
// and score are flycl predict's answer and probability on the same
// snapshot.
func TestFrigate(t *testing.T) {
	lib, sq := squeezeNet(t)
	broker := mosquittoBroker(t)
	if broker == "" {
		t.Skip("mosquitto not installed (apt-get install mosquitto): flycl frigate needs a broker to test against")
	}
	classes := []string{"airplane", "frog", "ship"}
	dir := t.TempDir()
	snaps := map[string][]byte{} // class → a held-out snapshot (JPEG)
	for i, c := range classes {
		os.MkdirAll(filepath.Join(dir, c), 0o755)
		r := rand.New(rand.NewPCG(11, uint64(i)))
		for j := range 4 {
			os.WriteFile(filepath.Join(dir, c, fmt.Sprintf("%d.png", j)), encodePicture(t, shapePicture(drawnAs[c], 160, r), "png"), 0o644)
		}
		snaps[c] = encodePicture(t, shapePicture(drawnAs[c], 160, r), "jpg")
	}
	model := filepath.Join(t.TempDir(), "birds.flycl")
	if out, err := runCLI(t, "learn", "--data", "folder:"+dir, "--backbone", "squeezenet:"+sq, "--model", model, "--ort-lib", lib,
		"--cache", "", "--quiet", "--m", "2000", "--p", "50", "--k", "600", "--lambdas", "1,10,100,1000"); err != nil {
		t.Fatalf("learn: %v\n%s", err, out)
	}
	// The independent truth: flycl predict on the same JPEG bytes.
	want := map[string]string{} // event id → "name score"
	predictOf := func(class string) string {
		f := filepath.Join(t.TempDir(), class+".jpg")
		os.WriteFile(f, snaps[class], 0o644)
		out, err := runCLI(t, "predict", "--model", model, "--ort-lib", lib, "--format", "json", f)
		if err != nil {
			t.Fatalf("predict: %v\n%s", err, out)
		}
		var res struct {
			Predictions []struct {
				Answer      string   `json:"answer"`
				Probability *float64 `json:"probability"`
			} `json:"predictions"`
		}
		if err := json.Unmarshal([]byte(out), &res); err != nil || len(res.Predictions) != 1 {
			t.Fatalf("predict output %q: %v", out, err)
		}
		p := res.Predictions[0]
		if p.Answer == "unknown" {
			t.Fatalf("predict answers unknown for the %s snapshot: the test needs a confident model", class)
		}
		score := "none"
		if p.Probability != nil {
			score = fmt.Sprintf("%.4f", min(1, max(0.0001, float64(int64(*p.Probability*10000+0.5))/10000)))
		}
		return p.Answer + " " + score
	}
	snapOf := map[string]string{"1.1-plane": "airplane", "2.2-frog": "frog", "3.3-small": "ship", "4.4-car": "ship", "5.5-back": "ship"}
	want["1.1-plane"], want["2.2-frog"] = predictOf("airplane"), predictOf("frog")

	var mu sync.Mutex
	var posts []string
	snapshots, fails := 0, 1
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		id, what, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/api/events/"), "/")
		switch {
		case r.Method == http.MethodGet && what == "snapshot.jpg" && r.URL.Query().Get("crop") == "1":
			if fails > 0 { // Frigate busy once: retried
				fails--
				http.Error(w, "busy", http.StatusServiceUnavailable)
				return
			}
			snapshots++
			w.Header().Set("Content-Type", "image/jpeg")
			w.Write(snaps[snapOf[id]])
		case r.Method == http.MethodPost && what == "sub_label":
			var b struct {
				SubLabel      string   `json:"subLabel"`
				SubLabelScore *float64 `json:"subLabelScore"`
			}
			if err := json.NewDecoder(r.Body).Decode(&b); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			score := "none"
			if b.SubLabelScore != nil {
				score = fmt.Sprintf("%.4f", *b.SubLabelScore)
			}
			posts = append(posts, id+" "+b.SubLabel+" "+score)
			w.Write([]byte(`{"success": true, "message": "Event ` + id + ` sub label set to ` + b.SubLabel + `"}`))
		default:
			http.Error(w, "not found", http.StatusNotFound)
		}
	}))
	defer srv.Close()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out bytes.Buffer
	done := make(chan error, 1)
	go func() {
		root := newRoot()
		root.SetOut(&out)
		root.SetArgs([]string{"frigate", "--mqtt", broker, "--frigate", srv.URL, "--model", model, "--ort-lib", lib,
			"--labels", "bird", "--cameras", "garden,front", "--min-box", "64", "--client-id", "flycl-test", "--min-tries", "1"})
		done <- root.ExecuteContext(ctx)
	}()

	pub := paho.NewClient(paho.NewClientOptions().AddBroker(strings.Replace(broker, "mqtt://", "tcp://", 1)).SetClientID("frigate-test-pub"))
	if tok := pub.Connect(); !tok.WaitTimeout(5*time.Second) || tok.Error() != nil {
		t.Fatalf("connect: %v", tok.Error())
	}
	defer pub.Disconnect(100)
	// Wait for flycl frigate's subscription: its client id appears on the broker when it connected;
	// publish a probe until the labeller counts it.
	object := func(id, camera, label string, box [4]int, snap float64, end bool) string {
		endTime := "null"
		if end {
			endTime = "1700000099.5"
		}
		return fmt.Sprintf(`{"id":%q,"camera":%q,"frame_time":1700000001.25,"snapshot":{"frame_time":%g,"box":[%d,%d,%d,%d],"area":1,"region":[0,0,320,320],"score":0.8,"attributes":[]},
"label":%q,"sub_label":null,"top_score":0.9,"false_positive":false,"start_time":1700000000.5,"end_time":%s,"score":0.85,
"box":[%d,%d,%d,%d],"area":%d,"ratio":1.0,"region":[0,0,320,320],"current_zones":["lawn"],"entered_zones":["lawn"],
"thumbnail":null,"has_snapshot":true,"has_clip":true,"active":true,"stationary":false,"motionless_count":0,"position_changes":1,"attributes":{}}`,
			id, camera, snap, box[0], box[1], box[2], box[3], label, endTime, box[0], box[1], box[2], box[3], (box[2]-box[0])*(box[3]-box[1]))
	}
	event := func(typ, before, after string) string {
		if before == "" {
			before = "null"
		}
		return fmt.Sprintf(`{"type":%q,"before":%s,"after":%s}`, typ, before, after)
	}
	big := [4]int{40, 30, 200, 190}
	plane1 := object("1.1-plane", "garden", "bird", big, 1700000001.25, false)
	plane2 := object("1.1-plane", "garden", "bird", big, 1700000003.75, false) // a better snapshot
	msgs := []string{
		event("new", "", plane1),
		event("update", plane1, plane1), // a zone change: same snapshot
		event("update", plane1, plane2), // a new snapshot: tried if the first was not decided yet, never a second POST
		event("new", "", object("2.2-frog", "front", "bird", big, 1700000002.5, false)),
		event("new", "", object("3.3-small", "garden", "bird", [4]int{0, 0, 63, 200}, 1700000002.5, false)), // 63 px < 64
		event("new", "", object("4.4-car", "garden", "car", big, 1700000002.5, false)),                      // a label not configured
		event("new", "", object("5.5-back", "back_yard", "bird", big, 1700000002.5, false)),                 // a camera not configured
		event("end", plane2, object("1.1-plane", "garden", "bird", big, 1700000003.75, true)),
	}
	// The labeller subscribes after connecting: resend the first message until it was counted
	// (QoS 1 from then on). The first message is idempotent (same snapshot: counted once, classified once).
	deadline := time.Now().Add(60 * time.Second)
	for {
		pub.Publish("frigate/events", 1, false, msgs[0]).WaitTimeout(5 * time.Second)
		time.Sleep(200 * time.Millisecond)
		mu.Lock()
		n := snapshots + (1 - fails)
		mu.Unlock()
		if n > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("flycl frigate did not fetch a snapshot in 60 s")
		}
	}
	for _, m := range msgs[1:] {
		if tok := pub.Publish("frigate/events", 1, false, m); !tok.WaitTimeout(5*time.Second) || tok.Error() != nil {
			t.Fatalf("publish: %v", tok.Error())
		}
	}
	wantPosts := []string{"1.1-plane " + want["1.1-plane"], "2.2-frog " + want["2.2-frog"]}
	for {
		mu.Lock()
		n, got := snapshots, slices.Clone(posts)
		mu.Unlock()
		if n >= 2 && len(got) >= 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 60 s: %d snapshots, posts %q", n, got)
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(500 * time.Millisecond) // anything more would be wrong
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("flycl frigate: %v", err)
	}
	mu.Lock()
	slices.Sort(posts)
	gotPosts, gotSnapshots := strings.Join(posts, "|"), snapshots
	mu.Unlock()
	if gotPosts != strings.Join(wantPosts, "|") {
		t.Fatalf("sub_label POSTs %q, want %q (flycl predict on the same snapshots)", gotPosts, wantPosts)
	}
	if snapshots := gotSnapshots; snapshots != 2 && snapshots != 3 {
		t.Fatalf("%d snapshots fetched, want 2 or 3 (plane once or twice, frog once)", snapshots)
	}
	var st struct {
		Received, Bad, Classified, Labelled, Errors int64
		Skipped                                     map[string]int64
	}
	if err := json.Unmarshal(out.Bytes(), &st); err != nil {
		t.Fatalf("counters %q: %v", out.String(), err)
	}
	sk := st.Skipped
	// plane2 finds the plane decided (skipped) or is tried (its try posts nothing): one or the other.
	if st.Classified != int64(gotSnapshots) || st.Labelled != 2 || st.Errors != 0 || st.Bad != 0 || sk["small"] != 1 || sk["label"] != 1 ||
		sk["camera"] != 1 || sk["end"] != 1 || sk["same_snapshot"]+sk["decided"] < 1 || st.Received != 7+sk["same_snapshot"]+sk["decided"]-(3-st.Classified) {
		t.Fatalf("counters %s", out.String())
	}
	// A run that ends having labelled nothing exits non-zero, saying so.
	ctx2, cancel2 := context.WithCancel(context.Background())
	done2 := make(chan error, 1)
	go func() {
		root := newRoot()
		root.SetOut(&bytes.Buffer{})
		root.SetArgs([]string{"frigate", "--mqtt", broker, "--frigate", srv.URL, "--model", model, "--ort-lib", lib, "--client-id", "flycl-test-2"})
		done2 <- root.ExecuteContext(ctx2)
	}()
	time.Sleep(time.Second)
	cancel2()
	if err := <-done2; err == nil || !strings.Contains(err.Error(), "nothing was labelled") {
		t.Fatalf("a run that labelled nothing: err %v, want one saying so", err)
	}

	// A running flycl frigate takes up a new version of its model file
	// (--reload): the frog's pictures relearned as "toad", each new frog
	// object is answered as flycl predict answers with the new version,
	// from some object on and for every object after it.
	ctx3, cancel3 := context.WithCancel(context.Background())
	defer cancel3()
	done3 := make(chan error, 1)
	go func() {
		root := newRoot()
		root.SetOut(&bytes.Buffer{})
		root.SetArgs([]string{"frigate", "--mqtt", broker, "--frigate", srv.URL, "--model", model, "--ort-lib", lib, "--client-id", "flycl-test-3",
			"--min-tries", "1", "--reload", "100ms"})
		done3 <- root.ExecuteContext(ctx3)
	}()
	if out, err := runCLI(t, "forget", "--model", model, "--class", "frog"); err != nil {
		t.Fatalf("forget: %v\n%s", err, out)
	}
	toads := filepath.Join(t.TempDir(), "toad")
	os.MkdirAll(toads, 0o755)
	r := rand.New(rand.NewPCG(11, uint64(slices.Index(classes, "frog"))))
	for j := range 4 { // the frog's learn pictures, as above
		os.WriteFile(filepath.Join(toads, fmt.Sprintf("%d.png", j)), encodePicture(t, shapePicture(drawnAs["frog"], 160, r), "png"), 0o644)
	}
	if out, err := runCLI(t, "learn", "--data", "folder:"+filepath.Dir(toads), "--model", model, "--ort-lib", lib, "--cache", "", "--quiet"); err != nil {
		t.Fatalf("learn: %v\n%s", err, out)
	}
	toad := predictOf("frog")
	if !strings.HasPrefix(toad, "toad ") {
		t.Fatalf("flycl predict answers %q for the frog's snapshot after its relearn as toad", toad)
	}
	mu.Lock()
	posts = nil
	mu.Unlock()
	var sent []string
	for i := 0; ; i++ {
		id := fmt.Sprintf("%d.6-frog", 60+i)
		mu.Lock()
		snapOf[id] = "frog"
		mu.Unlock()
		sent = append(sent, id)
		pub.Publish("frigate/events", 1, false, event("new", "", object(id, "front", "bird", big, 1700000002.5, false))).WaitTimeout(5 * time.Second)
		time.Sleep(200 * time.Millisecond)
		mu.Lock()
		got := slices.Clone(posts)
		mu.Unlock()
		if slices.Contains(got, id+" "+toad) {
			break
		}
		select {
		case err := <-done3:
			t.Fatalf("flycl frigate --reload ended while objects were sent: %v", err)
		default:
		}
		if i == 150 {
			t.Fatalf("after %d objects, no sub-label of the new version: posts %q, want %q", i+1, got, toad)
		}
	}
	cancel3()
	if err := <-done3; err != nil {
		t.Fatalf("flycl frigate --reload: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	seenToad := false
	for _, id := range sent { // an object answered by the new version is never followed by one answered by the old
		for _, p := range posts {
			if strings.HasPrefix(p, id+" ") {
				if seenToad && p != id+" "+toad {
					t.Fatalf("posts %q: %s answered by the old version after the new one was in use", posts, id)
				}
				seenToad = seenToad || p == id+" "+toad
			}
		}
	}
}

func TestFrigateFlagErrors(t *testing.T) {
	ib := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--frigate", "http://x:5000", "--model", "m"}, "--mqtt"},
		{[]string{"--mqtt", "mqtt://x:1883", "--model", "m"}, "--frigate"},
		{[]string{"--mqtt", "mqtt://x:1883", "--frigate", "http://x:5000"}, "--model"},
		{[]string{"--mqtt", "mqtt://x:1883", "--frigate", "http://x:5000", "--model", "m", "--min-probability", "1.5"}, "--min-probability"},
		{[]string{"--mqtt", "mqtt://x:1883", "--frigate", "http://x:5000", "--model", "m", "--min-box", "-1"}, "--min-box"},
		{[]string{"--mqtt", "mqtt://x:1883", "--frigate", "http://x:5000", "--model", "m", "--queue", "0"}, "--queue"},
		{[]string{"--mqtt", "mqtt://x:1883", "--frigate", "http://x:5000", "--model", "m", "--min-tries", "0"}, "--min-tries"},
		{[]string{"--mqtt", "mqtt://x:1883", "--frigate", "http://x:5000", "--model", "m", "--agreement", "0.5"}, "--agreement"},
		{[]string{"--mqtt", "mqtt://x:1883", "--frigate", "http://x:5000", "--model", "m", "--min-tries", "5", "--max-tries", "4"}, "--max-tries"},
		{[]string{"--mqtt", "mqtt://x:1883", "--frigate", "http://x:5000", "--model", "m", "--quality", "101"}, "--quality"},
		{[]string{"--mqtt", "mqtt://x:1883", "--frigate", "http://x:5000", "--model", "m", "--frigate-user", "admin"}, "--frigate-password-file"},
		{[]string{"--mqtt", "mqtt://x:1883", "--frigate", "http://x:5000", "--model", "m", "--mqtt-password-file", "/nonexistent"}, "--mqtt-password-file"},
		{[]string{"--mqtt", "mqtt://x:1883", "--frigate", "http://x:5000", "--model", "m", "--inbox-sample", "3"}, "--inbox"},
		// given bounds are refused, not replaced by the inbox's defaults
		{[]string{"--mqtt", "mqtt://x:1883", "--frigate", "http://x:5000", "--model", "m", "--inbox", ib, "--inbox-max-items", "0"}, "--inbox-max-items 0"},
		{[]string{"--mqtt", "mqtt://x:1883", "--frigate", "http://x:5000", "--model", "m", "--inbox", ib, "--inbox-max-bytes", "-1"}, "--inbox-max-bytes -1"},
		{[]string{"--mqtt", "mqtt://x:1883", "--frigate", "http://x:5000", "--model", "m", "--inbox", ib, "--inbox-below", "0"}, "--inbox-below 0"},
		{[]string{"--mqtt", "mqtt://x:1883", "--frigate", "http://x:5000", "--model", "m", "--inbox", ib, "--inbox-margin", "0"}, "--inbox-margin 0"},
		{[]string{"--mqtt", "mqtt://x:1883", "--frigate", "http://x:5000", "--model", "m", "--object-keep", "1.5"}, "--object-keep"},
		{[]string{"--mqtt", "mqtt://x:1883", "--frigate", "http://x:5000", "--model", "m", "--object-keep", "0.95", "--unknown", "-2"}, "--object-keep"},
	} {
		out, err := runCLI(t, append([]string{"frigate"}, c.args...)...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: err %v (output %q), want one naming %s", c.args, err, out, c.want)
		}
	}
}
