package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/ticketsales/ticketsales/internal/errs"
	"github.com/ticketsales/ticketsales/internal/states"
)

// WebhookEndpoint is where a partner application receives events.
type WebhookEndpoint struct {
	bun.BaseModel           `bun:"table:webhook_endpoints,alias:we"`
	ID                      int64      `bun:"id,pk,autoincrement"`
	ApplicationID           int64      `bun:"application_id"`
	CompanyID               int64      `bun:"company_id"`
	IsTest                  bool       `bun:"is_test"`
	URL                     string     `bun:"url"`
	Description             string     `bun:"description"`
	EventTypes              []string   `bun:"event_types,array"` // empty: all
	Enabled                 bool       `bun:"enabled"`
	Secret                  string     `bun:"secret"`
	PreviousSecret          *string    `bun:"previous_secret"`
	PreviousSecretExpiresAt *time.Time `bun:"previous_secret_expires_at"`
	FailingSince            *time.Time `bun:"failing_since"`
	DisabledAt              *time.Time `bun:"disabled_at"`
	DisabledReason          *string    `bun:"disabled_reason"`
	CreatedAt               time.Time  `bun:"created_at,nullzero,default:now()"`
	UpdatedAt               time.Time  `bun:"updated_at,nullzero,default:now()"`
	DeletedAt               *time.Time `bun:"deleted_at"`
	// CreationToken is the cabinet form's one-time token that made the
	// endpoint (nil: made through the API).
	CreationToken *string `bun:"creation_token"`
}

// Secrets are the secrets that sign a delivery made at now: the current
// one, and the previous one while it is still valid.
func (e *WebhookEndpoint) Secrets(now time.Time) []string {
	out := []string{e.Secret}
	if e.PreviousSecret != nil && e.PreviousSecretExpiresAt != nil && now.Before(*e.PreviousSecretExpiresAt) {
		out = append(out, *e.PreviousSecret)
	}
	return out
}

// WebhookEvent is a row of the outbox.
type WebhookEvent struct {
	bun.BaseModel `bun:"table:webhook_events,alias:wev"`
	ID            string                  `bun:"id,pk"`
	Type          states.WebhookEventType `bun:"type"`
	CompanyID     int64                   `bun:"company_id"`
	IsTest        bool                    `bun:"is_test"`
	OrderID       *int64                  `bun:"order_id"`
	ReservationID *string                 `bun:"reservation_id"`
	RefundID      *string                 `bun:"refund_id"`
	EndpointID    *int64                  `bun:"endpoint_id"`
	// ChannelID: the event goes only to endpoints of the channel's
	// applications (nil: to every endpoint of its environment).
	ChannelID *int64 `bun:"channel_id"`
	// CatalogEventID is the event (of the catalog) an allocation event is
	// about.
	CatalogEventID *int64          `bun:"catalog_event_id"`
	Snapshot       json.RawMessage `bun:"snapshot,type:jsonb"`
	Payload        json.RawMessage `bun:"payload,type:jsonb"`
	CreatedAt      time.Time       `bun:"created_at"`
	DispatchedAt   *time.Time      `bun:"dispatched_at"`
}

// WebhookDelivery is an event's delivery to one endpoint.
type WebhookDelivery struct {
	bun.BaseModel `bun:"table:webhook_deliveries,alias:wd"`
	EventID       string                  `bun:"event_id,pk"`
	EndpointID    int64                   `bun:"endpoint_id,pk"`
	EventType     states.WebhookEventType `bun:"event_type,scanonly"`
	Status        states.DeliveryStatus   `bun:"status"`
	Attempts      int                     `bun:"attempts"`
	LastAttemptAt *time.Time              `bun:"last_attempt_at"`
	LastStatus    *int                    `bun:"last_status"`
	LastError     *string                 `bun:"last_error"`
	DeliveredAt   *time.Time              `bun:"delivered_at"`
	FailedAt      *time.Time              `bun:"failed_at"`
	StartedAt     *time.Time              `bun:"started_at"`
	// Redeliveries counts the times it was asked to go out again: an
	// attempt decides the status only if none was asked since it read it.
	Redeliveries int       `bun:"redeliveries"`
	CreatedAt    time.Time `bun:"created_at,nullzero,default:now()"`
	UpdatedAt    time.Time `bun:"updated_at,nullzero,default:now()"`
}

// WebhookAttempt is one POST of a delivery.
type WebhookAttempt struct {
	bun.BaseModel   `bun:"table:webhook_attempts,alias:wa"`
	ID              int64     `bun:"id,pk,autoincrement"`
	EventID         string    `bun:"event_id"`
	EndpointID      int64     `bun:"endpoint_id"`
	RunID           string    `bun:"run_id"`
	Attempt         int       `bun:"attempt"`
	AttemptedAt     time.Time `bun:"attempted_at"`
	DurationMS      int       `bun:"duration_ms"`
	StatusCode      *int      `bun:"status_code"`
	Error           *string   `bun:"error"`
	ResponseExcerpt string    `bun:"response_excerpt"`
}

