//go:build ignore

// A consumer that tries an order three times, then parks it in the
// dead-letter topic, waits for the topic to have it, and only then commits
// past it: a kill in between parks it twice, never loses it.
//
//	mqlab challenge poison -- go run lessons/challenge/poison/testdata/good.go
package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

func main() {
	work := millis("MQLAB_WORK_MS")
	cl, err := kgo.NewClient(
		kgo.SeedBrokers(strings.Split(os.Getenv("MQLAB_BOOTSTRAP"), ",")...),
		kgo.ClientID(os.Getenv("MQLAB_CLIENT_ID")),
		kgo.ConsumerGroup(os.Getenv("MQLAB_GROUP")),
		kgo.ConsumeTopics(os.Getenv("MQLAB_TOPIC")),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.DisableAutoCommit(),
		kgo.SessionTimeout(millis("MQLAB_SESSION_MS")),
		kgo.HeartbeatInterval(millis("MQLAB_SESSION_MS")/10),
	)
	if err != nil {
		log.Fatal(err)
	}
	defer cl.Close()
	ctx := context.Background()
	for {
		fetches := cl.PollFetches(ctx)
		fetches.EachError(func(topic string, p int32, err error) { log.Printf("fetch %s/%d: %v", topic, p, err) })
		fetches.EachRecord(func(r *kgo.Record) {
			var err error
			for try := 1; try <= tries; try++ {
				if err = bill(string(r.Value), work); err == nil {
					break
				}
				log.Printf("%s, try %d of %d: %v", r.Key, try, tries, err)
				fmt.Printf("failed %s\n", r.Key)
			}
			if err != nil {
				park(ctx, cl, r, err)
			} else {
				fmt.Printf("processed %s\n", r.Key)
			}
			if err := cl.CommitRecords(ctx, r); err != nil {
				log.Printf("commit %s: %v", r.Key, err)
			}
		})
	}
}

// tries is how many times an order is tried before it is parked.
const tries = 3

// park copies the record, and why it failed, to the dead-letter topic, and
// returns once the topic has it; until then the record must not be
// committed past.
func park(ctx context.Context, cl *kgo.Client, r *kgo.Record, why error) {
	dead := &kgo.Record{
		Topic:   os.Getenv("MQLAB_DEAD_LETTERS"),
		Key:     r.Key,
		Value:   r.Value,
		Headers: []kgo.RecordHeader{{Key: "error", Value: []byte(why.Error())}},
	}
	for {
		if err := cl.ProduceSync(ctx, dead).FirstErr(); err != nil {
			log.Printf("parking %s: %v; trying again", r.Key, err)
			time.Sleep(100 * time.Millisecond)
			continue
		}
		log.Printf("parked %s in %s", r.Key, dead.Topic)
		return
	}
}

// bill does an order's work: it reads the amount and charges it.
func bill(value string, work time.Duration) error {
	time.Sleep(work)
	_, field, _ := strings.Cut(value, "amount=")
	if _, err := strconv.Atoi(field); err != nil {
		return fmt.Errorf("the amount %q is not a number", field)
	}
	return nil
}

func millis(name string) time.Duration {
	n, err := strconv.Atoi(os.Getenv(name))
	if err != nil {
		log.Fatalf("%s: %v", name, err)
	}
	return time.Duration(n) * time.Millisecond
}
