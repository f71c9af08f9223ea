package catalog

import "context"

// Builds counts the availability builds made.
func (s *Service) Builds() int64 { return s.availability.built.Load() }

// AfterBuild runs f when a build has read, before its waiters have it.
func (s *Service) AfterBuild(f func()) { s.availability.afterBuild = f }

// Waiting counts the requests waiting for the event's queued build.
func (s *Service) Waiting(eventID int64) int {
	s.availability.mu.Lock()
	defer s.availability.mu.Unlock()
	if q := s.availability.builds[view{eventID, 0}]; q != nil && q.next != nil {
		return q.next.waiting
	}
	return 0
}

// Build builds the event's availability afresh, as a cache miss does.
func (s *Service) Build(ctx context.Context, eventID int64) (AvailabilityDoc, error) {
	c, err := s.buildAvailability(ctx, view{eventID, 0}, s.now())
	if err != nil {
		return AvailabilityDoc{}, err
	}
	return c.AvailabilityDoc, nil
}

// PlacesRead counts the builds that read their event's seat places.
func (s *Service) PlacesRead() int64 { return s.availability.placesRead.Load() }