// newEventID is the SQL of a new event id: "evt_" and 32 hex digits.
const newEventID = `'evt_' || replace(gen_random_uuid()::text, '-', '')`

// hasEndpoint is true when the environment of the row aliased x has a
// webhook endpoint: events of others are not written at all.
const hasEndpoint = `EXISTS (SELECT 1 FROM webhook_endpoints ep WHERE ep.company_id = x.company_id
	AND ep.is_test = x.is_test AND ep.deleted_at IS NULL)`

// inChannel is true when the endpoint aliased ep takes an event of the
// channel given twice as arguments (NULL: an event for every endpoint):
// the endpoint's application is in the channel now.
const inChannel = `(?::bigint IS NULL OR ep.application_id IN (SELECT ca.application_id FROM channel_applications ca
	WHERE ca.channel_id = ?::bigint))`

// orderEventSQL writes an event about an order with the order's row as the
// change left it (its page token left out). Arguments: type, refund id (or
// NULL), order id. Prepared (execPrepared): two of every order's.
const orderEventSQL = `INSERT INTO webhook_events (id, type, company_id, is_test, order_id, refund_id, snapshot)
	SELECT ` + newEventID + `, $1::text, x.company_id, x.is_test, x.id, $2::text,
		to_jsonb(x) - 'access_token_hash' - 'access_token_sealed'
	FROM orders x WHERE x.id = $3::bigint AND ` + hasEndpoint

// orderEvent writes an event about an order into the outbox, inside the
// transaction of the change it reports.
func orderEvent(ctx context.Context, db bun.IDB, typ states.WebhookEventType, orderID int64, refundID *string) error {
	if _, err := execPrepared(ctx, db, orderEventSQL, string(typ), refundID, orderID); err != nil {
		return fmt.Errorf("write %s event of order %d: %w", typ, orderID, err)
	}
	return nil
}

// reservationEvent writes an event about a reservation into the outbox.
func reservationEvent(ctx context.Context, db bun.IDB, typ states.WebhookEventType, reservationID string) error {
	_, err := db.NewRaw(`INSERT INTO webhook_events (id, type, company_id, is_test, reservation_id, snapshot)
		SELECT `+newEventID+`, ?, x.company_id, x.is_test, x.id, to_jsonb(x)
		FROM reservations x WHERE x.id = ? AND `+hasEndpoint, typ, reservationID).Exec(ctx)
	if err != nil {
		return fmt.Errorf("write %s event of reservation %s: %w", typ, reservationID, err)
	}
	return nil
}

// GetEventOrder is the order as the event's change left it.
func GetEventOrder(ctx context.Context, db bun.IDB, ev *WebhookEvent) (*Order, error) {
	o := new(Order)
	if err := db.NewRaw("SELECT * FROM jsonb_populate_record(NULL::orders, ?::jsonb)", string(ev.Snapshot)).Scan(ctx, o); err != nil {
		return nil, fmt.Errorf("order of event %s: %w", ev.ID, err)
	}
	return o, nil
}

// ErrEndpointLimit: the environment already has the most endpoints allowed.
var ErrEndpointLimit = errors.New("webhook endpoint limit reached")

