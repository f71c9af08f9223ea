package api

import (
	"bytes"
	"errors"
	"net/http"
	"net/url"
	"strconv"

	"github.com/ticketsales/ticketsales/internal/delivery"
	"github.com/ticketsales/ticketsales/internal/errs"
	"github.com/ticketsales/ticketsales/store"
)

// registerOrderPage serves the buyer's public order page and its PDF. The
// access_token in the link is the only credential: a wrong one is a 404, as
// for an order that does not exist.
func (s *Server) registerOrderPage(mux *http.ServeMux) {
	mux.HandleFunc("GET /o/{id}", func(w http.ResponseWriter, r *http.Request) {
		doc, ok := s.orderDocument(w, r)
		if !ok {
			return
		}
		var buf bytes.Buffer
		if err := delivery.RenderPage(&buf, doc); err != nil {
			writeProblem(w, fromError(r.Context(), s.log, err).(*Problem))
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "private, no-store")
		_, _ = w.Write(buf.Bytes())
	})
	mux.HandleFunc("GET /o/{id}/tickets.pdf", func(w http.ResponseWriter, r *http.Request) {
		doc, ok := s.orderDocument(w, r)
		if !ok {
			return
		}
		pdf, err := delivery.PDF(doc)
		if err != nil {
			writeProblem(w, fromError(r.Context(), s.log, err).(*Problem))
			return
		}
		w.Header().Set("Content-Type", "application/pdf")
		w.Header().Set("Content-Disposition", `inline; filename="tickets-`+r.PathValue("id")+`.pdf"`)
		w.Header().Set("Cache-Control", "private, no-store")
		_, _ = w.Write(pdf)
	})
}

func (s *Server) orderDocument(w http.ResponseWriter, r *http.Request) (delivery.Order, bool) {
	ctx := r.Context()
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	notFound := func() (delivery.Order, bool) {
		writeProblem(w, newProblem(ctx, http.StatusNotFound, "not_found", "No such order, or the link is not valid."))
		return delivery.Order{}, false
	}
	failed := func(err error) (delivery.Order, bool) {
		if errors.Is(err, errs.NotFound) {
			return notFound()
		}
		writeProblem(w, fromError(ctx, s.log, err).(*Problem))
		return delivery.Order{}, false
	}
	if err != nil {
		return notFound()
	}
	// The token first, from its hash alone: a guess loads nothing else.
	token := r.URL.Query().Get("access_token")
	hash, err := store.GetOrderAccessTokenHash(ctx, s.deps.DB, id)
	switch {
	case err != nil:
		return failed(err)
	case !delivery.CheckToken(hash, token), s.deps.Orders.Links().Keys.Forgeable(id, hash):
		// A token derived from a public secret opens nothing: anyone could
		// have computed it.
		return notFound()
	}
	doc, _, err := delivery.LoadDocument(ctx, s.deps.DB, s.deps.Orders.Links().Codes, id)
	switch {
	case err != nil:
		return failed(err)
	case len(doc.Tickets) == 0:
		writeProblem(w, newProblem(ctx, http.StatusNotFound, "not_found", "The order has no tickets yet: it is not paid."))
		return delivery.Order{}, false
	}
	doc.PDFURL = "/o/" + strconv.FormatInt(id, 10) + "/tickets.pdf?access_token=" + url.QueryEscape(token)
	return doc, true
}
