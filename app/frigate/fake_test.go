package frigate

// A fake Frigate written from Frigate's own source (blakeblackshear/
// frigate), for the endpoints flycl uses:
//
//   - POST /api/login (frigate/api/auth.py login, AppPostLoginBody
//     {user, password}): 200 with the JWT in the cookie frigate_token,
//     401 {"message": "Login failed"}; when auth is on, every other
//     /api/ request needs the token (Authorization: Bearer, or the
//     cookie) or gets 401, as the authenticated port 8971 does.
//   - GET /api/events/{id}/snapshot.jpg (frigate/api/media.py
//     event_snapshot): an ended event is read from the database and
//     served only when has_snapshot (snapshots enabled: off by default,
//     config/camera/snapshots.py), else 404 "Snapshot not available"; a
//     tracked object is served from memory (its best frame) whatever
//     the snapshot config; the query's bbox, timestamp, crop, height and
//     quality override the camera's snapshot config
//     (_resolve_snapshot_settings), whose defaults are bounding_box
//     True, timestamp False, crop False, height None, quality 60. The
//     picture is made as util/image.py get_snapshot_bytes makes it: the
//     box drawn first, then the crop (calculate_region, multiplier 1.1,
//     at least 300 square), then the height resize, then the timestamp.
//     The answer carries X-Frame-Time.
//   - POST /api/events/{id}/sub_label (frigate/api/event.py
//     set_sub_label, EventsSubLabelBody): subLabel at most 100
//     characters and subLabelScore in (0, 1] or 422; 404 for an unknown
//     event; "" clears the sub-label.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// frigateObject is one object the fake Frigate knows.
type frigateObject struct {
	camera, label string
	frame         *image.RGBA // its best frame (the snapshot's)
	frameTime     float64
	box           [4]int // on the frame
	ended         bool
	hasSnapshot   bool // saved to disk at its end (snapshots enabled)
	sub           string
	subScore      *float64
}

type fakeFrigate2 struct {
	mu       sync.Mutex
	user, pw string // "" user: auth disabled (port 5000)
	token    string
	objs     map[string]*frigateObject
	// requests seen, "METHOD path?query"
	requests []string
	posts    []string // "id subLabel score"
	// onPost, when set, is called with the lock held once a sub-label
	// is set and before the response is written, with the events
	// message Frigate publishes for the object now: real Frigate
	// publishes it on its own schedule, so it may arrive first.
	onPost func(msg []byte)
}