// CreateWebhookEndpoint stores a new endpoint of the application of a
// company's environment, unless the environment already has `most`
// endpoints (ErrEndpointLimit). Creations for one application wait for each
// other on its row, so racing ones never go past the cap together.
func CreateWebhookEndpoint(ctx context.Context, db bun.IDB, e *WebhookEndpoint, most int) error {
	env := "production"
	if e.IsTest {
		env = "sandbox"
	}
	if e.EventTypes == nil {
		e.EventTypes = []string{}
	}
	err := db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		// NO KEY UPDATE: other rows referencing the application (keys)
		// are not held up, only creations of endpoints.
		q := tx.NewRaw("SELECT id FROM applications WHERE company_id = ? AND environment = ? ORDER BY id LIMIT 1 FOR NO KEY UPDATE",
			e.CompanyID, env)
		if e.ApplicationID == 0 {
			// The cabinet adds endpoints without a key: an environment
			// with no application yet gets the one its first key would
			// make (one per company and environment, named after it).
			if _, err := tx.NewRaw(`INSERT INTO applications (company_id, name, environment)
				SELECT ?, ?, ? WHERE NOT EXISTS (SELECT 1 FROM applications WHERE company_id = ? AND environment = ?)
				ON CONFLICT (company_id, environment, name) DO NOTHING`, e.CompanyID, env, env, e.CompanyID, env).Exec(ctx); err != nil {
				return err
			}
		} else {
			q = tx.NewRaw("SELECT id FROM applications WHERE id = ? FOR NO KEY UPDATE", e.ApplicationID)
		}
		if err := q.Scan(ctx, &e.ApplicationID); err != nil {
			return notFound(err, "application")
		}
		var n int
		if err := tx.NewRaw("SELECT count(*) FROM webhook_endpoints WHERE company_id = ? AND is_test = ? AND deleted_at IS NULL",
			e.CompanyID, e.IsTest).Scan(ctx, &n); err != nil {
			return err
		}
		if e.CreationToken != nil {
			// The form's token was claimed already (a submission that
			// waited on the application's row for this one): e is the
			// endpoint it made.
			err := tx.NewSelect().Model(e).Where("company_id = ? AND creation_token = ?", e.CompanyID, *e.CreationToken).Scan(ctx)
			if err == nil {
				return ErrCreationTokenUsed
			}
			if !errors.Is(err, sql.ErrNoRows) {
				return err
			}
		}
		if n >= most {
			return ErrEndpointLimit
		}
		// The unique (company_id, creation_token) index is the claim's
		// last word, should a submission ever not wait on the row above.
		if _, err := tx.NewInsert().Model(e).Returning("*").Exec(ctx); err != nil {
			return err
		}
		return Audit(ctx, tx, AuditEntry{CompanyID: e.CompanyID, Action: AuditWebhookCreate, Subject: endpointSubject(e),
			Detail: map[string]any{"endpoint_id": e.ID, "url": e.URL, "event_types": e.EventTypes}})
	})
	if err != nil {
		return fmt.Errorf("create webhook endpoint: %w", err)
	}
	return nil
}

// ErrCreationTokenUsed: the form's token made an endpoint already (the
// endpoint given is set to it).
var ErrCreationTokenUsed = errors.New("creation token used")

// ErrSecretOverlap: the previous secret still signs beside the current
// one; a rotation now would end its overlap at once.
var ErrSecretOverlap = errors.New("previous secret still in its overlap")

// GetWebhookEndpoint returns an endpoint of a company's environment.
func GetWebhookEndpoint(ctx context.Context, db bun.IDB, companyID int64, isTest bool, id int64) (*WebhookEndpoint, error) {
	e := new(WebhookEndpoint)
	err := db.NewSelect().Model(e).Where("id = ? AND company_id = ? AND is_test = ? AND deleted_at IS NULL", id, companyID, isTest).Scan(ctx)
	if err != nil {
		return nil, notFound(err, fmt.Sprintf("webhook endpoint %d", id))
	}
	return e, nil
}

// GetWebhookEndpointByID returns any endpoint, deleted ones included (for
// deliveries).
func GetWebhookEndpointByID(ctx context.Context, db bun.IDB, id int64) (*WebhookEndpoint, error) {
	e := new(WebhookEndpoint)
	if err := db.NewSelect().Model(e).Where("id = ?", id).Scan(ctx); err != nil {
		return nil, notFound(err, fmt.Sprintf("webhook endpoint %d", id))
	}
	return e, nil
}

// ListWebhookEndpoints returns a page of a company's environment's
// endpoints, oldest first, and the total.
func ListWebhookEndpoints(ctx context.Context, db bun.IDB, companyID int64, isTest bool, p Paging) ([]WebhookEndpoint, int, error) {
	var out []WebhookEndpoint
	q := db.NewSelect().Model(&out).Where("company_id = ? AND is_test = ? AND deleted_at IS NULL", companyID, isTest)
	n, err := scanPage(ctx, q, "id", p, "id > ?", func(s *Seek) []any { return []any{s.ID} })
	if err != nil {
		return nil, 0, fmt.Errorf("list webhook endpoints: %w", err)
	}
	return out, int(n), nil
}

// WebhookEndpointChange is a partial update; nil fields stay.
type WebhookEndpointChange struct {
	URL         *string
	Description *string
	EventTypes  *[]string
	Enabled     *bool
	// DisabledReason says who disabled it ("": disabled through the API).
	DisabledReason string
}

