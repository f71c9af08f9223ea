package api

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/danielgtaylor/huma/v2"

	"github.com/ticketsales/ticketsales/api/request"
	"github.com/ticketsales/ticketsales/store"
)

// maxBodyBytes bounds every request body the API reads.
const maxBodyBytes = 1 << 20

// idempotent marks a creating operation: it requires Idempotency-Key and its
// responses are replayed for repeats.
func idempotent(op huma.Operation) huma.Operation {
	if op.Metadata == nil {
		op.Metadata = map[string]any{}
	}
	op.Metadata["idempotent"] = true
	op.MaxBodyBytes = maxBodyBytes
	op.Parameters = append(op.Parameters, &huma.Param{Name: "Idempotency-Key", In: "header", Required: true,
		Description: "A unique key per creating request, in UTF-8 (a UUID is fine). A repeat with the same key and body " +
			"replays the first response with `Idempotent-Replayed: true`; keys are kept 24 hours. " +
			"A hold refused at once because its seats are known taken (409 `seat_taken` in an on-sale rush) " +
			"is not kept: a retry with the same key asks again.",
		Schema: &huma.Schema{Type: "string", MinLength: ptr(1), MaxLength: ptr(255)}})
	op.Errors = append(op.Errors, http.StatusBadRequest, http.StatusConflict, http.StatusUnprocessableEntity)
	return op
}

func ptr[T any](v T) *T { return &v }

const provisionalAcceptedKey = "provisionalAccepted"

// provisionalAccepted marks an idempotent operation whose 202 is a
// provisional answer (work under way whose outcome a retry should see):
// a 202 is not stored for the key, so a retry runs again and gets the
// answer as it stands then.
func provisionalAccepted(op huma.Operation) huma.Operation {
	op.Metadata[provisionalAcceptedKey] = true
	return op
}

// refuseFromMemory answers a request from what the instance knows, before
// its idempotency key is claimed: a refusal is the answer, none runs the
// request as usual. Only refusals are answered this way (a "yes" always
// runs), so nothing is ever done without a record.
//
// A request it lets through may be counted as in flight until landed is
// called (nil: nothing to call).
type refuseFromMemory func(ctx context.Context, idempotencyKey string, body []byte) (landed func(), refusal error)

// memoryRefusals is an operation's refuseFromMemory and what to call when
// one of its refusals is the answer (a refusal under a key seen before is
// not: the key's first answer is, and it was counted when it was given).
type memoryRefusals struct {
	refuse   refuseFromMemory
	answered func()
}

const refuseFromMemoryKey = "refuseFromMemory"

const rerunIsHarmlessKey = "rerunIsHarmless"

// rerunIsHarmless marks an idempotent operation whose own transaction makes
// its effect durable and whose run again, should its stored answer be lost
// in a crash, changes nothing a client relies on and answers from the state
// the first run left (a scan: one more scan recorded, already_checked_in
// with the first admission's time and gate). Its answer
// is stored without waiting for the WAL flush, as a 4xx's is: the scan's
// answer waits for one flush (its own commit), not two.
func rerunIsHarmless(op huma.Operation) huma.Operation {
	op.Metadata[rerunIsHarmlessKey] = true
	return op
}

// refusesFromMemory marks an idempotent operation that may be refused from
// memory by refuse; answered is called for each refusal given.
func refusesFromMemory(op huma.Operation, refuse refuseFromMemory, answered func()) huma.Operation {
	op.Metadata[refuseFromMemoryKey] = memoryRefusals{refuse: refuse, answered: answered}
	return op
}

