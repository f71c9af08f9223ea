package contract

import (
	"strconv"
	"time"
)

// AllocationReleaseWorkflow returns a channel's unsold allocation on an
// event to general sale at the organizer's release_at.
const AllocationReleaseWorkflow = "AllocationRelease"

// AllocationReleaseWorkflowID is the readable id of a channel's timed
// release on an event: "release/{event_id}/{channel_id}". There is one per
// channel and event; moving release_at replaces the run under the same id.
func AllocationReleaseWorkflowID(eventID, channelID int64) string {
	return "release/" + strconv.FormatInt(eventID, 10) + "/" + strconv.FormatInt(channelID, 10)
}

// AllocationReleaseInput starts the release workflow, and is its
// activity's input: ids and the time the run waits for.
type AllocationReleaseInput struct {
	CompanyID int64
	EventID   int64
	ChannelID int64
	// ReleaseAt is the release_at this run was started for; a run whose
	// ReleaseAt is no longer the channel's releases nothing.
	ReleaseAt time.Time
}

// AllocationReleaseResult is what the release moved, the workflow's
// result.
type AllocationReleaseResult struct {
	Seats      int // seats returned to general sale
	Quantities int // general-admission tickets returned
	// NotDue: nothing was due when the run got there (the release was
	// moved, removed, or already done): a stale run, harmless.
	NotDue bool
}

// AllocationReleaseStatus answers the status query: waiting for
// ReleaseAt, Releasing, or done with Result.
type AllocationReleaseStatus struct {
	ReleaseAt time.Time
	Releasing bool
	Result    *AllocationReleaseResult
}