// UpdateWebhookEndpoint applies a change. Enabling an endpoint clears why
// it was disabled and its failure streak.
func UpdateWebhookEndpoint(ctx context.Context, db bun.IDB, e *WebhookEndpoint, c WebhookEndpointChange) error {
	q := db.NewUpdate().Model(e).WherePK().Where("deleted_at IS NULL").Set("updated_at = now()").Returning("*")
	if c.URL != nil {
		q.Set("url = ?", *c.URL)
	}
	if c.Description != nil {
		q.Set("description = ?", *c.Description)
	}
	if c.EventTypes != nil {
		q.Set("event_types = ?", pgdialect.Array(*c.EventTypes))
	}
	if c.Enabled != nil {
		q.Set("enabled = ?", *c.Enabled)
		if *c.Enabled {
			q.Set("disabled_at = NULL, disabled_reason = NULL, failing_since = NULL")
		} else {
			reason := c.DisabledReason
			if reason == "" {
				reason = "disabled through the API"
			}
			q.Set("disabled_at = now(), disabled_reason = ?", reason)
		}
	}
	return audited(ctx, db, func(tx bun.IDB) (AuditEntry, error) {
		if _, err := q.Conn(tx).Exec(ctx); err != nil {
			return AuditEntry{}, notFound(err, fmt.Sprintf("webhook endpoint %d", e.ID))
		}
		action, detail := AuditWebhookEdit, map[string]any{"endpoint_id": e.ID}
		if c.URL != nil {
			detail["url"] = *c.URL
		}
		if c.Description != nil {
			detail["description"] = *c.Description
		}
		if c.EventTypes != nil {
			detail["event_types"] = *c.EventTypes
		}
		if c.Enabled != nil {
			if len(detail) == 1 {
				action = map[bool]string{true: AuditWebhookEnable, false: AuditWebhookDisable}[*c.Enabled]
			} else {
				detail["enabled"] = *c.Enabled
			}
		}
		return AuditEntry{CompanyID: e.CompanyID, Action: action, Subject: endpointSubject(e), Detail: detail}, nil
	})
}

// endpointSubject names an endpoint in the audit log.
func endpointSubject(e *WebhookEndpoint) string {
	env := "production"
	if e.IsTest {
		env = "sandbox"
	}
	return fmt.Sprintf("%s webhook %d %s", env, e.ID, e.URL)
}

// DeleteWebhookEndpoint deletes an endpoint: it receives nothing more; its
// deliveries stay listed.
func DeleteWebhookEndpoint(ctx context.Context, db bun.IDB, companyID int64, isTest bool, id int64) error {
	return audited(ctx, db, func(tx bun.IDB) (AuditEntry, error) {
		e := new(WebhookEndpoint)
		err := tx.NewRaw(`UPDATE webhook_endpoints SET deleted_at = now(), enabled = false, updated_at = now()
			WHERE id = ? AND company_id = ? AND is_test = ? AND deleted_at IS NULL RETURNING *`, id, companyID, isTest).Scan(ctx, e)
		if errors.Is(err, sql.ErrNoRows) {
			return AuditEntry{}, fmt.Errorf("webhook endpoint %d: %w", id, errs.NotFound)
		}
		if err != nil {
			return AuditEntry{}, fmt.Errorf("delete webhook endpoint %d: %w", id, err)
		}
		return AuditEntry{CompanyID: companyID, Action: AuditWebhookDelete, Subject: endpointSubject(e),
			Detail: map[string]any{"endpoint_id": id}}, nil
	})
}

// RotateWebhookSecret gives an endpoint a new secret; the current one keeps
// signing beside it for overlap.
//
// afterOverlap refuses (ErrSecretOverlap) while the previous secret still
// signs: two rotations racing (a double click) make one, and the secret
// they replace keeps its promised overlap.
func RotateWebhookSecret(ctx context.Context, db bun.IDB, e *WebhookEndpoint, secret string, overlap time.Duration, afterOverlap bool) error {
	return audited(ctx, db, func(tx bun.IDB) (AuditEntry, error) {
		if err := rotateWebhookSecret(ctx, tx, e, secret, overlap, afterOverlap); err != nil {
			return AuditEntry{}, err
		}
		return AuditEntry{CompanyID: e.CompanyID, Action: AuditWebhookRotate, Subject: endpointSubject(e),
			Detail: map[string]any{"endpoint_id": e.ID, "overlap_seconds": int64(overlap.Seconds())}}, nil
	})
}

func rotateWebhookSecret(ctx context.Context, db bun.IDB, e *WebhookEndpoint, secret string, overlap time.Duration, afterOverlap bool) error {
	err := db.NewRaw(`UPDATE webhook_endpoints SET previous_secret = secret, previous_secret_expires_at = now() + ?::interval,
			secret = ?, updated_at = now()
		WHERE id = ? AND deleted_at IS NULL
			AND NOT (? AND previous_secret_expires_at IS NOT NULL AND previous_secret_expires_at > now())
		RETURNING *`, fmt.Sprintf("%d microseconds", overlap.Microseconds()), secret, e.ID, afterOverlap).Scan(ctx, e)
	if errors.Is(err, sql.ErrNoRows) && afterOverlap {
		// Refused, or gone: which one, as of now.
		var overlapping bool
		if err := db.NewRaw(`SELECT previous_secret_expires_at IS NOT NULL AND previous_secret_expires_at > now()
			FROM webhook_endpoints WHERE id = ? AND deleted_at IS NULL`, e.ID).Scan(ctx, &overlapping); err == nil && overlapping {
			return ErrSecretOverlap
		}
	}
	if err != nil {
		return notFound(err, fmt.Sprintf("webhook endpoint %d", e.ID))
	}
	return nil
}