// withIdempotency implements draft-ietf-httpapi-idempotency-key-header for
// every operation marked idempotent, in one place: the first request with a
// key runs and its response is stored; a repeat with the same method, path
// and body gets the stored response; a different request under the key is
// refused, and so is a repeat while the first still runs.
func (s *Server) withIdempotency(ctx huma.Context, next func(huma.Context)) {
	if on, _ := ctx.Operation().Metadata["idempotent"].(bool); !on {
		next(ctx)
		return
	}
	rctx := ctx.Context()
	p := request.Principal(rctx)
	key := ctx.Header("Idempotency-Key")
	switch {
	case key == "":
		s.writeErr(ctx, newProblem(rctx, http.StatusBadRequest, "idempotency_key_required",
			"This request creates something: send an Idempotency-Key header, unique per request."))
		return
	case len(key) > 255:
		s.writeErr(ctx, newProblem(rctx, http.StatusBadRequest, "idempotency_key_required",
			"The Idempotency-Key header is longer than 255 bytes."))
		return
	case !utf8.ValidString(key):
		// Postgres keeps text as UTF-8: a key of other bytes would be
		// stored altered, so two keys could collide and a repeat could
		// fail to find its first answer.
		s.writeErr(ctx, newProblem(rctx, http.StatusBadRequest, "idempotency_key_required",
			"The Idempotency-Key header is not valid UTF-8 (send ASCII, such as a UUID)."))
		return
	}
	body, err := io.ReadAll(io.LimitReader(ctx.BodyReader(), maxBodyBytes+1))
	if err != nil {
		s.writeErr(ctx, newProblem(rctx, http.StatusBadRequest, "malformed_request", "The request body could not be read."))
		return
	}
	if m, ok := ctx.Operation().Metadata[refuseFromMemoryKey].(memoryRefusals); ok {
		landed, refusal := m.refuse(rctx, key, body)
		if landed != nil {
			defer landed()
		}
		if refusal != nil {
			// Refused from memory: nothing ran, so nothing is kept under
			// the key, and a retry asks again. A key seen before still gets
			// its record (the first answer, or "in progress").
			used, lerr := s.usedKeys.Used(rctx, p.KeyID, key)
			if lerr == nil && !used {
				m.answered()
				s.writeErr(ctx, fromError(rctx, s.log, refusal))
				return
			}
		}
	}
	rawHash, canonHash := bodyHashes(body)
	// The claim goes through the bookkeeping pool: the request's own write
	// commits after it and so makes it durable too. The stored response
	// below waits for its flush, so a replay never forgets a hold.
	u := ctx.URL()
	rec := &store.IdempotencyRecord{APIKeyID: p.KeyID, Key: key, Method: ctx.Method(), Path: u.Path, BodyHash: rawHash, BodyHashCanonical: canonHash}
	claimed, existing, err := store.ClaimIdempotencyKey(rctx, s.deps.bookkeeping(), rec)
	if err != nil {
		s.writeErr(ctx, fromError(rctx, s.log, err))
		return
	}
	if !claimed {
		s.answerRepeat(ctx, rec, existing)
		return
	}
	if ri := request.From(rctx); ri != nil {
		ri.IdempotencyKey = key
	}

	c := &capturingContext{humaContext: ctx, body: body, headers: http.Header{}}
	defer func() {
		// A panic or a 5xx is not stored: the partner's retry runs again.
		bg, cancel := context.WithTimeout(context.WithoutCancel(rctx), 5*time.Second)
		defer cancel()
		if v := recover(); v != nil {
			_ = store.ReleaseIdempotencyKey(bg, s.deps.bookkeeping(), p.KeyID, key)
			panic(v)
		}
		status := c.Status()
		if status == 0 {
			status = http.StatusOK
		}
		var err error
		provisional, _ := ctx.Operation().Metadata[provisionalAcceptedKey].(bool)
		if status >= 500 || status == 499 || rctx.Err() != nil || (status == http.StatusAccepted && provisional) {
			// Failed or abandoned by the client, or not finished yet: a
			// retry must run again.
			err = store.ReleaseIdempotencyKey(bg, s.deps.bookkeeping(), p.KeyID, key)
		} else {
			// A 4xx changed nothing, so its record need not wait for the
			// WAL flush: lost in a crash, the retry only asks again. That
			// keeps a rush's refusals (409 seat_taken) off the disk's
			// flush queue, where they waited behind every commit.
			db := s.deps.DB
			if rerun, _ := ctx.Operation().Metadata[rerunIsHarmlessKey].(bool); status >= 400 || rerun {
				db = s.deps.bookkeeping()
			}
			for attempt := 0; attempt < 3; attempt++ {
				if err = store.CompleteIdempotencyKey(bg, db, p.KeyID, key, status, c.headers, c.out.Bytes()); err == nil {
					break
				}
			}
		}
		if err != nil {
			s.log.ErrorContext(rctx, "idempotency record", "request_id", request.ID(rctx), "err", err)
		}
	}()
	next(c)
}