func (f *fakeFrigate2) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.requests = append(f.requests, r.Method+" "+r.URL.RequestURI())
	if r.URL.Path == "/api/login" && r.Method == http.MethodPost {
		if f.user == "" {
			writeJSON(w, 404, map[string]any{"message": "Authentication is disabled"})
			return
		}
		var b struct{ User, Password string }
		if err := json.NewDecoder(r.Body).Decode(&b); err != nil {
			writeJSON(w, 422, map[string]any{"detail": err.Error()})
			return
		}
		if b.User != f.user || b.Password != f.pw {
			writeJSON(w, 401, map[string]any{"message": "Login failed"})
			return
		}
		f.token = fmt.Sprintf("jwt.%d", len(f.requests))
		http.SetCookie(w, &http.Cookie{Name: "frigate_token", Value: f.token, HttpOnly: true, MaxAge: 86400})
		w.WriteHeader(200)
		return
	}
	if f.user != "" {
		tok := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		if c, err := r.Cookie("frigate_token"); err == nil && tok == "" {
			tok = c.Value
		}
		if f.token == "" || tok != f.token {
			w.WriteHeader(401)
			return
		}
	}
	id, what, ok := strings.Cut(strings.TrimPrefix(r.URL.Path, "/api/events/"), "/")
	o := f.objs[id]
	switch {
	case !ok || !strings.HasPrefix(r.URL.Path, "/api/events/"):
		writeJSON(w, 404, map[string]any{"detail": "Not Found"})
	case r.Method == http.MethodGet && what == "snapshot.jpg":
		switch {
		case o == nil:
			writeJSON(w, 404, map[string]any{"success": false, "message": "Ongoing event not found"})
		case o.ended && !o.hasSnapshot:
			writeJSON(w, 404, map[string]any{"success": false, "message": "Snapshot not available"})
		default:
			q := r.URL.Query()
			// the camera's SnapshotsConfig defaults, overridden by the query
			set := map[string]bool{"bbox": true, "timestamp": false, "crop": false}
			for k := range set {
				if v := q.Get(k); v != "" {
					n, err := strconv.Atoi(v)
					if err != nil {
						writeJSON(w, 422, map[string]any{"detail": k + " is not an integer"})
						return
					}
					set[k] = n != 0
				}
			}
			quality, height := 60, 0
			if v := q.Get("quality"); v != "" {
				quality, _ = strconv.Atoi(v)
			}
			if v := q.Get("height"); v != "" {
				height, _ = strconv.Atoi(v)
			}
			img := renderSnapshot(o.frame, o.box, set["bbox"], set["timestamp"], set["crop"], height)
			var b bytes.Buffer
			jpeg.Encode(&b, img, &jpeg.Options{Quality: max(1, quality)})
			w.Header().Set("Content-Type", "image/jpeg")
			w.Header().Set("X-Frame-Time", fmt.Sprint(o.frameTime))
			w.Write(b.Bytes())
		}
	case r.Method == http.MethodPost && what == "sub_label":
		var b struct {
			SubLabel      *string  `json:"subLabel"`
			SubLabelScore *float64 `json:"subLabelScore"`
		}
		if err := json.NewDecoder(r.Body).Decode(&b); err != nil || b.SubLabel == nil {
			writeJSON(w, 422, map[string]any{"detail": "subLabel: Field required"})
			return
		}
		if utf8.RuneCountInString(*b.SubLabel) > 100 {
			writeJSON(w, 422, map[string]any{"detail": "subLabel: String should have at most 100 characters"})
			return
		}
		if b.SubLabelScore != nil && !(*b.SubLabelScore > 0 && *b.SubLabelScore <= 1) {
			writeJSON(w, 422, map[string]any{"detail": "subLabelScore: must be > 0 and ≤ 1"})
			return
		}
		if o == nil {
			writeJSON(w, 404, map[string]any{"success": false, "message": "Event " + id + " not found."})
			return
		}
		o.sub, o.subScore = *b.SubLabel, b.SubLabelScore
		if o.sub == "" {
			o.subScore = nil
		}
		score := "none"
		if b.SubLabelScore != nil {
			score = fmt.Sprintf("%.4f", *b.SubLabelScore)
		}
		f.posts = append(f.posts, id+" "+o.sub+" "+score)
		if f.onPost != nil {
			after := o.eventJSON(id)
			f.onPost([]byte(fmt.Sprintf(`{"before":%s,"after":%s,"type":"update"}`, after, after)))
		}
		writeJSON(w, 200, map[string]any{"success": true, "message": "Event " + id + " sub label set to " + o.sub})
	default:
		writeJSON(w, 404, map[string]any{"detail": "Not Found"})
	}
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}

// region is Frigate's calculate_region(frame_shape, *box, model_size=300,
// multiplier=1.1) (util/image.py): a square of the box's longer side ×
// 1.1 (a multiple of 4, at least 300), centred on the box and moved
// inside the frame.
func region(w, h int, b [4]int) image.Rectangle {
	size := int(float64(max(b[2]-b[0], b[3]-b[1]))*1.1) / 4 * 4
	size = max(size, 300)
	x := int(float64(b[2]-b[0])/2 + float64(b[0]) - float64(size)/2)
	y := int(float64(b[3]-b[1])/2 + float64(b[1]) - float64(size)/2)
	if x < 0 {
		x = 0
	}
	if y < 0 {
		y = 0
	}
	if x+size > w {
		x = max(0, w-size)
	}
	if y+size > h {
		y = max(0, h-size)
	}
	return image.Rect(x, y, min(w, x+size), min(h, y+size))
}

// renderSnapshot makes the picture as get_snapshot_bytes does: box and
// label drawn, crop, resize to height (an area average, as INTER_AREA),
// timestamp drawn.
func renderSnapshot(frame *image.RGBA, box [4]int, bbox, timestamp, crop bool, height int) *image.RGBA {
	img := image.NewRGBA(frame.Rect)
	copy(img.Pix, frame.Pix)
	if bbox { // draw_snapshot_bounding_boxes: a thick box and a label block above it
		green := color.RGBA{0, 255, 0, 255}
		for t := range 3 {
			for x := box[0]; x <= box[2]; x++ {
				img.Set(x, box[1]+t, green)
				img.Set(x, box[3]-t, green)
			}
			for y := box[1]; y <= box[3]; y++ {
				img.Set(box[0]+t, y, green)
				img.Set(box[2]-t, y, green)
			}
		}
		for y := max(0, box[1]-14); y < box[1]; y++ {
			for x := box[0]; x < box[0]+60; x++ {
				img.Set(x, y, green)
			}
		}
	}
	if crop {
		r := region(img.Rect.Dx(), img.Rect.Dy(), box)
		c := image.NewRGBA(image.Rect(0, 0, r.Dx(), r.Dy()))
		for y := range r.Dy() {
			copy(c.Pix[y*c.Stride:y*c.Stride+4*r.Dx()], img.Pix[(r.Min.Y+y)*img.Stride+4*r.Min.X:])
		}
		img = c
	}
	if height > 0 {
		img = areaResize(img, int(float64(height)*float64(img.Rect.Dx())/float64(img.Rect.Dy())), height)
	}
	if timestamp {
		for y := 4; y < 20; y++ {
			for x := 4; x < 120; x++ {
				img.Set(x, y, color.RGBA{255, 255, 255, 255})
			}
		}
	}
	return img
}