// CreatePingEvent writes a test event for one endpoint, its body ready.
func CreatePingEvent(ctx context.Context, db bun.IDB, e *WebhookEndpoint, typ states.WebhookEventType, payload func(id string, at time.Time) ([]byte, error)) (*WebhookEvent, error) {
	ev := &WebhookEvent{Type: typ, CompanyID: e.CompanyID, IsTest: e.IsTest, EndpointID: &e.ID}
	err := db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if err := tx.NewRaw(`INSERT INTO webhook_events (id, type, company_id, is_test, endpoint_id)
			VALUES (`+newEventID+`, ?, ?, ?, ?) RETURNING *`, typ, e.CompanyID, e.IsTest, e.ID).Scan(ctx, ev); err != nil {
			return err
		}
		body, err := payload(ev.ID, ev.CreatedAt)
		if err != nil {
			return err
		}
		ev.Payload = body
		_, err = tx.NewRaw("UPDATE webhook_events SET payload = ? WHERE id = ?", string(body), ev.ID).Exec(ctx)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("create test event: %w", err)
	}
	return ev, nil
}

// GetWebhookEvent returns an event of a company's environment.
func GetWebhookEvent(ctx context.Context, db bun.IDB, companyID int64, isTest bool, id string) (*WebhookEvent, error) {
	ev := new(WebhookEvent)
	if err := db.NewSelect().Model(ev).Where("id = ? AND company_id = ? AND is_test = ?", id, companyID, isTest).Scan(ctx); err != nil {
		return nil, notFound(err, "webhook event "+id)
	}
	return ev, nil
}

// DispatchEvents takes up to limit events not yet dispatched, oldest first:
// render gives each its body (once), and a pending delivery is added for
// every endpoint that takes it, in one transaction per batch. Events taken
// by another dispatcher at the same time are skipped. It returns the
// deliveries made, for their workflows to be started.
func DispatchEvents(ctx context.Context, db *bun.DB, limit int, render func(context.Context, *WebhookEvent) ([]byte, error)) ([]WebhookDelivery, error) {
	var made []WebhookDelivery
	err := db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		made = made[:0]
		var evs []WebhookEvent
		if err := tx.NewSelect().Model(&evs).Where("dispatched_at IS NULL").OrderExpr("created_at").Limit(int64(limit)).
			For("UPDATE SKIP LOCKED").Scan(ctx); err != nil {
			return err
		}
		for i := range evs {
			ev := &evs[i]
			if ev.Payload == nil {
				body, err := render(ctx, ev)
				if err != nil {
					return fmt.Errorf("render event %s: %w", ev.ID, err)
				}
				if _, err := tx.NewRaw("UPDATE webhook_events SET payload = ? WHERE id = ?", string(body), ev.ID).Exec(ctx); err != nil {
					return err
				}
			}
			var ds []WebhookDelivery
			if err := tx.NewRaw(`INSERT INTO webhook_deliveries (event_id, endpoint_id)
				SELECT ?, ep.id FROM webhook_endpoints ep
				WHERE ep.company_id = ? AND ep.is_test = ? AND ep.deleted_at IS NULL AND ep.enabled
					AND (?::bigint IS NULL OR ep.id = ?::bigint) AND `+inChannel+`
					AND (cardinality(ep.event_types) = 0 OR ? = ANY(ep.event_types) OR ?::bigint IS NOT NULL)
				ON CONFLICT DO NOTHING RETURNING event_id, endpoint_id, status`,
				ev.ID, ev.CompanyID, ev.IsTest, ev.EndpointID, ev.EndpointID, ev.ChannelID, ev.ChannelID, ev.Type, ev.EndpointID).Scan(ctx, &ds); err != nil {
				return fmt.Errorf("deliveries of event %s: %w", ev.ID, err)
			}
			for j := range ds {
				ds[j].EventType = ev.Type
			}
			made = append(made, ds...)
			if _, err := tx.NewRaw("UPDATE webhook_events SET dispatched_at = now() WHERE id = ?", ev.ID).Exec(ctx); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("dispatch webhook events: %w", err)
	}
	return made, nil
}

