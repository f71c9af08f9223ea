package testenv

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// SyncBuffer collects output written from another goroutine (the
// browser's, chromedp's).
type SyncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *SyncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *SyncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Browser starts headless Chromium (CHROMIUM_PATH, default the Debian
// package's /usr/bin/chromium) with a fresh profile, and returns a tab whose
// actions all end within timeout. The browser is stopped when the test ends,
// before its profile directory is removed. The api's browser tests and the
// seat map's benchmark share it.
func Browser(t testing.TB, timeout time.Duration) context.Context {
	t.Helper()
	SkipInUnit(t)
	path := os.Getenv("CHROMIUM_PATH")
	if path == "" {
		path = "/usr/bin/chromium"
	}
	if st, err := os.Stat(path); err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
		t.Fatalf("no Chromium at %s (set CHROMIUM_PATH to another binary): `make test` installs the chromium package", path)
	}
	profile := t.TempDir()
	out := new(SyncBuffer)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(path),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.UserDataDir(profile),
		chromedp.WindowSize(1280, 900),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-breakpad", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.CombinedOutput(out),
	)
	ctx, cancelTab := chromedp.NewContext(allocCtx)
	ctx, cancelTimeout := context.WithTimeout(ctx, timeout)
	// Cleanups run last-in first-out: this one runs before t.TempDir's, so
	// Chromium has exited when its profile is removed.
	t.Cleanup(func() {
		cancelTimeout()
		cancelTab()
		cancelAlloc()
		if t.Failed() {
			t.Logf("chromium output:\n%s", out.String())
		}
	})
	return ctx
}

// SeatMapFrames is what SeatMapPan measured: the gaps between animation
// frames (requestAnimationFrame timestamps, ms) with the map left alone and
// while it was dragged, and the view's transform before and mid-drag.
type SeatMapFrames struct {
	Idle   []float64 `json:"idle"`
	Pan    []float64 `json:"pan"`
	Before string    `json:"before"`
	During string    `json:"during"`
}

// SeatMapPan drags the page's <ticket-seat-map> through its own pointer
// handlers, one pointer move per animation frame for frames frames (half
// one way, half back: the hall stays in view), after idle frames left
// alone, and fits the hall again. touch drags as a finger, else as a mouse.
// A frame's gap is its timestamp less the previous one's: what it took to
// run the frame's script, style, layout and paint when that took longer
// than the display's interval.
func SeatMapPan(ctx context.Context, idle, frames int, touch bool) (SeatMapFrames, error) {
	kind := "mouse"
	if touch {
		kind = "touch"
	}
	f, err := chromedp.Run(ctx, chromedp.Evaluate[SeatMapFrames](fmt.Sprintf(`new Promise(done => {
	  const IDLE = %d, FRAMES = %d, HALF = Math.floor(FRAMES / 2), m = document.querySelector('ticket-seat-map'), svg = m.shadowRoot.querySelector('svg');
	  const view = () => m.shadowRoot.querySelector('g.view').getAttribute('transform') || '';
	  const b = svg.getBoundingClientRect(), idle = [], pan = [], out = {};
	  let x = b.left + b.width / 2, y = b.top + b.height / 2;
	  const p = (type) => svg.dispatchEvent(new PointerEvent(type, {pointerId: 1, pointerType: %q, isPrimary: true, button: 0,
	    buttons: type === 'pointerup' ? 0 : 1, clientX: x, clientY: y, bubbles: true, composed: true}));
	  const gaps = (ts) => ts.slice(1).map((t, i) => t - ts[i]);
	  const panStep = (ts) => {
	    pan.push(ts);
	    if (pan.length === HALF) out.during = view();
	    if (pan.length <= FRAMES) {
	      const dir = pan.length <= HALF ? 1 : -1;
	      x += 6 * dir; y += 3 * dir; p('pointermove');
	      requestAnimationFrame(panStep);
	      return;
	    }
	    p('pointerup'); m.fit();
	    done({idle: gaps(idle), pan: gaps(pan), before: out.before, during: out.during || ''});
	  };
	  const idleStep = (ts) => {
	    idle.push(ts);
	    if (idle.length <= IDLE) { requestAnimationFrame(idleStep); return; }
	    out.before = view(); p('pointerdown');
	    requestAnimationFrame(panStep);
	  };
	  requestAnimationFrame(idleStep);
	})`, idle, frames, kind), chromedp.EvalAwaitPromise))
	if err != nil {
		return f, fmt.Errorf("pan the seat map: %w", err)
	}
	if f.Before == "" || f.Before == f.During {
		return f, fmt.Errorf("dragging the seat map did not pan it: %q, then %q", f.Before, f.During)
	}
	return f, nil
}

// Screenshot saves the whole page open in ctx as
// .data/artifacts/{dir}/{name}.png in the repository, for a person to look
// at after the test.
func Screenshot(t testing.TB, ctx context.Context, dir, name string) {
	t.Helper()
	_, here, _, _ := runtime.Caller(0)
	out := filepath.Join(filepath.Dir(here), "..", "..", ".data", "artifacts", dir)
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot %s/%s: %v", dir, name, err)
	}
	if err := os.WriteFile(filepath.Join(out, name+".png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}
