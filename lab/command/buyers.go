package command

import (
	"strconv"
	"time"
)

// Buyers sends buyers through the checkout service in the background:
// Rate arrivals per second of lab time for For, each paying Amount.
type Buyers struct {
	Rate   float64
	For    time.Duration
	Amount int64 // 0: the checkout's default (₹450)
}

func (Buyers) Name() string { return "buyers" }
func (c Buyers) String() string {
	return words("buyers").opt("rate", formatRate(c.Rate)).opt("for", formatDuration(c.For)).
		optIf(c.Amount != 0, "amount", strconv.FormatInt(c.Amount, 10)).String()
}

// BuyersStop stops the buyers still to arrive; those at the checkout get
// their answers.
type BuyersStop struct{}

func (BuyersStop) Name() string   { return "buyers stop" }
func (BuyersStop) String() string { return "buyers stop" }

func buildBuyersStop(p *parser, _ *Spec) (Command, *posError) { return BuyersStop{}, p.done() }

// MaxBuyers bounds one buyers command: each buyer is a request in flight.
const MaxBuyers = 20000

func buildBuyers(p *parser, _ *Spec) (Command, *posError) {
	o, err := p.options()
	if err != nil {
		return nil, err
	}
	c := Buyers{Rate: o.float("rate"), For: o.dur("for"), Amount: int64(o.int("amount", 0))}
	if n := c.Rate * c.For.Seconds(); n > MaxBuyers {
		return nil, errAt(o["rate"].col, "rate=%s for=%s makes %.0f buyers; at most %d fit in one command", formatRate(c.Rate), formatDuration(c.For), n, MaxBuyers)
	} else if n < 0.5 {
		return nil, errAt(o["for"].col, "rate=%s for=%s makes no buyer; raise the rate or the time", formatRate(c.Rate), formatDuration(c.For))
	}
	return c, nil
}

// serviceValues are the lab values one service measures, each read as
// FUNC(SERVICE): p99(checkout).
var serviceValues = map[string]string{
	"p50": "checkout", "p99": "checkout", "arrived": "checkout", "answered": "checkout", "served": "checkout",
	"errors": "checkout", "no_thread": "checkout", "charged_but_failed": "checkout", "busy": "checkout", "waiting": "checkout",
	"threads": "checkout",
}

// ServiceOf names the service a lab value function measures ("checkout"
// for p99), or "".
func ServiceOf(fn string) string { return serviceValues[fn] }
