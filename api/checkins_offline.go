package api

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/ticketsales/ticketsales/api/request"
	"github.com/ticketsales/ticketsales/internal/apikey"
	"github.com/ticketsales/ticketsales/internal/checkin"
	"github.com/ticketsales/ticketsales/internal/states"
	"github.com/ticketsales/ticketsales/sdk/go/ticketcode"
	"github.com/ticketsales/ticketsales/store"
)

type doorListInput struct {
	EventPath
	UpdatedSince   string `query:"updated_since" maxLength:"8000" doc:"The cursor of a list held: only the tickets changed since (refunded, cancelled, admitted, let out, issued)."`
	IfNoneMatch    string `header:"If-None-Match" doc:"An ETag from an earlier response: 304 when unchanged."`
	AcceptEncoding string `header:"Accept-Encoding" doc:"gzip is served when accepted."`
}

type checkInPublicKey struct {
	EventID   int64  `json:"event_id"`
	Format    string `json:"format" doc:"The signed code's prefix: T2."`
	PublicKey string `json:"public_key" doc:"Ed25519 public key, unpadded base64url of 32 bytes."`
}

type checkInBatchInput struct {
	Body struct {
		EventID   int64 `json:"event_id" minimum:"1" doc:"The door's event."`
		SessionID int64 `json:"session_id,omitempty" minimum:"1" doc:"For a scheduled event: the session at this door; a ticket of another session is wrong_event. Omitted: tickets of any session."`
		Scans     []struct {
			Barcode   string               `json:"barcode" minLength:"1" maxLength:"160" doc:"As scanned: the signed code (T2.…) or the 13-digit barcode."`
			Gate      string               `json:"gate,omitempty" maxLength:"64" doc:"The gate; a door key limited to one gate may leave it out."`
			DeviceID  string               `json:"device_id" minLength:"1" maxLength:"100" doc:"The scanning device."`
			Direction states.ScanDirection `json:"direction,omitempty" doc:"in (the default), or out at an event that allows re-entry."`
			ScannedAt time.Time            `json:"scanned_at" doc:"When the device scanned the ticket (its clock)."`
			// DoorOutcome tells the service whether the holder was let in.
			DoorOutcome states.ScanOutcome `json:"door_outcome,omitempty" doc:"What the device answered at the door, from its list: admitted when it let the holder in, else the refusal it showed. Omitted: an entry is taken as let in (except one of a ticket void already when scanned), so a refusal kept without it may be listed as a conflict."`
		} `json:"scans" maxItems:"1000" doc:"At most 1000 scans (split a longer backlog)."`
	}
}

type conflictsInput struct {
	EventPath
	PageParams
}