// areaResize averages the source pixels each destination pixel covers.
func areaResize(src *image.RGBA, w, h int) *image.RGBA {
	dst := image.NewRGBA(image.Rect(0, 0, w, h))
	sw, sh := src.Rect.Dx(), src.Rect.Dy()
	for y := range h {
		y0, y1 := y*sh/h, max((y+1)*sh/h, y*sh/h+1)
		for x := range w {
			x0, x1 := x*sw/w, max((x+1)*sw/w, x*sw/w+1)
			var s [3]int
			n := 0
			for yy := y0; yy < y1; yy++ {
				for xx := x0; xx < x1; xx++ {
					p := src.Pix[yy*src.Stride+4*xx:]
					s[0], s[1], s[2] = s[0]+int(p[0]), s[1]+int(p[1]), s[2]+int(p[2])
					n++
				}
			}
			q := dst.Pix[y*dst.Stride+4*x:]
			q[0], q[1], q[2], q[3] = uint8(s[0]/n), uint8(s[1]/n), uint8(s[2]/n), 255
		}
	}
	return dst
}

// scene is a camera frame: a smooth gradient background and a bird-sized
// patch of colour c in box.
func scene(w, h int, box [4]int, c color.RGBA) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.SetRGBA(x, y, color.RGBA{uint8(60 + 60*x/w), uint8(90 + 40*y/h), 110, 255})
		}
	}
	for y := box[1] + 8; y < box[3]-8; y++ {
		for x := box[0] + 8; x < box[2]-8; x++ {
			img.SetRGBA(x, y, c)
		}
	}
	return img
}

// eventJSON is an events message's object as tracked_object.py to_dict
// writes it (the fields of Frigate 0.14+; has_snapshot false with
// snapshots off).
func (o *frigateObject) eventJSON(id string) string {
	sub := "null"
	if o.sub != "" {
		score := "null"
		if o.subScore != nil {
			score = fmt.Sprint(*o.subScore)
		}
		sub = fmt.Sprintf("[%q, %s]", o.sub, score)
	}
	end := "null"
	if o.ended {
		end = fmt.Sprint(o.frameTime + 5)
	}
	b := o.box
	return fmt.Sprintf(`{"id":%q,"camera":%q,"frame_time":%v,"snapshot":{"frame_time":%v,"box":[%d,%d,%d,%d],"area":%d,"region":[0,0,320,320],"score":0.8,"attributes":[],"current_estimated_speed":0},`+
		`"snapshot_clean":true,"label":%q,"sub_label":%s,"top_score":0.81,"false_positive":false,"start_time":1700000000.0,"end_time":%s,"score":0.8,"computed_score":0.8,`+
		`"box":[%d,%d,%d,%d],"area":%d,"ratio":1.0,"region":[0,0,320,320],"active":true,"stationary":false,"motionless_count":0,"position_changes":1,`+
		`"current_zones":[],"entered_zones":[],"has_clip":false,"has_snapshot":%t,"attributes":{},"current_attributes":[],"pending_loitering":false,`+
		`"max_severity":null,"current_estimated_speed":0,"average_estimated_speed":0,"velocity_angle":0,"path_data":[],"recognized_license_plate":null}`,
		id, o.camera, o.frameTime, o.frameTime, b[0], b[1], b[2], b[3], (b[2]-b[0])*(b[3]-b[1]), o.label, sub, end,
		b[0], b[1], b[2], b[3], (b[2]-b[0])*(b[3]-b[1]), o.hasSnapshot)
}

// solidFrame is a 320×240 frame of one colour (red level r).
func solidFrame(r uint8) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, 320, 240))
	for i := 0; i < len(img.Pix); i += 4 {
		img.Pix[i], img.Pix[i+1], img.Pix[i+2], img.Pix[i+3] = r, 40, 40, 255
	}
	return img
}

func quietLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }
