package command

// The service commands: running the simulated services, placing orders
// through one, and reading a service's database.

import (
	"strconv"
	"strings"
	"time"
)

// Service starts, restarts or stops one of the simulated services. A
// restart brings a crashed service back with its database as it was; only
// crash= may be given with it.
type Service struct {
	Action   string // "start", "restart" or "stop"
	Service  string // orders, payments, wallet or checkout
	Mode     string
	Strategy string
	Threads  int
	Receipt  time.Duration // checkout: how long one receipt call takes; 0: the service's default
	Writes   float64       // a write ceiling, writes per second; 0: none
	Crash    string
}

func (Service) Name() string { return "service" }
func (c Service) String() string {
	return words("service", c.Action, c.Service).
		optIf(c.Mode != "", "mode", c.Mode).
		optIf(c.Strategy != "", "strategy", c.Strategy).
		optIf(c.Threads != 0, "threads", strconv.Itoa(c.Threads)).
		optIf(c.Receipt != 0, "receipt", formatDuration(c.Receipt)).
		optIf(c.Writes != 0, "writes", formatRate(c.Writes)).
		optIf(c.Crash != "", "crash", c.Crash).String()
}

// serviceModes lists the modes and strategies each service accepts.
var serviceModes = map[string]map[string][]string{
	"orders":   {"mode": {"commit-then-publish", "publish-then-commit", "outbox"}},
	"checkout": {"mode": {"sync", "queued"}, "threads": nil, "receipt": nil},
	"wallet":   {"strategy": {"none", "dedupe-table", "dedupe-elsewhere", "conditional", "absolute"}},
	"payments": {},
}

func buildService(p *parser, _ *Spec) (Command, *posError) {
	action, err := p.oneOf("start, restart or stop", actions)
	if err != nil {
		return nil, err
	}
	svc, err := p.oneOf("a service", Services)
	if err != nil {
		return nil, err
	}
	o, err := p.options()
	if err != nil {
		return nil, err
	}
	for _, k := range []string{"mode", "strategy", "threads", "receipt", "writes"} {
		v, given := o[k]
		if !given {
			continue
		}
		if action == ActionStop {
			return nil, errAt(v.col, "service stop takes no options; got %s=", k)
		}
		if action == ActionRestart {
			return nil, errAt(v.col, "service restart takes only crash=; %s= was set when %s started (stop it and start it again to change it)", k, svc)
		}
		if k == "writes" {
			continue
		}
		allowed, ok := serviceModes[svc][k]
		if !ok {
			return nil, errAt(v.col, "%s= is not an option of %s", k, svc)
		}
		if s, isText := v.v.(string); isText && !contains(allowed, s) {
			return nil, errAt(v.col+len(k)+1, "%s=%s: %s takes %s", k, s, svc, orList(allowed)).withSuggest(nearest(s, allowed))
		}
	}
	if v, given := o["crash"]; given && action == ActionStop {
		return nil, errAt(v.col, "service stop takes no options; got crash=")
	}
	return Service{Action: action, Service: svc, Mode: o.str("mode"), Strategy: o.str("strategy"), Threads: o.int("threads", 0),
		Receipt: o.dur("receipt"), Writes: o.float("writes"), Crash: o.str("crash")}, nil
}

// Order places Count orders through the orders service, numbered from ID,
// and waits for what the service did with each.
type Order struct {
	ID      int64
	User    int64 // 0: the service's default
	Amount  int64 // 0: the service's default
	Item    string
	HasItem bool
	Count   int // at least 1
}

func (Order) Name() string { return "order" }
func (c Order) String() string {
	return words("order", strconv.FormatInt(c.ID, 10)).
		optIf(c.User != 0, "user", strconv.FormatInt(c.User, 10)).
		optIf(c.Amount != 0, "amount", strconv.FormatInt(c.Amount, 10)).
		optIf(c.HasItem, "item", quoteText(c.Item)).
		optIf(c.Count != DefaultCount, "count", strconv.Itoa(c.Count)).String()
}

func buildOrder(p *parser, _ *Spec) (Command, *posError) {
	t, err := p.arg("an order id")
	if err != nil {
		return nil, err
	}
	id, perr := strconv.ParseInt(t.text, 10, 64)
	if perr != nil || id < 1 || id > 1e12 || strconv.FormatInt(id, 10) != t.text {
		return nil, errAt(t.col, "%q is not an order id; write a whole number from 1 to 1000000000000, like 881", t.text)
	}
	o, err := p.options()
	if err != nil {
		return nil, err
	}
	c := Order{ID: id, User: int64(o.int("user", 0)), Amount: int64(o.int("amount", 0)), Count: o.int("count", DefaultCount)}
	c.Item, c.HasItem = o.text("item")
	return c, nil
}

// SQL runs a read-only query on a service's database.
type SQL struct {
	Service string
	Query   string
}

func (SQL) Name() string     { return "sql" }
func (c SQL) String() string { return "sql " + c.Service + " " + strconv.Quote(c.Query) }

func buildSQL(p *parser, _ *Spec) (Command, *posError) {
	svc, err := p.oneOf("a service", Services)
	if err != nil {
		return nil, err
	}
	t, err := p.arg(`a query in double quotes, like "SELECT * FROM outbox"`)
	if err != nil {
		return nil, err
	}
	if !t.quoted {
		return nil, errAt(t.col, `put the query in double quotes: sql %s "SELECT …"`, svc)
	}
	fields := strings.Fields(t.text)
	if len(fields) == 0 || !contains([]string{"SELECT", "WITH"}, strings.ToUpper(fields[0])) {
		return nil, errAt(t.col, "sql runs read-only queries: start it with SELECT or WITH")
	}
	return SQL{Service: svc, Query: t.text}, p.done()
}