// UnstartedDeliveries lists pending deliveries whose workflow was not
// marked started and that were made before cutoff.
func UnstartedDeliveries(ctx context.Context, db bun.IDB, cutoff time.Time, limit int) ([]WebhookDelivery, error) {
	var out []WebhookDelivery
	err := db.NewRaw(`SELECT event_id, endpoint_id, status FROM webhook_deliveries
		WHERE started_at IS NULL AND status = 'pending' AND created_at < ? ORDER BY created_at LIMIT ?`, cutoff, limit).Scan(ctx, &out)
	if err != nil {
		return nil, fmt.Errorf("unstarted webhook deliveries: %w", err)
	}
	return out, nil
}

// MarkDeliveryStarted records that a delivery's workflow runs.
func MarkDeliveryStarted(ctx context.Context, db bun.IDB, eventID string, endpointID int64) error {
	_, err := db.NewRaw("UPDATE webhook_deliveries SET started_at = now() WHERE event_id = ? AND endpoint_id = ? AND started_at IS NULL",
		eventID, endpointID).Exec(ctx)
	return err
}

// Redeliver makes the event due again to every endpoint of its environment
// that takes it now (a new delivery, or a finished one back to pending),
// or to the endpoint only (nil: every one). It returns the deliveries to
// start.
func Redeliver(ctx context.Context, db bun.IDB, ev *WebhookEvent, only *int64) ([]WebhookDelivery, error) {
	var out []WebhookDelivery
	err := db.NewRaw(`INSERT INTO webhook_deliveries (event_id, endpoint_id)
		SELECT ?, ep.id FROM webhook_endpoints ep
		WHERE ep.company_id = ? AND ep.is_test = ? AND ep.deleted_at IS NULL AND ep.enabled
			AND (?::bigint IS NULL OR ep.id = ?::bigint) AND (?::bigint IS NULL OR ep.id = ?::bigint) AND `+inChannel+`
			AND (cardinality(ep.event_types) = 0 OR ? = ANY(ep.event_types) OR ?::bigint IS NOT NULL)
		ON CONFLICT (event_id, endpoint_id) DO UPDATE SET status = 'pending', started_at = NULL, failed_at = NULL,
			redeliveries = webhook_deliveries.redeliveries + 1, updated_at = now()
		RETURNING event_id, endpoint_id, status`,
		ev.ID, ev.CompanyID, ev.IsTest, ev.EndpointID, ev.EndpointID, only, only, ev.ChannelID, ev.ChannelID, ev.Type, ev.EndpointID).Scan(ctx, &out)
	if err != nil {
		return nil, fmt.Errorf("redeliver event %s: %w", ev.ID, err)
	}
	return out, nil
}

// DeliveryTarget is what one attempt needs: the body and the endpoint.
type DeliveryTarget struct {
	Event    *WebhookEvent
	Endpoint *WebhookEndpoint
	Delivery *WebhookDelivery
}

// GetDeliveryTarget reads an event's body, the endpoint and the delivery.
func GetDeliveryTarget(ctx context.Context, db bun.IDB, eventID string, endpointID int64) (*DeliveryTarget, error) {
	t := &DeliveryTarget{Event: new(WebhookEvent), Delivery: new(WebhookDelivery)}
	if err := db.NewSelect().Model(t.Event).Where("id = ?", eventID).Scan(ctx); err != nil {
		return nil, notFound(err, "webhook event "+eventID)
	}
	if err := db.NewSelect().Model(t.Delivery).Where("event_id = ? AND endpoint_id = ?", eventID, endpointID).Scan(ctx); err != nil {
		return nil, notFound(err, fmt.Sprintf("delivery of %s to %d", eventID, endpointID))
	}
	var err error
	t.Endpoint, err = GetWebhookEndpointByID(ctx, db, endpointID)
	return t, err
}

// AttemptOutcome is what recording an attempt decided.
type AttemptOutcome struct {
	Disabled bool // the endpoint was disabled by this failure
}

