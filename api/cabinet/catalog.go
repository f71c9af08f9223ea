package cabinet

import (
	"bytes"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"time"

	"github.com/ticketsales/ticketsales/internal/catalog/catalogfile"
	"github.com/ticketsales/ticketsales/internal/report"
)

// maxCatalogFile bounds a catalog file uploaded here; a larger catalog is
// imported with ticketctl, which reads any size.
const maxCatalogFile = 1 << 20

// Bounds of any request body the cabinet reads: the largest catalog file
// and its form around it. The api leaves /cabinet bodies to the cabinet,
// so an oversized upload gets a page, not a problem+json.
const (
	maxBody = maxCatalogFile + 64<<10
	// maxDrain is how much of an oversized body is read and thrown away,
	// so the browser, still sending, gets the page rather than a reset.
	maxDrain = 16 << 20
	// uploadTimeout bounds reading an upload: a 1 MiB file on a slow
	// line, not a client that sends a byte a minute.
	uploadTimeout = 30 * time.Second
	// formTimeout bounds reading any other form (a sign-in is a few
	// hundred bytes).
	formTimeout = 10 * time.Second
)

// errTooLarge is what reading a body past maxBody returns.
var errTooLarge = errors.New("request body too large")

// limitBody bounds every request body the cabinet reads, in size and in
// time. A form is read here, whole, before any handler runs: one that does
// not arrive within formTimeout is answered 408 and its connection closed
// (net/http would otherwise wait, with no deadline, for the rest of it
// before answering). An upload (multipart) is read by its handler within
// uploadTimeout. The deadline is cleared once the body is read: left on
// the connection, it would cancel a handler still at work.
func limitBody(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody {
			next.ServeHTTP(w, r)
			return
		}
		rc := http.NewResponseController(w)
		clear := func() { _ = rc.SetReadDeadline(time.Time{}) }
		mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
		if mt == "multipart/form-data" {
			_ = rc.SetReadDeadline(time.Now().Add(uploadTimeout))
			lb := &limitedBody{body: r.Body, left: maxBody, atEOF: clear}
			r.Body = lb
			// Unless the upload was read whole (atEOF), its deadline stays:
			// what net/http reads of the rest afterwards is bounded by it.
			// (Not moved to now: a background read already waiting would
			// then fail before net/http aborts it, cancelling the
			// connection's next requests.)
			next.ServeHTTP(w, r)
			return
		}
		_ = rc.SetReadDeadline(time.Now().Add(formTimeout))
		form, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
		if timedOut(err) {
			bodyTimedOut(w)
			return
		}
		if len(form) <= maxBody {
			clear()
			r.Body = io.NopCloser(bytes.NewReader(form))
			next.ServeHTTP(w, r)
			return
		}
		// No form of the cabinet is this large: refused here, the rest not
		// waited for (the connection closes; what net/http reads of it is
		// bounded by the form's deadline).
		w.Header().Set("Connection", "close")
		http.Error(w, "The request is larger than the cabinet takes.", http.StatusRequestEntityTooLarge)
	})
}

// timedOut reports whether err is a read deadline's.
func timedOut(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// bodyTimedOut answers a body that did not arrive in time, and closes the
// connection rather than wait for the rest of it.
func bodyTimedOut(w http.ResponseWriter) {
	w.Header().Set("Connection", "close")
	http.Error(w, "The request did not arrive in time: send it again.", http.StatusRequestTimeout)
}

type limitedBody struct {
	body  io.ReadCloser
	left  int64
	atEOF func() // called when the body has been read whole (nil: none)
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.left < 0 {
		return 0, errTooLarge
	}
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1]
	}
	n, err := b.body.Read(p)
	b.left -= int64(n)
	if b.left < 0 {
		_, _ = io.CopyN(io.Discard, b.body, maxDrain)
		return n + int(b.left), errTooLarge
	}
	if errors.Is(err, io.EOF) && b.atEOF != nil {
		b.atEOF()
	}
	return n, err
}

func (b *limitedBody) Close() error { return b.body.Close() }

// catalogView is the catalog page's own data.
type catalogView struct {
	Events []report.EventInventory
	// Errors of a refused file, each with its line and path.
	Errors catalogfile.Errors
	Result *catalogfile.Result
	// MaxFile is the upload limit in words.
	MaxFile string
}