func (s *Server) registerOfflineCheckIns(api huma.API) {
	tags := []string{"Check-in"}
	huma.Register(api, request.Scoped(huma.Operation{
		OperationID: "get-check-in-public-key", Method: http.MethodGet, Path: "/events/{id}/check-in/public-key", Tags: tags,
		Summary: "The event's public key of signed ticket codes",
		Description: "Tickets' QR codes carry a code signed with the event's Ed25519 key (format T2; see docs/api.md, " +
			"offline check-in): a door verifies it with this key, without the network. A door key limited to another " +
			"event is refused (403).",
		Errors: []int{http.StatusNotFound},
	}, apikey.ScopeCheckin), func(ctx context.Context, in *EventPath) (*dataOutput[checkInPublicKey], error) {
		k, err := s.deps.Offline.PublicKey(ctx, request.Caller(ctx), in.ID)
		return reply(ctx, checkInPublicKey{EventID: in.ID, Format: ticketcode.Prefix[:2], PublicKey: k}, err)
	})

	huma.Register(api, request.Scoped(huma.Operation{
		OperationID: "get-check-in-list", Method: http.MethodGet, Path: "/events/{id}/check-in/list", Tags: tags,
		Summary: "What a door needs to scan the event offline (changes since, by cursor)",
		Description: "The event's tickets of the key's environment (sandbox keys: sandbox tickets), each with a hash of " +
			"its barcode, category, seat, state (valid, void, not_paid) and admission, and the public key that " +
			"verifies the tickets' signed codes. With `updated_since` (the `cursor` of a list held), only the tickets " +
			"changed since: apply them by id. Send If-None-Match: 304 while nothing changed. Gzip is served when " +
			"accepted (10,000 tickets are about 170 KB). A door key limited to another event is refused (403).",
		Errors:    []int{http.StatusNotFound, http.StatusUnprocessableEntity},
		Responses: jsonResponse[checkin.DoorList](api, "The door list"),
	}, apikey.ScopeCheckin), func(ctx context.Context, in *doorListInput) (*rawOutput, error) {
		l, err := s.deps.Offline.List(ctx, request.Caller(ctx), in.ID, in.UpdatedSince)
		if err != nil {
			return nil, err
		}
		// The cursor moves with any transaction: the ETag is of the
		// rest, so a door that held the list is told 304 (and keeps its
		// cursor, which only re-sends a change or two).
		cursor := l.Cursor
		l.Cursor = ""
		b, err := json.Marshal(l)
		if err != nil {
			return nil, err
		}
		sum := sha256.Sum256(b)
		etag := `"` + base64.RawURLEncoding.EncodeToString(sum[:18]) + `"`
		l.Cursor = cursor
		if b, err = json.Marshal(l); err != nil {
			return nil, err
		}
		return rawEnvelope(ctx, b, etag, in.IfNoneMatch, "private, no-cache"), nil
	})

	huma.Register(api, idempotent(request.Scoped(huma.Operation{
		OperationID: "create-check-in-batch", Method: http.MethodPost, Path: "/check-ins/batch", Tags: tags,
		Summary: "Upload scans made offline",
		Description: "Up to 1000 scans a door made without the network (more: 422; split the backlog). The service " +
			"settles them in scanned_at order, each as an online scan is, records every one and answers each one's " +
			"outcome in the batch's order. An entry the device let in against what the service had recorded is a " +
			"conflict (`conflict` true, `conflict_kind`): a ticket another device had let in (`already_checked_in`, " +
			"two_doors), let in while another door's admission had it inside at an event with re-entry (`admitted`, " +
			"admitted_while_inside), or void by the upload (`void`, admitted_void; without `door_outcome` only when it " +
			"became void after the scan). Conflicts are listed in " +
			"GET /v1/events/{id}/check-in/conflicts and announced as ticket.check_in_conflict; send `door_outcome` so " +
			"refusals are not taken for entries. A scan uploaded again (same device, barcode and scanned_at) is not " +
			"recorded twice: it answers `repeated` with the outcome recorded.",
		Errors: []int{http.StatusNotFound},
	}, apikey.ScopeCheckin)), func(ctx context.Context, in *checkInBatchInput) (*dataOutput[[]checkin.BatchScanResult], error) {
		scans := make([]checkin.BatchScan, len(in.Body.Scans))
		for i, sc := range in.Body.Scans {
			scans[i] = checkin.BatchScan{Barcode: sc.Barcode, Gate: sc.Gate, DeviceID: sc.DeviceID, Direction: sc.Direction,
				ScannedAt: sc.ScannedAt, DoorOutcome: sc.DoorOutcome}
		}
		res, err := s.deps.Offline.Batch(ctx, request.Caller(ctx), in.Body.EventID, in.Body.SessionID, scans)
		return reply(ctx, res, err)
	})

	huma.Register(api, request.Scoped(huma.Operation{
		OperationID: "list-check-in-conflicts", Method: http.MethodGet, Path: "/events/{id}/check-in/conflicts", Tags: tags,
		Summary: "Tickets let in offline against the record: twice, while inside, or void",
		Description: "Each conflict is a scan made offline whose door let the holder in against what the service " +
			"had recorded of the ticket, with its `kind`: `two_doors` (another door's admission had the ticket inside: " +
			"most likely a copy), `admitted_while_inside` (at an event with re-entry: let in while another door's " +
			"admission had it inside, let out only since), `admitted_void` (let in though the ticket was refunded or " +
			"cancelled: the holder is inside and the money was returned). Each is also announced once as the " +
			"webhook event ticket.check_in_conflict, with this object as its data. Oldest scan first, a page at a time " +
			"(`page`, `per_page`; `meta.total` counts them all).",
		Errors: []int{http.StatusNotFound, http.StatusUnprocessableEntity},
	}, apikey.ScopeOrdersRead), func(ctx context.Context, in *conflictsInput) (*listOutput[store.OfflineConflict], error) {
		c, total, err := s.deps.Offline.Conflicts(ctx, request.Caller(ctx), in.ID, in.paging())
		return replyPage(ctx, c, in.PageParams, total, err, conflictSeek)
	})
}
