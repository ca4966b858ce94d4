package command

// What consumers and workers share: start, restart and stop (which a
// service takes too), and the options that shape their work.

import (
	"strconv"
	"strings"
	"time"
)

// Client actions: what consumer, worker and service do with the one they
// name.
const (
	ActionStart   = "start"
	ActionRestart = "restart"
	ActionStop    = "stop"
)

var actions = []string{ActionStart, ActionRestart, ActionStop}

// clientAction reads start|restart|stop CLIENT and the options; stop takes
// none, and start needs the ones in required.
func clientAction(p *parser, required ...string) (string, string, opts, *posError) {
	action, err := p.oneOf("start, restart or stop", actions)
	if err != nil {
		return "", "", nil, err
	}
	client, err := p.name("a client name")
	if err != nil {
		return "", "", nil, err
	}
	o, err := p.options()
	if err != nil {
		return "", "", nil, err
	}
	if action == ActionStop {
		for k, v := range o {
			return "", "", nil, errAt(v.col, "%s stop takes no options; got %s=", p.spec.Name, k)
		}
	}
	if action == ActionStart {
		for _, k := range required {
			if !o.has(k) {
				return "", "", nil, errAt(p.end, "%s start needs %s=%s; %s", p.spec.Name, k, strings.ToUpper(k), p.usageHint())
			}
		}
	}
	return action, client, o, checkClientOpts(o)
}

// ClientOptions are the behaviours consumers and workers share.
type ClientOptions struct {
	Rate        float64 // messages per second of processing; 0: as fast as it can
	Ack         string  // "before", "after", or "" (after)
	Crash       string  // "before-work", "after-work" or ""
	Fail        Failure
	Retry       string // "none", "immediate", "backoff" or ""
	Base        time.Duration
	Cap         time.Duration
	Jitter      string // "full", "equal", "none" or ""
	MaxAttempts int
	Service     string        // a service that takes deliveries (HandlerServices), or ""
	Work        time.Duration // lab time the work on one message takes; 0: none
}

func (o ClientOptions) print(p *printer) *printer {
	return p.optIf(o.Rate != 0, "rate", formatRate(o.Rate)).
		optIf(o.Ack != "", "ack", o.Ack).
		optIf(o.Crash != "", "crash", o.Crash).
		optIf(o.Fail != Failure{}, "fail", quoteText(o.Fail.String())).
		optIf(o.Retry != "", "retry", o.Retry).
		optIf(o.Base != 0, "base", formatDuration(o.Base)).
		optIf(o.Cap != 0, "cap", formatDuration(o.Cap)).
		optIf(o.Jitter != "", "jitter", o.Jitter).
		optIf(o.MaxAttempts != 0, "max-attempts", strconv.Itoa(o.MaxAttempts)).
		optIf(o.Service != "", "service", o.Service).
		optIf(o.Work != 0, "work", formatDuration(o.Work))
}

// clientOpts reads the client options from a line's options.
func clientOpts(o opts) ClientOptions {
	f, _ := o["fail"].v.(Failure)
	return ClientOptions{Rate: o.float("rate"), Ack: o.str("ack"), Crash: o.str("crash"), Fail: f, Retry: o.str("retry"),
		Base: o.dur("base"), Cap: o.dur("cap"), Jitter: o.str("jitter"), MaxAttempts: o.int("max-attempts", 0), Service: o.str("service"),
		Work: o.dur("work")}
}

// checkClientOpts rejects options that only make sense with others.
func checkClientOpts(o opts) *posError {
	for _, k := range []string{"base", "cap", "jitter"} {
		if o.has(k) && o.str("retry") != "backoff" {
			return errAt(o[k].col, "%s= shapes the backoff between retries; it needs retry=backoff", k)
		}
	}
	if o.has("base") && o.has("cap") && o.dur("cap") < o.dur("base") {
		return errAt(o["cap"].col, "cap=%s is below base=%s; the longest backoff cannot be shorter than the first", formatDuration(o.dur("cap")), formatDuration(o.dur("base")))
	}
	return nil
}