func (c *cabinet) catalogPage(w http.ResponseWriter, r *http.Request, status int, data pageData, view catalogView) {
	events, err := report.Inventory(r.Context(), c.DB, user(r).CompanyID, c.Now())
	if err != nil {
		c.fail(w, r, err)
		return
	}
	view.Events, view.MaxFile = events, "1 MiB"
	data.Title, data.Nav, data.Data = "Catalog", "catalog", view
	c.render(w, r, status, "catalog", data)
}

func (c *cabinet) catalog(w http.ResponseWriter, r *http.Request) {
	var view catalogView
	if res, ok := c.sessions.Pop(r.Context(), importResultSession).(catalogfile.Result); ok {
		view.Result = &res
	}
	c.catalogPage(w, r, http.StatusOK, pageData{}, view)
}

// importResultSession keeps an upload's result for the page after it.
const importResultSession = "import_result"

func init() {
	// The session store encodes values with gob.
	gob.Register(catalogfile.Result{})
}

// uploadCatalog imports a catalog file with the importer ticketctl uses: a
// file with any error is refused whole, every error listed with its line
// and path. A refused file is answered at once (it changed nothing, so a
// reload changes nothing either); an import redirects to the catalog page,
// whose reload does not upload the file again.
func (c *cabinet) uploadCatalog(w http.ResponseWriter, r *http.Request) {
	u := user(r)
	file, _, err := r.FormFile("file")
	if errors.Is(err, errTooLarge) {
		c.catalogPage(w, r, http.StatusRequestEntityTooLarge, pageData{Message: fmt.Sprintf(
			"The file is larger than %s, the most the cabinet takes. Import a larger catalog with ticketctl catalog import --company %d FILE.json, or split it: records are upserted by ref, so files can be imported one after another.",
			"1 MiB", u.CompanyID)}, catalogView{})
		return
	}
	if timedOut(err) {
		bodyTimedOut(w)
		return
	}
	if err != nil {
		c.catalogPage(w, r, http.StatusBadRequest, pageData{Message: "Choose a catalog file (JSON) to upload."}, catalogView{})
		return
	}
	defer file.Close()
	body, err := io.ReadAll(io.LimitReader(file, maxCatalogFile+1))
	if err != nil || len(body) > maxCatalogFile {
		c.catalogPage(w, r, http.StatusRequestEntityTooLarge, pageData{Message: fmt.Sprintf(
			"The file is larger than 1 MiB, the most the cabinet takes. Import it with ticketctl catalog import --company %d FILE.json.", u.CompanyID)}, catalogView{})
		return
	}
	res, err := catalogfile.Import(r.Context(), c.DB, u.CompanyID, body)
	var refused catalogfile.Errors
	switch {
	case errors.As(err, &refused):
		c.catalogPage(w, r, http.StatusUnprocessableEntity, pageData{
			Message: fmt.Sprintf("The file was refused: %d error(s), nothing imported.", len(refused))}, catalogView{Errors: refused})
		return
	case err != nil:
		c.fail(w, r, err)
		return
	}
	if c.CatalogChanged != nil {
		for _, rec := range res.Records {
			if rec.Kind == "event" {
				c.CatalogChanged(rec.ID)
			}
		}
	}
	if c.Distribution != nil && len(res.Releases) > 0 {
		// The file's timed releases wait in workflows of their own; one
		// that failed to start is started by the worker's reaper once due.
		if err := c.Distribution.ScheduleReleases(r.Context(), u.CompanyID, res.Releases); err != nil {
			c.Log.WarnContext(r.Context(), "cabinet: catalog imported, a release workflow not started", "company_id", u.CompanyID, "err", err)
		}
	}
	c.Log.InfoContext(r.Context(), "cabinet: catalog imported", "user_id", u.ID, "company_id", u.CompanyID, "records", len(res.Records))
	c.sessions.Put(r.Context(), importResultSession, res)
	c.done(w, r, "/cabinet/catalog", fmt.Sprintf("Imported: %d created, %d updated, %d unchanged; %d seats changed.",
		res.Count(catalogfile.Created), res.Count(catalogfile.Updated), res.Count(catalogfile.Unchanged), res.SeatsChanged))
}

// catalogExample downloads a complete, valid catalog file.
func (c *cabinet) catalogExample(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Disposition", `attachment; filename="catalog-example.json"`)
	_, _ = w.Write(catalogfile.Example())
}

// catalogFormat is the catalog file's field reference, generated from the
// importer's structs (as docs/catalog-format.md is).
func (c *cabinet) catalogFormat(w http.ResponseWriter, r *http.Request) {
	c.render(w, r, http.StatusOK, "catalog_format", pageData{Title: "Catalog file format", Nav: "catalog", Data: catalogfile.Format()})
}
