package main

import (
	"encoding/json"
	"slices"
	"testing"
)

// TestFreeSeatsAreTheAnswersFreeSeats: the scan finds what decoding the
// availability answer finds free, and nothing else.
func TestFreeSeatsAreTheAnswersFreeSeats(t *testing.T) {
	body := []byte(`{"data":{"event_id":7,"version":"3.12","seats":[` +
		`{"zone_id":"a","seat_id":"a-1-1","row":"1","number":"1","status":"free","ticket_category_id":1,"price":{"amount":100,"currency":"RUB"}},` +
		`{"zone_id":"a","seat_id":"a-1-2","row":"1","number":"2","status":"reserved","ticket_category_id":1,"price":{"amount":100,"currency":"RUB"}},` +
		`{"zone_id":"a","seat_id":"a-1-3","row":"1","number":"3","status":"sold","ticket_category_id":1,"price":{"amount":100,"currency":"RUB"}},` +
		`{"zone_id":"b","seat_id":"b-2-10","row":"2","number":"10","status":"free","ticket_category_id":2,"price":{"amount":50,"currency":"RUB"}}` +
		`],"categories":[{"ticket_category_id":1,"price":{"amount":100,"currency":"RUB"},"available":1}]},"request_id":"r"}`)
	var a struct {
		Data struct {
			Seats []struct {
				SeatID string `json:"seat_id"`
				Status string `json:"status"`
			} `json:"seats"`
		}
	}
	if err := json.Unmarshal(body, &a); err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, s := range a.Data.Seats {
		if s.Status == "free" {
			want = append(want, s.SeatID)
		}
	}
	if got := freeSeats(body); !slices.Equal(got, want) || len(want) != 2 {
		t.Fatalf("free seats %v, want %v", got, want)
	}
}
