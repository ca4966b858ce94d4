package command

// The consumer-group commands: a consumer's life, its group's position on
// a partition, and a pause of its process.

import "time"

// Consumer starts, restarts or stops a consumer (a member of a group
// reading a topic).
type Consumer struct {
	Action  string
	Client  string
	Group   string
	Topic   string
	From    string // "earliest", "latest" or "" (earliest)
	Session time.Duration
	Commit  string // "each", "poll" or "" (each)
	// RetryTopic takes the records the client gives up on: it produces
	// each there, same key and message id, before committing past it.
	RetryTopic string
	Options    ClientOptions
}

func (Consumer) Name() string { return "consumer" }
func (c Consumer) String() string {
	p := words("consumer", c.Action, c.Client).
		optIf(c.Group != "", "group", c.Group).
		optIf(c.Topic != "", "topic", c.Topic).
		optIf(c.From != "", "from", c.From).
		optIf(c.Session != 0, "session", formatDuration(c.Session)).
		optIf(c.Commit != "", "commit", c.Commit).
		optIf(c.RetryTopic != "", "retry-topic", c.RetryTopic)
	return c.Options.print(p).String()
}

func buildConsumer(p *parser, _ *Spec) (Command, *posError) {
	action, client, o, err := clientAction(p, "group", "topic")
	if err != nil {
		return nil, err
	}
	c := Consumer{Action: action, Client: client, Group: o.str("group"), Topic: o.str("topic"), From: o.str("from"),
		Session: o.dur("session"), Commit: o.str("commit"), RetryTopic: o.str("retry-topic"), Options: clientOpts(o)}
	if c.RetryTopic != "" && c.RetryTopic == c.Topic {
		return nil, errAt(o["retry-topic"].col, "retry-topic=%s is the topic the consumer reads; a record it gives up on must go to another topic, e.g. retry-topic=%s-retry", c.RetryTopic, c.Topic)
	}
	return c, nil
}

// Seek moves a group's position on one partition.
type Seek struct {
	Group     string
	Partition TopicPartition
	To        SeekTo
}

func (Seek) Name() string { return "seek" }
func (c Seek) String() string {
	return words("seek", c.Group, c.Partition.String()).opt("to", c.To.String()).String()
}

func buildSeek(p *parser, _ *Spec) (Command, *posError) {
	group, err := p.name("a group")
	if err != nil {
		return nil, err
	}
	t, err := p.arg("a partition (TOPIC/N)")
	if err != nil {
		return nil, err
	}
	tg, terr := parseTarget(t.text)
	if terr != nil || !tg.IsPartition {
		return nil, errAt(t.col, "%q is not a partition; write TOPIC/N, e.g. orders/0", t.text)
	}
	o, err := p.options()
	if err != nil {
		return nil, err
	}
	to, _ := o["to"].v.(SeekTo)
	return Seek{Group: group, Partition: TopicPartition{tg.Name, tg.Partition}, To: to}, nil
}

// Stall freezes a consumer client for a stretch of lab time, as a long
// garbage-collection pause of its process does: it sends no heartbeat,
// polls nothing and works on nothing, and then goes on where it was. Its
// group drops it if the stall outlasts its session timeout.
type Stall struct {
	Client string
	For    time.Duration
}

func (Stall) Name() string { return "stall" }
func (c Stall) String() string {
	return words("stall", c.Client).opt("for", formatDuration(c.For)).String()
}

// maxStall bounds a stall: past a few minutes it is a crash, which
// crash= plays.
const maxStall = 5 * time.Minute

func buildStall(p *parser, _ *Spec) (Command, *posError) {
	client, o, err := p.nameThenOptions("the consumer to stall")
	if err != nil {
		return nil, err
	}
	if d := o.dur("for"); d > maxStall {
		return nil, errAt(o["for"].col, "for=%s is longer than a stall can be; write up to %s, or crash the consumer (crash=before-work) to stop it for good", formatDuration(d), formatDuration(maxStall))
	}
	return Stall{Client: client, For: o.dur("for")}, nil
}
