package store_test

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/ticketsales/ticketsales/internal/errs"
	"github.com/ticketsales/ticketsales/store"
	"github.com/ticketsales/ticketsales/test/testenv"
)

// newTokenHash is a random stand-in for a link token's hash.
func newTokenHash() []byte {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return b
}

// TestPasswordChangeAndLostPasswordLinksAtOnce: a person of several
// companies changes the password (each membership's session) while
// lost-password links of the same person are used, round after round. Each
// one either happens or is refused as expected (the link spent by a
// password set first, the session ended by one set first): never another
// error, such as Postgres's deadlock detected, which a link locked before
// the person's row gave.
func TestPasswordChangeAndLostPasswordLinksAtOnce(t *testing.T) {
	db, _ := testenv.DB(t)
	ctx := context.Background()
	const email, companies = "pat@race.test", 4
	var members []int64
	for i := range companies {
		co, err := store.CreateCompany(ctx, db, fmt.Sprintf("Race %d", i))
		if err != nil {
			t.Fatal(err)
		}
		u, err := store.CreateCabinetUser(ctx, db, co.ID, email, "owner")
		if err != nil {
			t.Fatal(err)
		}
		link := newTokenHash()
		now := time.Now()
		if err := store.NewSignInLink(ctx, db, u.ID, link, now.Add(time.Hour), now); err != nil {
			t.Fatal(err)
		}
		// The first sets the password, the others join with it.
		if i == 0 {
			_, err = store.UseSignInLink(ctx, db, link, "hash-0", "192.0.2.1", now)
		} else {
			_, err = store.JoinWithSignInLink(ctx, db, link, email, "hash-0", "192.0.2.1", now)
		}
		if err != nil {
			t.Fatal(err)
		}
		members = append(members, u.ID)
	}
	var linksUsed, changes int
	for round := range 15 {
		links := make([][]byte, companies)
		versions := make([]int, companies)
		for i, id := range members {
			links[i] = newTokenHash()
			now := time.Now()
			if err := store.NewSignInLink(ctx, db, id, links[i], now.Add(time.Hour), now); err != nil {
				t.Fatal(err)
			}
			u, err := store.GetCabinetUser(ctx, db, id)
			if err != nil {
				t.Fatal(err)
			}
			versions[i] = u.SessionVersion
		}
		var mu sync.Mutex
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i, id := range members {
			wg.Add(2)
			go func() {
				defer wg.Done()
				<-start
				_, err := store.UseSignInLink(ctx, db, links[i], fmt.Sprintf("hash-link-%d-%d", round, i), "192.0.2.2", time.Now())
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					linksUsed++
				case !errors.Is(err, errs.NotFound):
					t.Errorf("round %d: using the lost-password link of user %d: %v", round, id, err)
				}
			}()
			go func() {
				defer wg.Done()
				<-start
				_, err := store.ChangeCabinetPassword(ctx, db, id, versions[i], fmt.Sprintf("hash-change-%d-%d", round, i), time.Now())
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					changes++
				case !errors.Is(err, errs.NotFound):
					t.Errorf("round %d: changing the password of user %d: %v", round, id, err)
				}
			}()
		}
		close(start)
		wg.Wait()
		if t.Failed() {
			return
		}
		// Whatever won, no lost-password link of the person works after
		// a password was set.
		var unused int
		if err := db.NewRaw(`SELECT count(*) FROM cabinet_signin_links l JOIN cabinet_users u ON u.id = l.user_id
			WHERE u.email = ? AND l.used_at IS NULL`, email).Scan(ctx, &unused); err != nil || unused != 0 {
			t.Fatalf("round %d: %d links still unused after the password was set (%v)", round, unused, err)
		}
	}
	if linksUsed == 0 || changes == 0 {
		t.Fatalf("links used %d times, passwords changed %d times: the race was not run both ways", linksUsed, changes)
	}
}
