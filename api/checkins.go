package api

import (
	"context"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/ticketsales/ticketsales/api/request"
	"github.com/ticketsales/ticketsales/internal/apikey"
	"github.com/ticketsales/ticketsales/internal/checkin"
	"github.com/ticketsales/ticketsales/internal/states"
)

type checkInInput struct {
	Body struct {
		Barcode   string               `json:"barcode" minLength:"1" maxLength:"160" doc:"As scanned: the 13-digit barcode, or the signed code of the ticket's QR code (T2.…; a code whose signature fails is unknown)."`
		EventID   int64                `json:"event_id" minimum:"1" doc:"The event at this door."`
		Gate      string               `json:"gate,omitempty" maxLength:"64" doc:"The gate's name; a door key limited to one gate may leave it out."`
		DeviceID  string               `json:"device_id,omitempty" maxLength:"100" doc:"The scanning device, for the organizer's records."`
		Direction states.ScanDirection `json:"direction,omitempty" doc:"in (the default), or out at an event that allows re-entry."`
		SessionID int64                `json:"session_id,omitempty" minimum:"1" doc:"For a scheduled event: the session at this door (a /v1/sessions item); a ticket of another session is wrong_event. Omitted: tickets of any session."`
		ScannedAt *time.Time           `json:"scanned_at,omitempty" doc:"When the device scanned the ticket (default: now): within the last 7 days and at most 5 minutes ahead. The record keeps it; a ticket's first admission online is timed by the service's clock."`
	}
}

func (s *Server) registerCheckIns(api huma.API) {
	huma.Register(api, rerunIsHarmless(idempotent(request.Scoped(huma.Operation{
		OperationID: "create-check-in", Method: http.MethodPost, Path: "/check-ins", Tags: []string{"Check-in"},
		Summary: "Scan a ticket at the door",
		Description: "Answers one outcome: `admitted` (let in; the ticket's event, category and seat), `already_checked_in` " +
			"(with when and at which gate it was first admitted), `void` (refunded, or its order cancelled), `not_paid`, " +
			"`wrong_event` (a ticket of another event, or of another session than the one the scan names: the ticket's " +
			"event_id and session_id say which), `unknown`, `sandbox` (a sandbox ticket at a real door), or " +
			"`exited` (direction out, at events that allow re-entry). Of scans of one ticket at several gates at once, " +
			"exactly one is admitted. Every scan is recorded. Needs a key with the `checkin` scope (a door key).",
		Errors: []int{http.StatusNotFound},
	}, apikey.ScopeCheckin))), func(ctx context.Context, in *checkInInput) (*dataOutput[*checkin.CheckIn], error) {
		b := in.Body
		scan := checkin.ScanInput{Barcode: b.Barcode, EventID: b.EventID, Gate: b.Gate, DeviceID: b.DeviceID, Direction: b.Direction,
			SessionID: b.SessionID}
		if b.ScannedAt != nil {
			scan.ScannedAt = *b.ScannedAt
		}
		c, err := s.deps.CheckIn.Scan(ctx, request.Caller(ctx), scan)
		return reply(ctx, c, err)
	})
}
