package api_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ticketsales/ticketsales/internal/apikey"
)

// A body that never arrives costs the caller, not the service: a request
// whose headers promise 100 bytes and whose client sends 5 is answered
// within its body's deadline (5 s for the API, 10 s for a cabinet form)
// with 408 and Connection: close, and the connection is closed — before,
// the answer waited, with no deadline, for the rest of the body, holding
// the connection as long as the client liked. A body sent to no route is
// not waited for either.
func TestSlowBodiesCostTheCaller(t *testing.T) {
	f := newFixture(t)
	door, _ := f.Key(t, f.companyA, apikey.Sandbox, apikey.ScopeCheckin)
	addr := strings.TrimPrefix(f.URL, "http://")
	const mib = 1 << 20
	cases := []struct {
		name, path, key, contentType string
		promised, sent, want         int
	}{
		{"a scan", "/v1/check-ins", door, "application/json", 100, 5, http.StatusRequestTimeout},
		{"a hold", "/v1/reservations", f.keyA, "application/json", 100, 5, http.StatusRequestTimeout},
		{"a refund", "/v1/orders/1/refund", f.keyA, "application/json", 100, 5, http.StatusRequestTimeout},
		{"an aggregator's hold, without a key", "/aggregator/v1/reserve", "", "application/json", 100, 5, http.StatusRequestTimeout},
		{"the cabinet's sign-in", "/cabinet/signin", "", "application/x-www-form-urlencoded", 100, 5, http.StatusRequestTimeout},
		{"no route", "/v1/no-such-thing", f.keyA, "application/json", 100, 5, http.StatusNotFound},
		// Past the size limit, then stopped: refused at the limit, the
		// rest not waited for.
		{"a hold of over 1 MiB", "/v1/reservations", f.keyA, "application/json", mib + 1000, mib + 1, http.StatusRequestEntityTooLarge},
		{"a sign-in of 18 MB", "/cabinet/signin", "", "application/x-www-form-urlencoded", 18_000_000, 2 * mib, http.StatusRequestEntityTooLarge},
	}
	var wg sync.WaitGroup
	for _, c := range cases {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := slowBody(addr, c.path, c.key, c.contentType, c.promised, c.sent, c.want); err != nil {
				t.Errorf("%s: %v", c.name, err)
			}
		}()
	}
	wg.Wait()
}

// slowBody sends a request that promises a body of promised bytes and
// sends sent of them, then waits up to 20 s for the answer: want, with
// Connection: close, and then the end of the connection.
func slowBody(addr, path, key, contentType string, promised, sent, want int) error {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		return err
	}
	defer conn.Close()
	auth := ""
	if key != "" {
		auth = "Authorization: Bearer " + key + "\r\n"
	}
	_, err = fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: %s\r\n%sIdempotency-Key: slow-%d\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n{\"a\":",
		path, addr, auth, time.Now().UnixNano(), contentType, promised)
	if err != nil {
		return err
	}
	if _, err := conn.Write([]byte(strings.Repeat("1", sent-5))); err != nil {
		return err
	}
	stopped := time.Now()
	_ = conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	br := bufio.NewReader(conn)
	res, err := http.ReadResponse(br, nil)
	if err != nil {
		return fmt.Errorf("no answer %v after the 5 bytes: %w", time.Since(stopped).Round(time.Second), err)
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if res.StatusCode != want || !res.Close {
		return fmt.Errorf("answered %d (close: %v), want %d with Connection: close", res.StatusCode, res.Close, want)
	}
	if _, err := br.ReadByte(); !errors.Is(err, io.EOF) {
		return fmt.Errorf("the connection stays open after the answer: %v", err)
	}
	return nil
}
