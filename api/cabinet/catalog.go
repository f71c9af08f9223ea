package cabinet

import (
	"encoding/gob"
	"errors"
	"fmt"
	"io"
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
	// bodyTimeout bounds reading a body: a 1 MiB upload on a slow line,
	// not a client that sends a byte a minute.
	bodyTimeout = 30 * time.Second
)

// errTooLarge is what reading a body past maxBody returns.
var errTooLarge = errors.New("request body too large")

// limitBody bounds every request body the cabinet reads, in size and in
// time.
func limitBody(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body != nil && r.Body != http.NoBody {
			rc := http.NewResponseController(w)
			_ = rc.SetReadDeadline(time.Now().Add(bodyTimeout))
			// Cleared once the handler is done: the connection's next
			// request (keep-alive) must not inherit it.
			defer func() { _ = rc.SetReadDeadline(time.Time{}) }()
			r.Body = &limitedBody{body: r.Body, left: maxBody}
		}
		next.ServeHTTP(w, r)
	})
}

type limitedBody struct {
	body io.ReadCloser
	left int64
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