// RecordAttempt stores an attempt and its effect, in one transaction: the
// delivery's counters (delivered on success), the endpoint's failure streak
// (cleared on success, started on a first failure), and, when the streak
// has lasted disableAfter, the endpoint disabled with the reason. The same
// attempt recorded twice (a retried activity) is stored once.
//
// redeliveries is the delivery's count the attempt read before its POST.
// If a redelivery was asked since, the attempt is kept in the history but
// leaves the status alone: the run it belonged to was replaced, and its
// late "delivered" would make the new run send nothing.
func RecordAttempt(ctx context.Context, db *bun.DB, a *WebhookAttempt, redeliveries int, delivered bool, disableAfter time.Duration) (AttemptOutcome, error) {
	var out AttemptOutcome
	err := db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if _, err := tx.NewInsert().Model(a).On("CONFLICT (event_id, endpoint_id, run_id, attempt) DO UPDATE").
			Set("attempted_at = EXCLUDED.attempted_at, duration_ms = EXCLUDED.duration_ms, status_code = EXCLUDED.status_code").
			Set("error = EXCLUDED.error, response_excerpt = EXCLUDED.response_excerpt").Exec(ctx); err != nil {
			return fmt.Errorf("record attempt: %w", err)
		}
		status := states.DeliveryPending
		if delivered {
			status = states.DeliveryDelivered
		}
		if _, err := tx.NewRaw(`UPDATE webhook_deliveries SET attempts = (SELECT count(*) FROM webhook_attempts
				WHERE event_id = ? AND endpoint_id = ?), last_attempt_at = ?, last_status = ?, last_error = ?,
				status = CASE WHEN status = 'delivered' OR redeliveries <> ? THEN status ELSE ? END,
				delivered_at = CASE WHEN ? AND redeliveries = ? THEN coalesce(delivered_at, now()) ELSE delivered_at END,
				updated_at = now()
			WHERE event_id = ? AND endpoint_id = ?`,
			a.EventID, a.EndpointID, a.AttemptedAt, a.StatusCode, a.Error, redeliveries, status, delivered, redeliveries,
			a.EventID, a.EndpointID).Exec(ctx); err != nil {
			return fmt.Errorf("update delivery: %w", err)
		}
		if delivered {
			_, err := tx.NewRaw("UPDATE webhook_endpoints SET failing_since = NULL WHERE id = ? AND failing_since IS NOT NULL", a.EndpointID).Exec(ctx)
			return err
		}
		if _, err := tx.NewRaw("UPDATE webhook_endpoints SET failing_since = ? WHERE id = ? AND failing_since IS NULL",
			a.AttemptedAt, a.EndpointID).Exec(ctx); err != nil {
			return err
		}
		what := "no answer"
		if a.StatusCode != nil {
			what = fmt.Sprintf("HTTP %d", *a.StatusCode)
		} else if a.Error != nil {
			what = *a.Error
		}
		var ids []int64
		if err := tx.NewRaw(`UPDATE webhook_endpoints SET enabled = false, disabled_at = now(), updated_at = now(),
				disabled_reason = 'every delivery failed since ' || to_char(failing_since AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')
					|| '; the last one: ' || left(?, 300)
			WHERE id = ? AND enabled AND failing_since <= ? RETURNING id`,
			what, a.EndpointID, a.AttemptedAt.Add(-disableAfter)).Scan(ctx, &ids); err != nil {
			return err
		}
		out.Disabled = len(ids) > 0
		return nil
	})
	return out, err
}

// FailDelivery marks a pending delivery failed, with why.
func FailDelivery(ctx context.Context, db bun.IDB, eventID string, endpointID int64, reason string) error {
	_, err := db.NewRaw(`UPDATE webhook_deliveries SET status = 'failed', failed_at = now(), last_error = left(?, 1000), updated_at = now()
		WHERE event_id = ? AND endpoint_id = ? AND status = 'pending'`, reason, eventID, endpointID).Exec(ctx)
	if err != nil {
		return fmt.Errorf("fail delivery of %s to %d: %w", eventID, endpointID, err)
	}
	return nil
}

// GiveUpDelivery fails a delivery whose retries ran out and, in the same
// transaction, disables its endpoint when no delivery to it has succeeded
// since this one's first attempt: the endpoint failed for the whole retry
// window. It reports whether it disabled the endpoint.
func GiveUpDelivery(ctx context.Context, db *bun.DB, eventID string, endpointID int64, reason string) (disabled bool, err error) {
	err = db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if err := FailDelivery(ctx, tx, eventID, endpointID, reason); err != nil {
			return err
		}
		var ids []int64
		if err := tx.NewRaw(`UPDATE webhook_endpoints SET enabled = false, disabled_at = now(), updated_at = now(),
				disabled_reason = 'every delivery failed since ' || to_char(failing_since AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')
					|| '; the last one: ' || left(?, 300)
			WHERE id = ? AND enabled AND failing_since IS NOT NULL
				AND failing_since <= (SELECT min(attempted_at) FROM webhook_attempts WHERE event_id = ? AND endpoint_id = ?)
			RETURNING id`, reason, endpointID, eventID, endpointID).Scan(ctx, &ids); err != nil {
			return err
		}
		disabled = len(ids) > 0
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("give up delivery of %s to %d: %w", eventID, endpointID, err)
	}
	return disabled, nil
}

