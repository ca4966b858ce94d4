//go:build ignore

// A consumer that must fail: it marks an order charged and charges it in
// two writes, each committed alone, with the order's work between them. A
// redelivered order finds its mark and charges nothing, which holds until
// a kill lands between the two writes: then the order is marked and never
// charged.
//
//	mqlab challenge effect-once -- go run lessons/challenge/effect-once/testdata/bad_two_writes.go
package main

import (
	"context"
	"database/sql"
	"fmt"
	"log"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	_ "modernc.org/sqlite"
)

func main() {
	work := millis("MQLAB_WORK_MS")
	db, err := sql.Open("sqlite", "file:"+os.Getenv("MQLAB_DB")+"?_pragma=busy_timeout(5000)")
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE TABLE IF NOT EXISTS processed (order_key TEXT PRIMARY KEY)`); err != nil {
		log.Fatal(err)
	}
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
			first, err := mark(db, string(r.Key))
			if err != nil {
				log.Fatalf("mark %s: %v", r.Key, err) // not committed: it comes again
			}
			time.Sleep(work)
			if first {
				if _, err := db.Exec(`INSERT INTO charges (order_key, amount) VALUES (?, 450)`, string(r.Key)); err != nil {
					log.Fatalf("charge %s: %v", r.Key, err)
				}
			}
			fmt.Printf("processed %s\n", r.Key)
			if err := cl.CommitRecords(ctx, r); err != nil {
				log.Printf("commit %s: %v", r.Key, err)
			}
		})
	}
}

// mark records that the order is charged, and says whether it was not
// before: a write of its own, committed before the charge.
func mark(db *sql.DB, key string) (bool, error) {
	res, err := db.Exec(`INSERT OR IGNORE INTO processed (order_key) VALUES (?)`, key)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

func millis(name string) time.Duration {
	n, err := strconv.Atoi(os.Getenv(name))
	if err != nil {
		log.Fatalf("%s: %v", name, err)
	}
	return time.Duration(n) * time.Millisecond
}
