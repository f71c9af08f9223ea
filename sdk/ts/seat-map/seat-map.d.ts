// Types of <ticket-seat-map>, the seat map web component (docs/seat-map.md).
// Importing "@ticketsales/sdk/seat-map" defines the element; it has no exports.

/** Money as the API states it: minor units (kopecks) and an ISO 4217 code. */
export interface SeatMapMoney {
  amount: number;
  currency: string;
}

/** A picked seat, as seatmap:change and selectedSeats report it. */
export interface SeatMapSeat {
  zone_id: string;
  seat_id: string;
  /** The seat's accessible name, e.g. "Партер, ряд 5, место 12, 3 500 ₽". */
  label: string;
  category_id: number | null;
  /** The seat's price from /availability (without the fee). */
  price: SeatMapMoney | null;
}

export interface SeatMapChangeDetail {
  seats: SeatMapSeat[];
  /** Σ of what a buyer pays per seat (price_total when `categories` gives it, else price). */
  total: SeatMapMoney;
  /** pick, unpick, clear, held, or taken (seats sold or held elsewhere left the pick: `dropped`). */
  reason: "pick" | "unpick" | "clear" | "held" | "taken";
  dropped?: SeatMapSeat[];
}

export interface SeatMapBestAvailableDetail {
  quantity: number;
  category_id?: number;
}

export interface SeatMapErrorDetail {
  /** HTTP status; 0 when the request did not complete. 401: fetch a new token, set element.token. */
  status: number;
  /** The problem's code (e.g. "unauthorized"), "network", or "". */
  code: string;
  message?: string;
}

/** A category as GET /v1/events/{id}/categories answers it (names and the fee for the legend). */
export interface SeatMapCategory {
  id: number;
  name?: string;
  price?: SeatMapMoney;
  price_total?: SeatMapMoney;
}

export interface TicketSeatMapElement extends HTMLElement {
  /** A seat-map token (smt_…); absent when base-url is the partner's own proxy. */
  token: string | null;
  readonly baseUrl: string;
  readonly eventId: string;
  readonly pollInterval: number;
  readonly maxSeats: number;
  readonly selectedSeats: SeatMapSeat[];
  readonly heldSeats: SeatMapSeat[];
  categories: SeatMapCategory[];
  /** Draws these seats as held for this buyer (e.g. a reservation's seats); [] clears. */
  markHeld(seats: Array<{ seat_id: string } | string>): void;
  /** Empties the pick (emits seatmap:change). */
  clear(): void;
  /** Reads availability now. */
  refresh(): Promise<void>;
  zoomIn(): void;
  zoomOut(): void;
  fit(): void;
}

export interface TicketSeatMapEventMap {
  "seatmap:ready": CustomEvent<{ seat_count: number }>;
  "seatmap:change": CustomEvent<SeatMapChangeDetail>;
  "seatmap:best-available": CustomEvent<SeatMapBestAvailableDetail>;
  "seatmap:error": CustomEvent<SeatMapErrorDetail>;
}

declare global {
  interface HTMLElementTagNameMap {
    "ticket-seat-map": TicketSeatMapElement;
  }
  interface HTMLElementEventMap extends TicketSeatMapEventMap {}
}