// ListDeliveries returns a page of an endpoint's deliveries, newest first,
// and the total.
func ListDeliveries(ctx context.Context, db bun.IDB, endpointID int64, status states.DeliveryStatus, p Paging) ([]WebhookDelivery, int, error) {
	var out []WebhookDelivery
	q := db.NewSelect().Model(&out).ColumnExpr("wd.*").ColumnExpr("wev.type AS event_type").
		Join("JOIN webhook_events AS wev ON wev.id = wd.event_id").Where("wd.endpoint_id = ?", endpointID)
	if status != "" {
		q.Where("wd.status = ?", status)
	}
	n, err := scanPage(ctx, q, "wd.created_at DESC, wd.event_id DESC", p,
		"(wd.created_at, wd.event_id) < (?, ?)", func(s *Seek) []any { return []any{s.Time, s.Text} })
	if err != nil {
		return nil, 0, fmt.Errorf("list deliveries of endpoint %d: %w", endpointID, err)
	}
	return out, int(n), nil
}

// ListDeliveryAttempts returns the latest attempts of the deliveries, newest
// first, at most perDelivery each.
func ListDeliveryAttempts(ctx context.Context, db bun.IDB, endpointID int64, eventIDs []string, perDelivery int) (map[string][]WebhookAttempt, error) {
	out := map[string][]WebhookAttempt{}
	if len(eventIDs) == 0 {
		return out, nil
	}
	var rows []WebhookAttempt
	err := db.NewRaw(`SELECT id, event_id, endpoint_id, run_id, attempt, attempted_at, duration_ms, status_code, error, response_excerpt
		FROM (SELECT a.*, row_number() OVER (PARTITION BY event_id ORDER BY attempted_at DESC, id DESC) AS n
			FROM webhook_attempts a WHERE endpoint_id = ? AND event_id = ANY(?::text[])) x
		WHERE n <= ? ORDER BY attempted_at DESC, id DESC`, endpointID, pgdialect.Array(eventIDs), perDelivery).Scan(ctx, &rows)
	if err != nil {
		return nil, fmt.Errorf("attempts of endpoint %d: %w", endpointID, err)
	}
	for _, r := range rows {
		out[r.EventID] = append(out[r.EventID], r)
	}
	return out, nil
}

// ErrEventGone: the event of a delivery no longer exists.
var ErrEventGone = errors.New("webhook event gone")

// DeleteWebhookEventsBefore deletes events made before cutoff with their
// deliveries and attempts, except those still being delivered.
func DeleteWebhookEventsBefore(ctx context.Context, db bun.IDB, cutoff time.Time) (int64, error) {
	res, err := db.NewRaw(`DELETE FROM webhook_events e WHERE e.id IN (SELECT id FROM webhook_events
		WHERE created_at < ? AND dispatched_at IS NOT NULL
			AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = webhook_events.id AND d.status = 'pending')
		LIMIT 10000)`, cutoff).Exec(ctx)
	if err != nil {
		return 0, fmt.Errorf("delete webhook events: %w", err)
	}
	return res.RowsAffected()
}

// GetWebhookDelivery returns an endpoint's delivery of an event, with the
// event's type.
func GetWebhookDelivery(ctx context.Context, db bun.IDB, endpointID int64, eventID string) (*WebhookDelivery, error) {
	d := new(WebhookDelivery)
	err := db.NewSelect().Model(d).ColumnExpr("wd.*").ColumnExpr("wev.type AS event_type").
		Join("JOIN webhook_events AS wev ON wev.id = wd.event_id").Where("wd.endpoint_id = ? AND wd.event_id = ?", endpointID, eventID).Scan(ctx)
	if err != nil {
		return nil, notFound(err, fmt.Sprintf("delivery of %s to %d", eventID, endpointID))
	}
	return d, nil
}

// ListLatestAttempts returns each endpoint's latest attempt, of any
// delivery (an endpoint never tried is not in the map).
func ListLatestAttempts(ctx context.Context, db bun.IDB, endpointIDs []int64) (map[int64]WebhookAttempt, error) {
	out := map[int64]WebhookAttempt{}
	if len(endpointIDs) == 0 {
		return out, nil
	}
	var rows []WebhookAttempt
	err := db.NewRaw(`SELECT a.* FROM unnest(?::bigint[]) AS ep(id)
		CROSS JOIN LATERAL (SELECT * FROM webhook_attempts WHERE endpoint_id = ep.id ORDER BY attempted_at DESC, id DESC LIMIT 1) a`,
		pgdialect.Array(endpointIDs)).Scan(ctx, &rows)
	if err != nil {
		return nil, fmt.Errorf("latest attempts of endpoints %v: %w", endpointIDs, err)
	}
	for _, r := range rows {
		out[r.EndpointID] = r
	}
	return out, nil
}
