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

// A password set in one company takes back a reset another company's
// pending invitation carries (pressed on its page, or issued by the
// operator): the link stays an invitation, and asks for the new password.
func TestAPasswordChangeTakesBackResets(t *testing.T) {
	db, _ := testenv.DB(t)
	ctx := context.Background()
	const email = "ольга.петрова@reset.test"
	now := time.Now()
	a, err := store.CreateCompany(ctx, db, "Театр на Литейном")
	if err != nil {
		t.Fatal(err)
	}
	b, err := store.CreateCompany(ctx, db, "Филармония")
	if err != nil {
		t.Fatal(err)
	}
	inA, err := store.CreateCabinetUser(ctx, db, a.ID, email, "owner")
	if err != nil {
		t.Fatal(err)
	}
	link := newTokenHash()
	if err := store.NewSignInLink(ctx, db, inA.ID, link, now.Add(time.Hour), now); err != nil {
		t.Fatal(err)
	}
	if _, err := store.UseSignInLink(ctx, db, link, "hash-first", "192.0.2.1", now); err != nil {
		t.Fatal(err)
	}
	inB, err := store.CreateCabinetUser(ctx, db, b.ID, email, "finance")
	if err != nil {
		t.Fatal(err)
	}
	resetsOfB := func() (resets, unused int) {
		t.Helper()
		if err := db.NewRaw(`SELECT count(*) FILTER (WHERE resets_password), count(*) FROM cabinet_signin_links
			WHERE user_id = ? AND used_at IS NULL`, inB.ID).Scan(ctx, &resets, &unused); err != nil {
			t.Fatal(err)
		}
		return resets, unused
	}
	for _, how := range []string{"changed on the account page", "set through a lost-password link"} {
		if err := store.NewResetLink(ctx, db, inB.ID, newTokenHash(), now.Add(time.Hour), now); err != nil {
			t.Fatal(err)
		}
		if r, u := resetsOfB(); r != 1 || u != 1 {
			t.Fatalf("before: %d resets among %d unused links of the invitation", r, u)
		}
		switch how {
		case "changed on the account page":
			u, err := store.GetCabinetUser(ctx, db, inA.ID)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := store.ChangeCabinetPassword(ctx, db, inA.ID, u.SessionVersion, "hash-changed", time.Now()); err != nil {
				t.Fatal(err)
			}
		default:
			lost := newTokenHash()
			if err := store.NewResetLink(ctx, db, inA.ID, lost, now.Add(time.Hour), now); err != nil {
				t.Fatal(err)
			}
			if _, err := store.UseSignInLink(ctx, db, lost, "hash-reset", "192.0.2.1", time.Now()); err != nil {
				t.Fatal(err)
			}
		}
		if r, u := resetsOfB(); r != 0 || u != 1 {
			t.Fatalf("password %s: %d resets among %d unused links of the invitation, want 0 among 1", how, r, u)
		}
	}
}

// Links issued while the person's links are used, and sign-ins from new
// addresses while the password changes: each row they add references a
// row the other locks, and no pair may deadlock (a 500 on the page).
func TestLinksAndSignInsDuringPasswordChanges(t *testing.T) {
	db, _ := testenv.DB(t)
	ctx := context.Background()
	const email = "sam@locks.test"
	co, err := store.CreateCompany(ctx, db, "Locks")
	if err != nil {
		t.Fatal(err)
	}
	u, err := store.CreateCabinetUser(ctx, db, co.ID, email, "owner")
	if err != nil {
		t.Fatal(err)
	}
	first := newTokenHash()
	now := time.Now()
	if err := store.NewSignInLink(ctx, db, u.ID, first, now.Add(time.Hour), now); err != nil {
		t.Fatal(err)
	}
	if _, err := store.UseSignInLink(ctx, db, first, "hash-0", "192.0.2.1", now); err != nil {
		t.Fatal(err)
	}
	for round := range 20 {
		lost := newTokenHash()
		now := time.Now()
		if err := store.NewResetLink(ctx, db, u.ID, lost, now.Add(time.Hour), now); err != nil {
			t.Fatal(err)
		}
		cur, err := store.GetCabinetUser(ctx, db, u.ID)
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		start := make(chan struct{})
		run := func(what string, f func() error) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				if err := f(); err != nil && !errors.Is(err, errs.NotFound) {
					t.Errorf("round %d: %s: %v", round, what, err)
				}
			}()
		}
		run("using the lost-password link", func() error {
			_, err := store.UseSignInLink(ctx, db, lost, fmt.Sprintf("hash-link-%d", round), "192.0.2.2", time.Now())
			return err
		})
		run("issuing a new link", func() error {
			return store.NewSignInLink(ctx, db, u.ID, newTokenHash(), time.Now().Add(time.Hour), time.Now())
		})
		run("changing the password", func() error {
			_, err := store.ChangeCabinetPassword(ctx, db, u.ID, cur.SessionVersion, fmt.Sprintf("hash-change-%d", round), time.Now())
			return err
		})
		run("signing in from a new address", func() error {
			return store.RecordCabinetSignIn(ctx, db, u.ID, fmt.Sprintf("198.51.100.%d", round+1), time.Now())
		})
		close(start)
		wg.Wait()
		if t.Failed() {
			return
		}
	}
}
