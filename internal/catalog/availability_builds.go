package catalog

import (
	"context"
	"fmt"
	"runtime/debug"
	"time"
)

// availabilityBuild is one read and encoding of an event's availability,
// shared by every request that waits for it.
type availabilityBuild struct {
	done    chan struct{}
	c       *cachedAvailability
	err     error
	waiting int // requests waiting for it (tests watch it)
}

// eventBuilds are an event's build under way and the one queued after it.
type eventBuilds struct {
	running, next *availabilityBuild
}

// buildTimeout bounds a shared build, which runs apart from the requests
// that wait for it (one of them leaving must not fail the others).
const buildTimeout = 10 * time.Second

// sharedBuild returns an availability of the event read after this call
// began. Requests that find a build under way wait for the next one, which
// starts when it ends and serves them all: an on-sale's first second, when
// every buyer opening the seat map misses the cache at once, costs two
// builds of a large hall rather than one per buyer. A build already under
// way is never joined: its read may predate this request, whose own hold,
// made just before, it could miss.
func (s *Service) sharedBuild(ctx context.Context, v view) (*cachedAvailability, error) {
	ac := s.availability
	ac.mu.Lock()
	q := ac.builds[v]
	if q == nil {
		q = &eventBuilds{}
		ac.builds[v] = q
	}
	var b *availabilityBuild
	if q.running == nil {
		b = &availabilityBuild{done: make(chan struct{})}
		q.running = b
		go s.runBuild(context.WithoutCancel(ctx), v, q, b)
	} else {
		if q.next == nil {
			q.next = &availabilityBuild{done: make(chan struct{})}
		}
		b = q.next
	}
	b.waiting++
	ac.mu.Unlock()
	select {
	case <-b.done:
		return b.c, b.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// runBuild makes b, then starts the build queued behind it, if any. It
// runs on a goroutine of its own, away from the requests' recovery: a
// panic in a build is the waiters' error, not the process's end.
func (s *Service) runBuild(base context.Context, v view, q *eventBuilds, b *availabilityBuild) {
	ac := s.availability
	defer func() {
		if r := recover(); r != nil {
			b.c, b.err = nil, fmt.Errorf("build availability of event %d: panic: %v\n%s", v.event, r, debug.Stack())
		}
		close(b.done)
		ac.mu.Lock()
		defer ac.mu.Unlock()
		q.running, q.next = q.next, nil
		if q.running == nil {
			delete(ac.builds, v)
			return
		}
		go s.runBuild(base, v, q, q.running)
	}()
	ctx, cancel := context.WithTimeout(base, buildTimeout)
	defer cancel()
	b.c, b.err = s.buildAvailability(ctx, v, s.now())
	ac.built.Add(1)
	if ac.afterBuild != nil {
		ac.afterBuild()
	}
}