// bodyHashes is what a request body is stored and compared by: the SHA-256
// of its bytes, and of its canonical JSON (canonicalJSON; nil when it is
// not JSON).
func bodyHashes(body []byte) (rawHash, canonHash []byte) {
	raw := sha256.Sum256(body)
	if canon, ok := canonicalJSON(body); ok {
		sum := sha256.Sum256(canon)
		return raw[:], sum[:]
	}
	return raw[:], nil
}

// answerRepeat answers a request whose key was claimed already. The bodies
// match when their bytes do, or their canonical JSON does (the same value
// serialised another way).
func (s *Server) answerRepeat(ctx huma.Context, rec *store.IdempotencyRecord, existing *store.IdemExisting) {
	rctx := ctx.Context()
	sameBody := bytes.Equal(existing.BodyHash, rec.BodyHash) ||
		(existing.BodyHashCanonical != nil && bytes.Equal(existing.BodyHashCanonical, rec.BodyHashCanonical))
	switch {
	case existing.Method != rec.Method || existing.Path != rec.Path || !sameBody:
		s.writeErr(ctx, newProblem(rctx, http.StatusUnprocessableEntity, "idempotency_key_reused",
			"This Idempotency-Key was used for a different request ("+existing.Method+" "+existing.Path+
				"); use a new key for a new request."))
	case existing.Status == nil:
		s.writeErr(ctx, newProblem(rctx, http.StatusConflict, "idempotency_request_in_progress",
			"The first request with this Idempotency-Key is still running; retry shortly.").withHeader("Retry-After", "1"))
	default:
		for k, vs := range existing.Headers {
			for _, v := range vs {
				ctx.AppendHeader(k, v)
			}
		}
		// The replayed body names the first request: so does the header,
		// so a partner quoting either to support finds the same request.
		var first struct {
			RequestID string `json:"request_id"`
		}
		if json.Unmarshal(existing.Body, &first) == nil && first.RequestID != "" {
			ctx.SetHeader("X-Request-Id", first.RequestID)
		}
		ctx.SetHeader("Idempotent-Replayed", "true")
		ctx.SetHeader("Content-Length", strconv.Itoa(len(existing.Body)))
		ctx.SetStatus(*existing.Status)
		_, _ = ctx.BodyWriter().Write(existing.Body)
	}
}

// humaContext lets capturingContext embed huma.Context, whose own method
// named Context would clash with the embedded field's default name.
type humaContext = huma.Context

// capturingContext serves the request normally while keeping a copy of the
// response for the idempotency record, and gives the handler back the body
// the middleware already read.
type capturingContext struct {
	humaContext
	body    []byte
	headers http.Header
	out     bytes.Buffer
}

func (c *capturingContext) BodyReader() io.Reader { return bytes.NewReader(c.body) }

func (c *capturingContext) SetHeader(name, value string) {
	c.headers.Set(name, value)
	c.humaContext.SetHeader(name, value)
}

func (c *capturingContext) AppendHeader(name, value string) {
	c.headers.Add(name, value)
	c.humaContext.AppendHeader(name, value)
}

func (c *capturingContext) BodyWriter() io.Writer {
	return io.MultiWriter(c.humaContext.BodyWriter(), &c.out)
}
